// The fused attention kernels against the double reference, through the checker; and the checker
// itself against deliberately wrong outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness/core/error.hpp"
#include "kernels/attention/cpu/flash_attention.hpp"
#include "tests/support/skip.hpp"
#include "workloads/attention/attention_check.hpp"
#include "workloads/attention/attention_reference.hpp"

using namespace accelbench::attention;

namespace {

struct tensors {
  std::vector<float> q, k, v, o, lse, d_o, dq, dk, dv;
};

std::vector<float> randn(size_t n, unsigned seed) {
  std::mt19937 g(seed);
  std::normal_distribution<float> d;
  std::vector<float> v(n);
  for (float& x : v)
    x = d(g);
  return v;
}

tensors make(const attention_shape& s, unsigned seed = 1) {
  const size_t nq = size_t(s.batch * s.seq_q * s.heads * s.head_dim);
  const size_t nk = size_t(s.batch * s.seq_k * s.kv_heads * s.head_dim);
  tensors t;
  t.q = randn(nq, seed);
  t.k = randn(nk, seed + 1);
  t.v = randn(nk, seed + 2);
  t.d_o = randn(nq, seed + 3);
  t.o.assign(nq, 0.f);
  t.dq.assign(nq, 0.f);
  t.dk.assign(nk, 0.f);
  t.dv.assign(nk, 0.f);
  t.lse.assign(size_t(s.batch * s.heads * s.seq_q), 0.f);
  return t;
}

void run_fast(const attention_shape& s, tensors& t) {
  flash_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data());
  flash_backward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.d_o.data(), t.lse.data(),
                 t.dq.data(), t.dk.data(), t.dv.data());
}

check_result check_all(const attention_shape& s, const tensors& t, const check_options& opt) {
  check_result r =
      check_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data(), opt);
  r.merge(check_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(), t.dq.data(),
                         t.dk.data(), t.dv.data(), opt));
  return r;
}

// Restores the automatically chosen ISA after a section that forces one.
struct isa_guard {
  std::string saved = kernel_isa();
  ~isa_guard() { set_kernel_isa(saved); }
};

} // namespace

TEST_CASE("fused kernels match the reference on every ISA variant", "[attention][kernel]") {
  isa_guard guard;
  // Odd sizes on purpose: none of seq 77 / 131 / 45 / 200 is a multiple of the 64-row tiles,
  // head_dim 40 / 72 / 8 not a multiple of the 16-float vectors.
  const std::vector<attention_shape> shapes = {
      attention_shape_of(2, 4, 2, 77, 77, 40, false), // GQA, self-attention
      attention_shape_of(2, 4, 2, 77, 77, 40, true),  // ... causal
      attention_shape_of(1, 3, 1, 45, 131, 72, true), // MQA, seq_q < seq_k, causal bottom-right
      attention_shape_of(1, 2, 2, 131, 45, 8,
                         true), // seq_q > seq_k causal: first 86 rows see nothing
      attention_shape_of(1, 2, 1, 200, 70, 64, false), // seq_q > seq_k, not causal
      attention_shape_of(1, 1, 1, 1, 1, 1, false),     // degenerate
  };
  check_options opt;
  opt.tolerance = 1e-4; // kernel-v1 fp32
  for (const std::string& isa : available_isas()) {
    set_kernel_isa(isa);
    for (const attention_shape& s : shapes) {
      INFO("isa " << isa << " b" << s.batch << " h" << s.heads << "/" << s.kv_heads << " sq"
                  << s.seq_q << " sk" << s.seq_k << " d" << s.head_dim << " causal " << s.causal);
      tensors t = make(s);
      run_fast(s, t);
      const check_result r = check_all(s, t, opt);
      INFO(r.reason());
      CHECK_FALSE(r.sampled);
      CHECK(r.points > 0);
      CHECK(r.ok());
      CHECK(r.max_error < 1e-5); // fp32 kernel vs double: far inside the ruleset's bound
    }
  }
}

TEST_CASE("rows with no visible key give o = 0, lse = +inf and zero gradients", "[attention]") {
  const attention_shape s = attention_shape_of(1, 1, 1, 100, 30, 16, true); // rows 0..69 see no key
  tensors t = make(s);
  run_fast(s, t);
  for (int64_t i = 0; i < 70; ++i) {
    CHECK(std::isinf(t.lse[size_t(i)]));
    CHECK(t.lse[size_t(i)] > 0);
    for (int64_t d = 0; d < 16; ++d) {
      CHECK(t.o[size_t(i * 16 + d)] == 0.f);
      CHECK(t.dq[size_t(i * 16 + d)] == 0.f);
    }
  }
  CHECK(std::isfinite(t.lse[70]));
  // Row 70 sees exactly key 0: softmax of one score is 1, so o = v[0] and lse = its score.
  for (int64_t d = 0; d < 16; ++d)
    CHECK(t.o[size_t(70 * 16 + d)] == Approx(t.v[size_t(d)]).epsilon(1e-5));
}

TEST_CASE("a custom softmax scale is honoured", "[attention]") {
  attention_shape s = attention_shape_of(1, 2, 2, 33, 50, 24, false);
  s.scale = 0.7f;
  tensors t = make(s, 5);
  run_fast(s, t);
  check_options opt;
  opt.tolerance = 1e-4;
  CHECK(check_all(s, t, opt).ok());
  // ... and differs from the default scale's result (the check would catch a kernel ignoring it).
  attention_shape d = s;
  d.scale = 0;
  CHECK_FALSE(
      check_forward(d, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data(), opt).ok());
}

namespace {

// Restores the automatically chosen bf16 path after a section that forces one.
struct bf16_path_guard {
  ~bf16_path_guard() { set_bf16_path("auto"); }
};

// Runs the bf16 kernels forward and backward on t's inputs rounded to bf16, then widens into t
// exactly what the kernels read and wrote (the reference sees the very bf16 inputs).
void run_bf16(const attention_shape& s, tensors& t) {
  const size_t nq = t.q.size(), nk = t.k.size();
  std::vector<bf16> q(nq), k(nk), v(nk), d_o(nq), o(nq), dq(nq), dk(nk), dv(nk);
  to_bf16(t.q.data(), q.data(), int64_t(nq));
  to_bf16(t.k.data(), k.data(), int64_t(nk));
  to_bf16(t.v.data(), v.data(), int64_t(nk));
  to_bf16(t.d_o.data(), d_o.data(), int64_t(nq));
  flash_forward_bf16(s, q.data(), k.data(), v.data(), o.data(), t.lse.data());
  flash_backward_bf16(s, q.data(), k.data(), v.data(), o.data(), d_o.data(), t.lse.data(),
                      dq.data(), dk.data(), dv.data());
  to_float(q.data(), t.q.data(), int64_t(nq));
  to_float(k.data(), t.k.data(), int64_t(nk));
  to_float(v.data(), t.v.data(), int64_t(nk));
  to_float(d_o.data(), t.d_o.data(), int64_t(nq));
  to_float(o.data(), t.o.data(), int64_t(nq));
  to_float(dq.data(), t.dq.data(), int64_t(nq));
  to_float(dk.data(), t.dk.data(), int64_t(nk));
  to_float(dv.data(), t.dv.data(), int64_t(nk));
}

} // namespace

TEST_CASE("bf16 attention stays within the bf16 tolerance on every bf16 path",
          "[attention][bf16]") {
  bf16_path_guard guard;
  // Odd sizes: seq not a multiple of the 64-row tiles (and odd, so the last query-row pair of
  // the native path's pair layout is half padding), head_dim not a multiple of 16 (48, 40) and
  // odd (33: the last head_dim pair is half padding); GQA, MQA, seq_q > seq_k. (Causal rows that
  // see a handful of keys put even the fp32 path near this max-error bound: kept out.)
  const std::vector<attention_shape> shapes = {
      attention_shape_of(2, 4, 2, 70, 90, 48, false),
      attention_shape_of(2, 4, 2, 70, 90, 48, true),
      attention_shape_of(1, 3, 1, 77, 131, 40, true),
      attention_shape_of(1, 2, 2, 131, 45, 33, false),
      attention_shape_of(1, 2, 1, 129, 129, 128, false),
  };
  for (const std::string& path : available_bf16_paths()) {
    set_bf16_path(path);
    CHECK(bf16_path() == (kernel_isa() == "avx512" ? path : "fp32"));
    for (const attention_shape& s : shapes) {
      INFO("path " << path << " b" << s.batch << " h" << s.heads << "/" << s.kv_heads << " sq"
                   << s.seq_q << " sk" << s.seq_k << " d" << s.head_dim << " causal " << s.causal);
      tensors t = make(s, 11);
      run_bf16(s, t);
      check_options opt;
      opt.tolerance = 2e-2; // kernel-v1 bf16
      const check_result r = check_all(s, t, opt);
      INFO(r.reason());
      CHECK(r.ok());
      // Output rounding to bf16 (8 significant bits) is visible, so this really is bf16 output.
      // (The backward's largest errors, ~1e-2, come from D_i = rowsum(dO * O) over the
      // bf16-rounded O, as in any bf16 FlashAttention; the reference recomputes O exactly.)
      CHECK(r.max_error > 1e-4);
    }
  }
}

TEST_CASE("rows with no visible key give o = 0 and lse = +inf on every bf16 path",
          "[attention][bf16]") {
  bf16_path_guard guard;
  // seq_q 200 > seq_k 90: rows 0..109 see no key. The native path takes a causal tile 16 rows at
  // a time, so whole 16-row blocks (and the first tile's blocks) see nothing, and row 110's block
  // sees one key among masked ones.
  const attention_shape s = attention_shape_of(1, 2, 1, 200, 90, 32, true);
  for (const std::string& path : available_bf16_paths()) {
    set_bf16_path(path);
    INFO("path " << path);
    tensors t = make(s, 3);
    run_bf16(s, t);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 110; ++i) {
        CHECK(std::isinf(t.lse[size_t(h * 200 + i)]));
        for (int64_t d = 0; d < 32; ++d)
          CHECK(t.o[size_t((i * 2 + h) * 32 + d)] == 0.f);
      }
    // Row 110 sees exactly key 0: o = v[0] (both heads share kv head 0), rounded to bf16.
    for (int64_t h = 0; h < 2; ++h) {
      CHECK(std::isfinite(t.lse[size_t(h * 200 + 110)]));
      for (int64_t d = 0; d < 32; ++d)
        CHECK(t.o[size_t((110 * 2 + h) * 32 + d)] == Approx(t.v[size_t(d)]).epsilon(1e-2));
    }
    // The forward (rows that see few keys put the backward near the bf16 bound on every path).
    check_options opt;
    opt.tolerance = 2e-2; // kernel-v1 bf16
    const check_result r =
        check_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data(), opt);
    INFO(r.reason());
    CHECK(r.ok());
  }
}

namespace {

// rms(got - ref) / rms(ref) over one tensor.
double rms_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double se = 0, ss = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    se += (got[i] - ref[i]) * (got[i] - ref[i]);
    ss += ref[i] * ref[i];
  }
  return std::sqrt(se / ss);
}

// rms errors of o, dq, dk, dv of the bf16 kernels on the current path, against the double
// reference on the same bf16 inputs.
std::vector<double> bf16_rms_errors(const attention_shape& s, unsigned seed) {
  tensors t = make(s, seed);
  run_bf16(s, t);
  std::vector<double> o(t.o.size()), lse(t.lse.size()), dq(t.dq.size()), dk(t.dk.size()),
      dv(t.dv.size());
  reference_forward(s, t.q.data(), t.k.data(), t.v.data(), o.data(), lse.data());
  reference_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(), dq.data(), dk.data(),
                     dv.data());
  return {rms_error(t.o, o), rms_error(t.dq, dq), rms_error(t.dk, dk), rms_error(t.dv, dv)};
}

} // namespace

TEST_CASE("the native bf16 path adds only the error of P and dS rounded to bf16",
          "[attention][bf16]") {
  if (available_bf16_paths().front() != "avx512_bf16" || kernel_isa() != "avx512")
    ACCELBENCH_SKIP("this CPU has no AVX512-BF16: only the fp32 path exists");
  bf16_path_guard guard;
  for (bool causal : {false, true}) {
    const attention_shape s = attention_shape_of(1, 4, 2, 150, 150, 64, causal);
    set_bf16_path("fp32");
    const std::vector<double> f32 = bf16_rms_errors(s, 5);
    set_bf16_path("avx512_bf16");
    const std::vector<double> native = bf16_rms_errors(s, 5);
    const char* names[4] = {"o", "dq", "dk", "dv"};
    for (int x = 0; x < 4; ++x) {
      INFO("causal " << causal << " " << names[x] << ": rms error / rms, fp32 path " << f32[x]
                     << ", native " << native[x]);
      // Both paths round the outputs to bf16: rms error ~ 2^-9 / sqrt(3) ~ 1.1e-3 and more.
      CHECK(f32[x] > 1e-3);
      // Rounding P (and dS) to bf16 adds independent errors of rms 2^-9 / sqrt(3) ~ 1.1e-3 of
      // each term; summed over a row they stay ~1.1e-3 of the output's rms per rounding, and add
      // in quadrature to the fp32 path's. 2e-3 bounds that; a wrong P, a lost tile or a bad
      // pair layout would be errors of order 1.
      CHECK(native[x] <= f32[x] + 2e-3);
      CHECK(native[x] != f32[x]); // the native path really ran (its rounding moves the error)
    }
  }
}

TEST_CASE("the bf16 dispatch takes the fp32 path when forced", "[attention][bf16]") {
  bf16_path_guard guard;
  isa_guard isa;
  set_bf16_path("fp32");
  CHECK(bf16_path() == "fp32");
  // The environment override, read again by "auto".
  ::setenv("ACCELBENCH_ATTN_BF16", "fp32", 1);
  set_bf16_path("auto");
  CHECK(bf16_path() == "fp32");
  ::unsetenv("ACCELBENCH_ATTN_BF16");
  set_bf16_path("auto");
  const bool native = available_bf16_paths().front() == "avx512_bf16";
  CHECK(bf16_path() == (native && kernel_isa() == "avx512" ? "avx512_bf16" : "fp32"));
  // A lower ISA forced: bf16 calls take that ISA's fp32 path.
  if (native) {
    set_kernel_isa("avx2");
    CHECK(bf16_path() == "fp32");
  } else {
    CHECK_THROWS_AS(set_bf16_path("avx512_bf16"), accelbench::input_error);
  }
  CHECK_THROWS_AS(set_bf16_path("amx"), accelbench::input_error);
}

TEST_CASE("sampled checks of a larger shape pass, and catch a corrupted row", "[attention]") {
  const attention_shape s = attention_shape_of(1, 4, 2, 300, 300, 64, true);
  tensors t = make(s, 21);
  run_fast(s, t);
  check_options opt;
  opt.tolerance = 1e-4;
  opt.full_limit = 0; // force sampling
  opt.sample_rows = 6;
  check_result r = check_all(s, t, opt);
  INFO(r.reason());
  CHECK(r.sampled);
  CHECK(r.ok());
  CHECK(r.points == 6 * 64 + 6 + 3 * 6 * 64); // o rows + lse, then dq, dk, dv rows

  // The last row is always sampled: corrupt one element of each output in turn.
  for (std::vector<float>* x : {&t.o, &t.dq}) {
    const float saved = x->back();
    x->back() += 0.05f;
    CHECK_FALSE(check_all(s, t, opt).ok());
    x->back() = saved;
  }
  const float saved = t.dk.back();
  t.dk.back() = std::numeric_limits<float>::quiet_NaN();
  r = check_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(), t.dq.data(), t.dk.data(),
                     t.dv.data(), opt);
  CHECK_FALSE(r.ok());
  CHECK(std::isinf(r.max_error));
  CHECK(r.reason().find("dk[b=0,j=299,h=1,d=63]") != std::string::npos);
  t.dk.back() = saved;
}

TEST_CASE("the checker rejects a deliberately wrong kernel", "[attention]") {
  const attention_shape s = attention_shape_of(1, 2, 1, 64, 80, 32, true);
  tensors t = make(s, 31);
  check_options opt;
  opt.tolerance = 1e-4;
  // Wrong kernel 1: ignores the causal mask.
  attention_shape wrong = s;
  wrong.causal = false;
  run_fast(wrong, t);
  check_result r =
      check_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data(), opt);
  INFO(r.reason());
  CHECK_FALSE(r.ok());
  CHECK(r.reason().find("> tolerance") != std::string::npos);
  // Wrong kernel 2: a right forward but dK and dV swapped in the backward.
  run_fast(s, t);
  REQUIRE(check_all(s, t, opt).ok());
  std::swap(t.dk, t.dv);
  CHECK_FALSE(check_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(), t.dq.data(),
                             t.dk.data(), t.dv.data(), opt)
                  .ok());
}

TEST_CASE("the sampled backward check does not trust the kernel's O and lse", "[attention]") {
  // A forward wrong in a row the forward check does not sample hands the backward a wrong O and
  // lse, and the backward kernel computes dK and dV consistently with them. A reference built from
  // that O and lse agrees with the wrong gradients; one computing its own forward does not.
  const attention_shape s =
      attention_shape_of(1, 2, 1, 300, 300, 32, false); // two query heads per kv head
  tensors t = make(s, 53);
  check_options opt;
  opt.tolerance = 1e-4;
  opt.full_limit = 0; // sampled rows, as for the catalogues' shapes
  opt.sample_rows = 4;
  flash_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data());
  // Query row 150 of head 0: lse too large by 1 (its probabilities e times too small), O halved.
  const int64_t row = 150, D = s.head_dim;
  t.lse[size_t(row)] += 1.0f;
  for (int64_t d = 0; d < D; ++d)
    t.o[size_t(row * s.heads * D + d)] *= 0.5f;
  REQUIRE(check_forward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.lse.data(), opt).ok());
  flash_backward(s, t.q.data(), t.k.data(), t.v.data(), t.o.data(), t.d_o.data(), t.lse.data(),
                 t.dq.data(), t.dk.data(), t.dv.data());
  const check_result r = check_backward(s, t.q.data(), t.k.data(), t.v.data(), t.d_o.data(),
                                        t.dq.data(), t.dk.data(), t.dv.data(), opt);
  INFO(r.reason());
  CHECK_FALSE(r.ok());
  // Caught through the key rows (every key row sees query row 150), not by luck in a dq sample.
  CHECK((r.worst.rfind("dk[", 0) == 0 || r.worst.rfind("dv[", 0) == 0));
}

TEST_CASE("the backward is deterministic (no racing accumulation)", "[attention][timing]") {
  // One head and several key tiles: the backward splits key tiles across threads.
  const attention_shape s = attention_shape_of(1, 1, 1, 257, 257, 64, false);
  tensors a = make(s, 41), b = make(s, 41);
  run_fast(s, a);
  run_fast(s, b);
  CHECK(a.dq == b.dq);
  CHECK(a.dk == b.dk);
  CHECK(a.dv == b.dv);
  check_options opt;
  CHECK(check_all(s, a, opt).ok());
}

TEST_CASE("workspace grows linearly with the sequence, never as seq^2", "[attention]") {
  attention_shape s = attention_shape_of(1, 16, 16, 4096, 4096, 128, true);
  const double w1 = double(backward_workspace_bytes(s)), f1 = double(forward_workspace_bytes(s));
  s.seq_q = s.seq_k = 16384;
  const double w4 = double(backward_workspace_bytes(s)), f4 = double(forward_workspace_bytes(s));
  CHECK(w4 / w1 < 4.1); // 4x the length: ~4x the memory (a score matrix would be 16x)
  CHECK(f4 / f1 < 4.1);
  CHECK(w4 < 16.0 * 16384 * 16384 * 4 / 8); // far below one head-batch of fp32 scores
}

TEST_CASE("bad shapes are input errors naming the field and value", "[attention]") {
  attention_shape s = attention_shape_of(1, 12, 8, 16, 16, 16, false);
  std::vector<float> x(16 * 16 * 12), o(x.size()), l(12 * 16);
  try {
    flash_forward(s, x.data(), x.data(), x.data(), o.data(), l.data());
    FAIL("no error");
  } catch (const accelbench::input_error& e) {
    CHECK(std::string(e.what()).find("heads (12)") != std::string::npos);
    CHECK(std::string(e.what()).find("kv_heads (8)") != std::string::npos);
  }
  s.kv_heads = 4;
  s.seq_k = 0;
  CHECK_THROWS_AS(check_shape(s), accelbench::input_error);
  CHECK_THROWS_AS(set_kernel_isa("sse9"), accelbench::input_error);
}

TEST_CASE("a dtype the CPU kernels do not compute in is refused by name", "[attention]") {
  const attention_shape s = attention_shape_of(1, 2, 2, 16, 16, 16, false);
  std::vector<float> x(16 * 16 * 2), o(x.size()), l(2 * 16);
  for (accelbench::dtype t : {accelbench::dtype::fp16, accelbench::dtype::fp8_e4m3}) {
    const attention_tensors io{
        .type = t, .q = x.data(), .k = x.data(), .v = x.data(), .o = o.data(), .lse = l.data()};
    try {
      flash_forward(s, io);
      FAIL("no error");
    } catch (const accelbench::backend_error& e) {
      CHECK(std::string(e.what()) == "attention (cpu): dtype '" + accelbench::to_string(t) +
                                         "' is not supported (fp32, bf16)");
    }
    CHECK_THROWS_AS(flash_backward(s, io), accelbench::backend_error);
  }
  // The same buffers as fp32 run.
  flash_forward(s, {.type = accelbench::dtype::fp32,
                    .q = x.data(),
                    .k = x.data(),
                    .v = x.data(),
                    .o = o.data(),
                    .lse = l.data()});
  CHECK(std::isfinite(l[0]));
}
