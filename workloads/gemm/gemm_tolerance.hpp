#pragma once
// The correctness verdict of a GEMM output: every checked element against an error bound derived
// from K and the arithmetic of the path that computed it. One home for the CPU and CUDA backends;
// header-only, so the CUDA backend uses it without a link dependency on the CPU one.
//
// The reference is a double-precision dot product over exactly the operand values the kernel read
// (bf16, fp16, fp8 or block-scaled values dequantised), so the only legitimate differences are
// rounding errors of the kernel's arithmetic. A flat tolerance on |c - ref| / sum_k |a b| cannot
// tell those from a wrong result at large K: with inputs uniform in [-1, 1) an unrelated output
// scores about 1.5 / sqrt(K) on that measure (4e-3 at K = 128,256, inside a 2e-2 tolerance), and a
// kernel that drops 1/8 of K scores about 0.5 / sqrt(K).
//
// The bound, per output element c with products p_k = a_ik b_kj and ref = sum_k p_k:
//
//   |c - ref| <= S * (  lambda * sqrt(K) * u_acc * sum_k |p_k|                  (1) accumulation
//                     + lambda * sqrt(B) * u_blk * sqrt(sum_b (sum_{k in b} |p_k|)^2)  (2) inner
//                     sums
//                     + lambda * u_in * sqrt(sum_k p_k^2) + u_in * |ref|          (3) input
//                     rounding
//                     + u_out * |ref| )                                          (4) output
//                     rounding
//
// (1) is the probabilistic inner-product bound of Higham & Mary, "A New Approach to Probabilistic
//     Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), A2815-A2835, 2019 (Theorem 2.4 applied
//     to inner products, section 3): gamma~_K(lambda) = lambda sqrt(K) u + O(u^2), assuming
//     independent mean-zero rounding errors. Their guarantee, probability at least
//     1 - 2K exp(-lambda^2 / 2), is loose; for random-sign data the true error grows with
//     sqrt(sum p^2) ~ sum|p| / sqrt(K), so at lambda = 6 the margin is far larger than S. Any
//     summation order (blocked, split-K, pairwise) satisfies the same bound.
// (2) reduced-precision partial sums inside the tensor core before they reach the fp32
//     accumulator (FP8 on Hopper, see cuda_error_model): the same bound per block of B products
//     at unit roundoff u_blk; blocks' errors are independent and mean-zero, so they add in
//     quadrature (Hoeffding) rather than linearly.
// (3) input rounding the reference does not see (tf32: the device rounds the fp32 operands the
//     reference reads): each product off by at most u_in relative, a random part bounded as in (1)
//     by lambda u_in sqrt(sum p^2) (Hoeffding) and at most u_in |ref| of bias should the hardware
//     truncate rather than round.
// (4) the final rounding of c to the output type.
// lambda = 6 (per rounding, 2 exp(-18) = 3e-8), safety factor S = 2.
//
// The check reports the worst |c - ref| / bound (VALID when <= 1) and, for comparison with other
// tools, the worst normalised error |c - ref| / sum_k |p_k|.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/model.hpp"

#include "harness/core/dtype.hpp"
#include "harness/core/error.hpp"

namespace accelbench::gemm {

inline constexpr double k_bound_lambda = 6.0;
inline constexpr double k_bound_safety = 2.0;

// Unit roundoffs of one path's arithmetic (the u's of the bound above).
struct gemm_error_model {
  std::string name;       // what the u's describe, e.g. "fp32 accumulation (RN), fp32 output"
  double u_acc = 0x1p-24; // (1) the accumulator
  int64_t block = 0;      // (2) products per reduced-precision partial sum; 0: none
  double u_blk = 0;
  double u_in = 0;        // (3) per product, relative
  double u_out = 0x1p-24; // (4) output type

  nlohmann::json to_json() const {
    nlohmann::json j = {
        {"model", name},       {"u_acc", u_acc},           {"u_in", u_in},
        {"u_out", u_out},      {"lambda", k_bound_lambda}, {"safety", k_bound_safety},
        {"formula", formula()}};
    if (block > 0) {
      j["block"] = block;
      j["u_blk"] = u_blk;
    }
    return j;
  }
  std::string formula() const {
    std::string f = "S*(lambda*sqrt(K)*u_acc*sum|ab|";
    if (block > 0)
      f += " + lambda*sqrt(block)*u_blk*sqrt(sum_blocks (sum|ab|)^2)";
    if (u_in > 0)
      f += " + lambda*u_in*sqrt(sum (ab)^2) + u_in*|ref|";
    return f + " + u_out*|ref|), S = 2, lambda = 6 (Higham & Mary 2019)";
  }
};

// The CPU backends: oneDNN and OpenBLAS multiply fp32 or bf16 inputs (a product of two bf16 values
// is exact in fp32) with fp32 FMAs rounding to nearest, and write fp32.
inline gemm_error_model cpu_error_model(dtype type) {
  if (type != dtype::fp32 && type != dtype::bf16)
    throw input_error(
        fmt::format("no GEMM error model for dtype {} on the cpu backend", dtype_name(type)));
  return {to_string(type) + " inputs, fp32 accumulation (round to nearest), fp32 output",
          0x1p-24,
          0,
          0,
          0,
          0x1p-24};
}

// The CUDA backend (cuBLASLt, CUBLAS_COMPUTE_32F or _32F_FAST_TF32, fp32 scale type):
//  - fp32: FMAs on the CUDA cores, rounding to nearest: u_acc = 2^-24.
//  - tf32, fp16, bf16: tensor cores. Products are exact; their fp32 accumulation aligns and
//    truncates instead of rounding (Fasi, Higham, Mikaitis, Pranesh, "Numerical behavior of NVIDIA
//    tensor cores", PeerJ Comput. Sci. 7:e330, 2021): u_acc = 2^-23. tf32 also rounds each fp32
//    operand to 10 mantissa bits, which the reference (reading fp32) does not see: 2^-11 per
//    operand when rounding to nearest, 2^-10 when truncating (cuBLASLt documents neither), so
//    u_in = 2^-9 per product covers both.
//  - fp8_e4m3, fp8_e5m2, mxfp8, nvfp4: tensor-core partial sums keep about 13-14 mantissa bits
//    (DeepSeek-V3 technical report, arXiv:2412.19437, section 3.3.2: "around 14 bits" on H800).
//    With fast accumulation off (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0, the default, set explicitly
//    by the backend) cuBLASLt "periodically promotes intermediate results to a higher precision"
//    (cuBLAS documentation of that attribute); the period is not documented, DeepSeek-V3 and
//    CUTLASS promote every 128 products. Modelled as blocks of 128 products at u_blk = 2^-13
//    (truncation to 13 bits) on top of the truncating fp32 accumulation; a longer period makes
//    the true error grow with sqrt(period), which the bound's margin (more than 10x) absorbs.
//    Output bf16: u_out = 2^-8 (+ 2^-23 for the fp32 multiply by the fp8 per-tensor scales). The
//    per-tensor fp8 scale is not a power of two, so the reference's dequantised operand (decoded
//    value times scale, rounded to fp32) is off by up to 2^-24 per operand: u_in = 2^-23. Block
//    scales (ue8m0, ue4m3 times e2m1) dequantise exactly.
inline gemm_error_model cuda_error_model(dtype type) {
  constexpr double tc_acc = 0x1p-23;
  const std::string name = to_string(type);
  if (type == dtype::fp32)
    return {"fp32 inputs, fp32 FMA accumulation (round to nearest), fp32 output",
            0x1p-24,
            0,
            0,
            0,
            0x1p-24};
  if (type == dtype::tf32)
    return {
        "fp32 inputs rounded to tf32 by the device, tensor-core fp32 accumulation (truncating), "
        "fp32 output",
        tc_acc,
        0,
        0,
        0x1p-9,
        0x1p-24};
  if (type == dtype::fp16 || type == dtype::bf16)
    return {name + " inputs, tensor-core fp32 accumulation (truncating), fp32 output",
            tc_acc,
            0,
            0,
            0,
            0x1p-24};
  if (is_fp8(type))
    return {name + " inputs with per-tensor scales, tensor-core partial sums of 128 products at "
                   "13 bits, fp32 accumulation (truncating), bf16 output",
            tc_acc,
            128,
            0x1p-13,
            0x1p-23,
            0x1p-8 + 0x1p-23};
  if (is_block_scaled(type))
    return {name + " block-scaled inputs, tensor-core partial sums of 128 products at 13 bits, "
                   "fp32 accumulation (truncating), bf16 output",
            tc_acc,
            128,
            0x1p-13,
            0,
            0x1p-8};
  throw input_error(fmt::format("no GEMM error model for dtype {} on the cuda backend", name));
}

// The CUDA model for C written as `out` (the out_dtype axis): the final rounding is the output
// type's, 2^-24 (fp32), 2^-8 (bf16) or 2^-11 (fp16), plus 2^-23 for the fp32 multiply by the fp8
// per-tensor scales.
inline gemm_error_model cuda_error_model(dtype type, dtype out) {
  gemm_error_model m = cuda_error_model(type);
  const double u = out == dtype::bf16 ? 0x1p-8 : out == dtype::fp16 ? 0x1p-11 : 0x1p-24;
  m.u_out = u + (is_fp8(type) ? 0x1p-23 : 0);
  const auto comma = m.name.rfind(", ");
  m.name = m.name.substr(0, comma) + ", " + to_string(out) + " output";
  return m;
}

// What the reference accumulates for one output element (in double, in K order).
struct product_sums {
  double ref = 0, sum_abs = 0, sum_sq = 0;
  double block_sq = 0; // sum over blocks of (sum |p| in the block)^2
};

// `product(kk)` returns a_ik * b_kj in double.
template <class Product>
product_sums reference_sums(int64_t k, int64_t block, const Product& product) {
  product_sums s;
  double in_block = 0;
  for (int64_t kk = 0; kk < k; ++kk) {
    const double p = product(kk);
    s.ref += p;
    s.sum_abs += std::fabs(p);
    s.sum_sq += p * p;
    if (block > 0) {
      in_block += std::fabs(p);
      if ((kk + 1) % block == 0 || kk + 1 == k) {
        s.block_sq += in_block * in_block;
        in_block = 0;
      }
    }
  }
  return s;
}

// The bound of the header comment for one element.
inline double error_bound(const gemm_error_model& m, int64_t k, const product_sums& s) {
  const double lambda = k_bound_lambda, ref = std::fabs(s.ref);
  double b = lambda * std::sqrt(double(k)) * m.u_acc * s.sum_abs;
  if (m.block > 0)
    b += lambda * std::sqrt(double(std::min(m.block, k))) * m.u_blk * std::sqrt(s.block_sq);
  b += m.u_in * (lambda * std::sqrt(s.sum_sq) + ref);
  b += m.u_out * ref;
  return k_bound_safety * b;
}

// Outcome of a check over sampled output elements.
struct gemm_check {
  gemm_error_model model;
  int64_t k = 0;
  int64_t points = 0;
  double max_ratio = 0;             // worst |c - ref| / bound; VALID when <= 1
  double max_normalised = 0;        // worst |c - ref| / sum_k |p_k| (any element)
  int64_t worst_i = 0, worst_j = 0; // the element of max_ratio
  double worst_value = 0, worst_ref = 0, worst_bound = 0;

  bool ok() const { return max_ratio <= 1.0; }
  // "error 3.2x the error bound at C[12,40] (got 1.5, reference 1.49, |error| 1.1e-02 > bound
  //  3.4e-03 = S*(...)); max normalised error |c - ref| / sum|ab| 1.1e-03 (256 points,
  //  K = 128256, <model name>)"
  std::string reason() const {
    return fmt::format(
        "error {:.3g}x the error bound at C[{},{}] (got {:.7g}, reference {:.7g}, |error| {:.3e} "
        "{} "
        "bound {:.3e} = {}); max normalised error |c - ref| / sum|ab| {:.3e} ({} points, K = {}, "
        "{})",
        max_ratio, worst_i, worst_j, worst_value, worst_ref, std::fabs(worst_value - worst_ref),
        ok() ? "<=" : ">", worst_bound, model.formula(), max_normalised, points, k, model.name);
  }
  nlohmann::json to_json() const {
    auto finite = [](double x) {
      return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json("inf");
    };
    return {{"ok", ok()},
            {"points", points},
            {"max_bound_ratio", finite(max_ratio)},
            {"max_normalised_error", finite(max_normalised)},
            {"error_measure",
             "|c - ref| / bound per element (VALID when <= 1); also |c - ref| / sum_k |a_ik b_kj|; "
             "double reference over the operand values the kernel read"},
            {"bound", model.to_json()},
            {"worst",
             {{"i", worst_i},
              {"j", worst_j},
              {"value", finite(worst_value)},
              {"reference", worst_ref},
              {"bound", worst_bound}}}};
  }
};

// The elements checked: all of them when there are at most `points`, else the four corners and
// seeded random ones.
inline std::vector<std::pair<int64_t, int64_t>> check_points(int64_t m, int64_t n, int64_t points,
                                                             uint64_t seed) {
  std::vector<std::pair<int64_t, int64_t>> where;
  if (m * n <= points) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        where.emplace_back(i, j);
    return where;
  }
  where = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
  std::mt19937_64 g(seed ^ 0x5eedc0ffeeULL);
  while (int64_t(where.size()) < points)
    where.emplace_back(int64_t(g() % uint64_t(m)), int64_t(g() % uint64_t(n)));
  return where;
}

// Checks the output of an M x N x K GEMM: a_at(i, kk), b_at(kk, j) return op(A), op(B) as the
// kernel read them; c_at(i, j) the kernel's output.
template <class A, class B, class C>
gemm_check check_gemm_output(int64_t m, int64_t n, int64_t k, const A& a_at, const B& b_at,
                             const C& c_at, const gemm_error_model& model, int64_t points,
                             uint64_t seed) {
  gemm_check r;
  r.model = model;
  r.k = k;
  bool first = true;
  for (const auto& point : check_points(m, n, points, seed)) {
    // Plain variables, not a structured binding: clang 14 (the sanitizer build) cannot capture
    // a binding in the lambda below.
    const int64_t i = point.first, j = point.second;
    const product_sums s = reference_sums(
        k, model.block, [&](int64_t kk) { return double(a_at(i, kk)) * double(b_at(kk, j)); });
    const double got = double(c_at(i, j));
    const double bound = error_bound(model, k, s);
    const double err = std::fabs(got - s.ref);
    const double inf = std::numeric_limits<double>::infinity();
    double ratio, normalised;
    if (!std::isfinite(got)) {
      ratio = normalised = inf;
    } else {
      ratio = err == 0 ? 0.0 : (bound > 0 ? err / bound : inf);
      normalised = err == 0 ? 0.0 : (s.sum_abs > 0 ? err / s.sum_abs : inf);
    }
    if (first || ratio > r.max_ratio) {
      r.max_ratio = ratio;
      r.worst_i = i, r.worst_j = j;
      r.worst_value = got, r.worst_ref = s.ref, r.worst_bound = bound;
      first = false;
    }
    r.max_normalised = std::max(r.max_normalised, normalised);
    ++r.points;
  }
  return r;
}

// What the stored run says about the ruleset's correctness.tolerance, which GEMM does not use.
inline constexpr const char* k_ruleset_tolerance_note =
    "the ruleset's correctness.tolerance is not used for GEMM: the verdict is the per-element "
    "error bound from K and the path's arithmetic (workloads/gemm/gemm_tolerance.hpp)";

// The check's verdict on the run, the same on every backend: extra.correctness (with the note
// above), INVALID naming the worst element when the check failed.
inline void record_check(run& out, const gemm_check& chk) {
  out.extra["correctness"] = chk.to_json();
  out.extra["correctness"]["ruleset_tolerance"] = k_ruleset_tolerance_note;
  if (!chk.ok())
    out.mark_invalid("correctness: " + chk.reason());
}

} // namespace accelbench::gemm
