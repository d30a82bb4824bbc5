// GEMM on CUDA with cuBLASLt. Host code only: cuBLASLt is a host API, and the
// inputs are prepared (and quantised) on the host, over all its cores, so the correctness
// reference sees exactly the values the device reads.
#include "workloads/gemm/cuda/gemm_cuda.hpp"
#include "harness/core/hash.hpp"

#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "harness/core/bf16.hpp"
#include "harness/core/checked_math.hpp"
#include "harness/core/counter_rng.hpp"
#include "harness/core/datasheet_peak.hpp"
#include "harness/core/error.hpp"
#include "harness/core/fp16.hpp"
#include "harness/core/kernel_metrics.hpp"
#include "harness/core/parallel.hpp"
#include "harness/device/device.hpp"
#include "harness/device/device_kernel.hpp"
#include "harness/measure/kernel_run.hpp"
#include "workloads/gemm/gemm_tolerance.hpp"

namespace accelbench::gemm {

namespace {

constexpr uint64_t workspace_bytes = 32ull << 20; // heuristic selection with 32 MiB of workspace

bool is_narrow(dtype d) { return is_fp8(d) || is_block_scaled(d); }
int64_t scale_block(dtype d) { return d == dtype::nvfp4 ? 16 : 32; }

// Bits per stored element of A and B.
int input_bits(dtype d) { return element_bits(d); }
// Output element bytes: C's type is out_dtype (fp32, bf16 or fp16).
int output_bytes(const gemm_shape& d) { return d.out == dtype::fp32 ? 4 : 2; }

cudaDataType_t output_type(const gemm_shape& d) {
  return d.out == dtype::fp32 ? CUDA_R_32F : d.out == dtype::fp16 ? CUDA_R_16F : CUDA_R_16BF;
}

// The shape of the spec, under the short names of this file.
using dims = gemm_shape;

// ---- cuBLASLt RAII (move-only wrappers around C handles, errors with context) ----
void check_lt(cublasStatus_t st, const char* what, const dims& d) {
  if (st == CUBLAS_STATUS_SUCCESS)
    return;
  throw backend_error(fmt::format("cuBLASLt {} failed with status {} for {}x{}x{} {}", what,
                                  (int)st, d.m, d.n, d.k, dtype_name(d.type)));
}

template <class H, cublasStatus_t (*Destroy)(H)> struct lt_handle {
  H h = nullptr;
  lt_handle() = default;
  lt_handle(const lt_handle&) = delete;
  lt_handle& operator=(const lt_handle&) = delete;
  ~lt_handle() {
    if (h)
      Destroy(h);
  }
};
using lt_ctx = lt_handle<cublasLtHandle_t, cublasLtDestroy>;
using lt_desc = lt_handle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using lt_layout = lt_handle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using lt_pref = lt_handle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

// ---- minifloat tables: every finite non-negative value of a format, sorted ----
struct mf_table {
  std::vector<std::pair<float, uint8_t>> pos; // (value, code) sorted by value
};

int mf_bits(minifloat f) {
  switch (f) {
  case minifloat::e2m1:
    return 4;
  default:
    return 8;
  }
}

const mf_table& table_of(minifloat f) {
  static std::array<mf_table, 5> tables = [] {
    std::array<mf_table, 5> t;
    for (int fi = 0; fi < 5; ++fi) {
      auto f = static_cast<minifloat>(fi);
      int codes = 1 << mf_bits(f);
      // Unsigned formats use every code; signed ones only the positive half.
      bool is_unsigned = f == minifloat::ue8m0 || f == minifloat::ue4m3;
      int limit = is_unsigned ? (f == minifloat::ue4m3 ? 128 : 256) : codes / 2;
      for (int c = 0; c < limit; ++c) {
        float v = decode_minifloat(f, (uint8_t)c);
        if (std::isfinite(v))
          t[fi].pos.emplace_back(v, (uint8_t)c);
      }
      std::sort(t[fi].pos.begin(), t[fi].pos.end());
    }
    return t;
  }();
  return tables[(int)f];
}

} // namespace

// ---------------------------------------------------------------------------------------------
float decode_minifloat(minifloat f, uint8_t b) {
  auto ieee = [](int sign, int e, int m, int mbits, int bias) {
    float v = e == 0 ? std::ldexp((float)m, 1 - bias - mbits)
                     : std::ldexp((float)((1 << mbits) + m), e - bias - mbits);
    return sign ? -v : v;
  };
  switch (f) {
  case minifloat::e4m3: { // OCP E4M3 "fn": no infinities, S.1111.111 is NaN, max 448
    int s = b >> 7, e = (b >> 3) & 15, m = b & 7;
    if (e == 15 && m == 7)
      return NAN;
    return ieee(s, e, m, 3, 7);
  }
  case minifloat::ue4m3: { // the unsigned scale type of NVFP4: E4M3 with the sign bit 0
    int e = (b >> 3) & 15, m = b & 7;
    if ((b & 0x80) || (e == 15 && m == 7))
      return NAN;
    return ieee(0, e, m, 3, 7);
  }
  case minifloat::e5m2: { // IEEE-like: exponent 31 is inf/NaN, max 57344
    int s = b >> 7, e = (b >> 2) & 31, m = b & 3;
    if (e == 31)
      return m ? NAN : (s ? -INFINITY : INFINITY);
    return ieee(s, e, m, 2, 15);
  }
  case minifloat::e2m1: { // FP4: 0, 0.5, 1, 1.5, 2, 3, 4, 6
    int s = (b >> 3) & 1, e = (b >> 1) & 3, m = b & 1;
    return ieee(s, e, m, 1, 1);
  }
  case minifloat::ue8m0: // a power of two 2^(b-127); 0xFF is NaN
    if (b == 0xFF)
      return NAN;
    return std::ldexp(1.0f, (int)b - 127);
  }
  return NAN;
}

float minifloat_max(minifloat f) { return table_of(f).pos.back().first; }

uint8_t encode_minifloat(minifloat f, float x) {
  const auto& t = table_of(f).pos;
  bool is_unsigned = f == minifloat::ue8m0 || f == minifloat::ue4m3;
  uint8_t sign = 0;
  if (std::isnan(x)) {
    // NaN stays NaN where the format has one (a silent 0 would hide it); FP4 has none.
    switch (f) {
    case minifloat::e4m3:
    case minifloat::e5m2:
    case minifloat::ue4m3:
      return 0x7F;
    case minifloat::ue8m0:
      return 0xFF;
    case minifloat::e2m1:
      return 0;
    }
  }
  if (x < 0) {
    if (is_unsigned)
      x = 0;
    else
      sign = (uint8_t)(1u << (mf_bits(f) - 1));
    x = std::fabs(x);
  }
  // Saturate (the casts used for FP8 training saturate rather than overflow to NaN).
  if (x >= t.back().first)
    return sign | t.back().second;
  auto it = std::lower_bound(t.begin(), t.end(), std::make_pair(x, (uint8_t)0),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  if (it == t.begin())
    return sign | it->second;
  auto lo = std::prev(it);
  float dlo = x - lo->first, dhi = it->first - x;
  uint8_t code;
  if (dlo < dhi)
    code = lo->second;
  else if (dhi < dlo)
    code = it->second;
  else
    code = (lo->second & 1) ? it->second : lo->second; // tie: even mantissa
  return sign | code;
}

uint64_t block_scale_offset(int64_t r, int64_t c, int64_t scale_cols) {
  const int64_t col_tiles = (scale_cols + 3) / 4;
  const int64_t tile = (r / 128) * col_tiles + c / 4;
  return (uint64_t)(tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + (c % 4));
}

uint64_t block_scale_bytes(int64_t rows, int64_t scale_cols) {
  return (uint64_t)((rows + 127) / 128 * 128) * (uint64_t)((scale_cols + 3) / 4 * 4);
}

const std::vector<std::string>& cuda_gemm_dtypes() {
  static const std::vector<std::string> d = {"fp32",     "tf32",     "fp16",  "bf16",
                                             "fp8_e4m3", "fp8_e5m2", "mxfp8", "nvfp4"};
  return d;
}

bool cuda_available(std::string* why) { return device::cuda_available(why); }

namespace {
// C's type when out_dtype is unstated is torch.matmul's (gemm_spec.hpp), here rather than the
// CPU's fp32: every entry point applies it.
gemm_shape with_cuda_out(gemm_shape d) {
  if (!d.out_stated)
    d.out = torch_out_dtype(d.type);
  return d;
}
} // namespace

uint64_t gemm_cuda_device_bytes(const gemm_shape& stated) {
  const gemm_shape d = with_cuda_out(stated);
  const int bits = input_bits(d.type);
  // Saturating: a huge shape must be refused as too big, not wrap to a size that fits.
  uint64_t a = sat_product({d.m, d.k, bits}) / 8, b = sat_product({d.k, d.n, bits}) / 8;
  uint64_t c = sat_product({d.m, d.n, output_bytes(d)});
  uint64_t s = 0;
  if (is_block_scaled(d.type)) {
    int64_t sc = d.k / scale_block(d.type);
    s = sat_add(block_scale_bytes(d.m, sc), block_scale_bytes(d.n, sc));
  }
  return sat_add(sat_add(sat_add(a, b), sat_add(c, s)), workspace_bytes);
}

// Layout rules of cuBLASLt's narrow kernels (cuBLAS documentation, cublasLtMatmul, "FP8" and
// "block scaling" requirements): both operands K-major (in column-major terms transa = T,
// transb = N; here trans_a = 0, trans_b = 1), 16-byte aligned leading dimensions, K a multiple
// of the scale block.
static std::string layout_reason(const dims& d) {
  if (!is_narrow(d.type))
    return {};
  if (d.trans_a || !d.trans_b)
    return fmt::format(
        "dtype {} needs both operands K-major (cuBLASLt FP8/block-scaled kernels "
        "take the TN layout only): use trans_a=0 trans_b=1 (got trans_a={} trans_b={})",
        dtype_name(d.type), (int)d.trans_a, (int)d.trans_b);
  int64_t kmul = is_block_scaled(d.type) ? 32 : 16;
  if (d.k % kmul != 0)
    return fmt::format("dtype {} needs K to be a multiple of {} (got K={})", dtype_name(d.type),
                       kmul, d.k);
  if (d.m % 16 != 0 || d.n % 16 != 0)
    return fmt::format("dtype {} needs M and N to be multiples of 16 (16-byte aligned rows; got "
                       "M={} N={})",
                       dtype_name(d.type), d.m, d.n);
  return {};
}

// Output types cuBLASLt has kernels for (cuBLAS documentation, cublasLtMatmul's data-type
// table): fp32 and tf32 inputs write fp32; fp16 and bf16 write their own type or fp32; fp8 and the
// block-scaled types bf16, fp16 or fp32.
static std::string output_reason(const dims& d) {
  const bool ok = is_narrow(d.type) || d.out == dtype::fp32 ||
                  (d.out == d.type && (d.type == dtype::fp16 || d.type == dtype::bf16));
  if (ok)
    return {};
  return fmt::format("out_dtype {} with dtype {}: cuBLASLt writes {} inputs' C as {} only",
                     dtype_name(d.out), dtype_name(d.type), dtype_name(d.type),
                     d.type == dtype::fp16 || d.type == dtype::bf16 ? to_string(d.type) + " or fp32"
                                                                    : std::string("fp32"));
}

std::string gemm_cuda_unavailable_reason(const gemm_shape& stated) {
  const gemm_shape d = with_cuda_out(stated);
  if (auto r = layout_reason(d); !r.empty())
    return r;
  if (auto r = output_reason(d); !r.empty())
    return r;
  std::string why;
  if (!device::cuda_available(&why))
    return "CUDA backend: " + why;
  auto st = device::query_cuda(true); // free memory now, not at the first query
  const auto& g = st.gpus.front();
  if (auto r = device::dtype_unsupported_reason(to_string(d.type), g.cc_major, g.cc_minor, g.name);
      !r.empty())
    return r;
  if (auto r = device::memory_refusal(gemm_cuda_device_bytes(d), g.free_memory); !r.empty())
    return r;
  return {};
}

// ---------------------------------------------------------------------------------------------
namespace {

// Host copies of the operands: `a_val`/`b_val` hold op(A)[i,k] / B as the device reads them
// (dequantised, in the stored layout), `a_dev`/`b_dev` the raw bytes uploaded.
struct host_operand {
  std::vector<float> val;      // dequantised values in the stored layout
  std::vector<uint8_t> bytes;  // what is uploaded
  std::vector<uint8_t> scales; // block-scale tensor in cuBLASLt's tiled layout (mxfp8, nvfp4)
  float tensor_scale = 1.0f;   // per-tensor dequantisation scale (fp8)
};

// fp32 and tf32 stored as they are; fp16 and bf16 rounded, the reference reading the rounded
// values. tf32: the device rounds to tf32 inside the tensor core; the reference keeps the fp32
// inputs and cuda_error_model's u_in covers the 10-bit mantissa.
void store_wide(dtype type, host_operand& h) {
  const uint64_t n = h.val.size();
  if (type == dtype::fp32 || type == dtype::tf32) {
    h.bytes.resize(n * 4);
    std::memcpy(h.bytes.data(), h.val.data(), n * 4);
    return;
  }
  h.bytes.resize(n * 2);
  auto* p = reinterpret_cast<uint16_t*>(h.bytes.data());
  parallel_for((int64_t)n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      if (type == dtype::bf16) {
        p[i] = float_to_bf16(h.val[i]);
        h.val[i] = bf16_to_float(p[i]);
      } else {
        __half hv = __float2half_rn(h.val[i]);
        std::memcpy(&p[i], &hv, 2);
        h.val[i] = __half2float(hv);
      }
    }
  });
}

// The largest |x| of `v`, over the host's cores.
float parallel_amax(const std::vector<float>& v) {
  std::mutex m;
  float amax = 0;
  parallel_for((int64_t)v.size(), [&](int64_t lo, int64_t hi) {
    float local = 0;
    for (int64_t i = lo; i < hi; ++i)
      local = std::max(local, std::fabs(v[i]));
    std::lock_guard lock(m);
    amax = std::max(amax, local);
  });
  return amax;
}

// FP8 with a per-tensor scale. fp8_e5m2: A (the "gradient" operand) is E5M2 and B is E4M3,
// because cuBLASLt has no E5M2 x E5M2 kernel (its FP8 table lists E4M3xE4M3, E4M3xE5M2 and
// E5M2xE4M3 only).
void quantise_fp8(dtype type, bool is_a, host_operand& h) {
  const uint64_t n = h.val.size();
  auto f = (type == dtype::fp8_e5m2 && is_a) ? minifloat::e5m2 : minifloat::e4m3;
  // Per-tensor scaling (Transformer Engine's delayed scaling, here with the exact amax): the
  // stored value is x * (fmax / amax) and the device multiplies back by amax / fmax.
  const float amax = parallel_amax(h.val);
  float s = amax > 0 ? minifloat_max(f) / amax : 1.0f;
  h.tensor_scale = 1.0f / s;
  h.bytes.resize(n);
  parallel_for((int64_t)n, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      h.bytes[i] = encode_minifloat(f, h.val[i] * s);
      h.val[i] = decode_minifloat(f, h.bytes[i]) * h.tensor_scale;
    }
  });
}

// The scale code of one block of amax `amax`: NVFP4 an E4M3 scale, amax / 6 (the largest FP4
// value); MXFP8 (OCP MX v1.0 §6.3) X = 2^(floor(log2(amax)) - emax_elem), emax_elem = 8 for E4M3.
uint8_t block_scale_code(bool fp4, float amax, float emax) {
  if (fp4)
    return encode_minifloat(minifloat::ue4m3, std::max(amax / emax, 1.0f / 512));
  int e = amax > 0 ? (int)std::floor(std::log2(amax)) - 8 : -127;
  return (uint8_t)std::clamp(e + 127, 0, 254);
}

// One block of `blk` elements of row r, block column c: spread in magnitude, scaled, quantised.
void quantise_block(bool fp4, int64_t blk, int64_t r, int64_t c, int64_t cols, int64_t sc,
                    host_operand& h) {
  const auto ef = fp4 ? minifloat::e2m1 : minifloat::e4m3;
  float* x = &h.val[(uint64_t)r * cols + c * blk];
  // Blocks of different magnitudes (2^-4 .. 2^4, varying along rows and blocks), as real
  // tensors have: every block then has its own scale code, so a scale placed at the wrong
  // offset of the tiled layout changes the result instead of going unnoticed.
  const float mag = std::ldexp(1.0f, (int)((r * 7 + c * 3) % 9) - 4);
  for (int64_t i = 0; i < blk; ++i)
    x[i] *= mag;
  float amax = 0;
  for (int64_t i = 0; i < blk; ++i)
    amax = std::max(amax, std::fabs(x[i]));
  const uint8_t scode = block_scale_code(fp4, amax, minifloat_max(ef));
  float scale = decode_minifloat(fp4 ? minifloat::ue4m3 : minifloat::ue8m0, scode);
  h.scales[block_scale_offset(r, c, sc)] = scode;
  for (int64_t i = 0; i < blk; ++i) {
    uint64_t idx = (uint64_t)r * cols + c * blk + i;
    uint8_t q = encode_minifloat(ef, x[i] / scale);
    x[i] = decode_minifloat(ef, q) * scale;
    if (fp4)
      h.bytes[idx / 2] |= (uint8_t)((q & 0xF) << ((idx & 1) * 4)); // low nibble first
    else
      h.bytes[idx] = q;
  }
}

// MXFP8 and NVFP4: a scale per block of 32 (16) elements along K, in cuBLASLt's tiled layout.
void quantise_block_scaled(dtype type, int64_t rows, int64_t cols, host_operand& h) {
  const bool fp4 = type == dtype::nvfp4;
  const int64_t blk = scale_block(type);
  const int64_t sc = cols / blk;
  const uint64_t n = h.val.size();
  h.scales.assign(block_scale_bytes(rows, sc), 0);
  h.bytes.assign(fp4 ? n / 2 : n, 0);
  // Rows in parallel: a row's blocks, scale codes and (cols being a multiple of the block, even)
  // packed fp4 bytes belong to it alone.
  parallel_for(
      rows,
      [&](int64_t lo, int64_t hi) {
        for (int64_t r = lo; r < hi; ++r)
          for (int64_t c = 0; c < sc; ++c)
            quantise_block(fp4, blk, r, c, cols, sc, h);
      },
      std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(cols, 1)));
}

// Fills `rows` x `cols` (row-major, inner dimension `cols`) uniform in [-1, 1) and quantises it to
// `type`. For the narrow dtypes `cols` is K (the operands are K-major by layout_reason). Element i
// is counter_rng::uniform_pm1(seed, i), so the host's cores fill and quantise it in parallel
// (~134M elements per operand pair of an 8192^3 GEMM took seconds on one thread).
host_operand make_operand(dtype type, bool is_a, int64_t rows, int64_t cols, uint64_t seed) {
  host_operand h;
  h.val.resize((uint64_t)rows * cols);
  parallel_for((int64_t)h.val.size(), [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      h.val[i] = counter_rng::uniform_pm1(seed, (uint64_t)i);
  });
  if (is_fp8(type))
    quantise_fp8(type, is_a, h);
  else if (is_block_scaled(type))
    quantise_block_scaled(type, rows, cols, h);
  else
    store_wide(type, h);
  return h;
}

cudaDataType_t element_type(dtype type, bool is_a) {
  switch (type) {
  case dtype::fp32:
  case dtype::tf32:
    return CUDA_R_32F;
  case dtype::fp16:
    return CUDA_R_16F;
  case dtype::bf16:
    return CUDA_R_16BF;
  case dtype::fp8_e5m2:
    return is_a ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
  case dtype::fp8_e4m3:
  case dtype::mxfp8:
    return CUDA_R_8F_E4M3;
  case dtype::nvfp4:
    return CUDA_R_4F_E2M1;
  case dtype::fp64:
  case dtype::int8:
  case dtype::int32:
  case dtype::int64:
    break; // not GEMM dtypes: parse_dtype refuses them in a GEMM config
  }
  throw input_error("unknown CUDA GEMM dtype " + to_string(type));
}

// cuBLASLt has no kernel for the problem on this device: a skip with the reason, not a failure.
struct no_algorithm : backend_error {
  using backend_error::backend_error;
};

// One cuBLASLt matmul, set up once; enqueue() is the timed iteration.
class lt_gemm : public device::device_kernel {
public:
  lt_gemm(const dims& d, const host_operand& ha, const host_operand& hb, int device_index)
      : device::device_kernel(device_index), m_d(d) {
    // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: cuBLASLt's "A" is our B,
    // its "B" is our A, m' = N, n' = M. A row-major [R,C] buffer is a column-major [C,R] one.
    m_a = device::device_buffer(ha.bytes.size());
    m_b = device::device_buffer(hb.bytes.size());
    m_c = device::device_buffer((uint64_t)d.m * d.n * output_bytes(d));
    m_ws = device::device_buffer(workspace_bytes);
    m_a.upload(ha.bytes.data(), ha.bytes.size());
    m_b.upload(hb.bytes.data(), hb.bytes.size());
    m_c.zero();

    check_lt(cublasLtCreate(&m_lt.h), "create", d);
    cublasComputeType_t compute =
        d.type == dtype::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check_lt(cublasLtMatmulDescCreate(&m_desc.h, compute, CUDA_R_32F), "matmul desc", d);
    cublasOperation_t opa = d.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N; // cuBLAS A = our B
    cublasOperation_t opb = d.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N; // cuBLAS B = our A
    set(CUBLASLT_MATMUL_DESC_TRANSA, opa);
    set(CUBLASLT_MATMUL_DESC_TRANSB, opb);

    if (is_fp8(d.type)) {
      // Fast accumulation off (the default, made explicit): partial sums are promoted to the fp32
      // accumulator regularly, which cuda_error_model assumes.
      set(CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t{0});
      m_scales = device::device_buffer(2 * sizeof(float));
      float s[2] = {hb.tensor_scale, ha.tensor_scale}; // cuBLAS A = our B
      m_scales.upload(s, sizeof s);
      set_scale_pointers(m_scales.as<float>(), m_scales.as<float>() + 1);
    } else if (is_block_scaled(d.type)) {
      m_sa = device::device_buffer(hb.scales.size());
      m_sb = device::device_buffer(ha.scales.size());
      m_sa.upload(hb.scales.data(), hb.scales.size());
      m_sb.upload(ha.scales.data(), ha.scales.size());
      int32_t mode = d.type == dtype::nvfp4 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3
                                            : CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
      set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, mode);
      set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mode);
      set_scale_pointers(m_sa.get(), m_sb.get());
    }

    // Stored shapes in column-major terms.
    const int64_t a_rows = d.trans_b ? d.k : d.n, a_cols = d.trans_b ? d.n : d.k; // our B
    const int64_t b_rows = d.trans_a ? d.m : d.k, b_cols = d.trans_a ? d.k : d.m; // our A
    const cudaDataType_t out = output_type(d);
    make_layout(m_la, element_type(d.type, false), a_rows, a_cols, "layout A");
    make_layout(m_lb, element_type(d.type, true), b_rows, b_cols, "layout B");
    make_layout(m_lc, out, d.n, d.m, "layout C");

    check_lt(cublasLtMatmulPreferenceCreate(&m_pref.h), "preference", d);
    uint64_t ws = workspace_bytes;
    check_lt(cublasLtMatmulPreferenceSetAttribute(
                 m_pref.h, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
             "preference workspace", d);
    int found = 0;
    // No algorithm for the problem comes back as CUBLAS_STATUS_NOT_SUPPORTED (or zero results).
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(
        m_lt.h, m_desc.h, m_la.h, m_lb.h, m_lc.h, m_lc.h, m_pref.h, 1, &m_heur, &found);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0) ||
        (hs == CUBLAS_STATUS_SUCCESS && m_heur.state != CUBLAS_STATUS_SUCCESS))
      throw no_algorithm(
          fmt::format("cuBLASLt has no algorithm for {}x{}x{} {} (trans_a={}, trans_b={}) "
                      "on this device",
                      d.m, d.n, d.k, dtype_name(d.type), (int)d.trans_a, (int)d.trans_b));
    check_lt(hs, "heuristic", d);
    // The uploads above are ordinary (pageable) copies and the kernel stream is non-blocking:
    // wait for them before the first timed matmul can read the operands.
    device::synchronize("GEMM operands upload");
  }

  void enqueue(void* stream) override {
    const float alpha = 1.0f, beta = 0.0f;
    // beta = 0: C is not read; it is passed as D's own buffer and layout.
    check_lt(cublasLtMatmul(m_lt.h, m_desc.h, &alpha, m_a.get(), m_la.h, m_b.get(), m_lb.h, &beta,
                            m_c.get(), m_lc.h, m_c.get(), m_lc.h, &m_heur.algo, m_ws.get(),
                            workspace_bytes, static_cast<cudaStream_t>(stream)),
             "matmul", m_d);
  }

  // The chosen algorithm's configuration, recorded in run.extra (which kernel ran, for
  // comparisons).
  json algorithm() const {
    auto get = [this](cublasLtMatmulAlgoConfigAttributes_t a, auto zero) {
      auto v = zero;
      size_t w = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&m_heur.algo, a, &v, sizeof v, &w);
      return (int64_t)v;
    };
    return {{"library", "cublasLt"},
            {"selection", "cublasLtMatmulAlgoGetHeuristic, first result"},
            {"algo_id", get(CUBLASLT_ALGO_CONFIG_ID, int32_t{0})},
            {"tile_id", get(CUBLASLT_ALGO_CONFIG_TILE_ID, uint32_t{0})},
            {"stages_id", get(CUBLASLT_ALGO_CONFIG_STAGES_ID, uint32_t{0})},
            {"splitk", get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, int32_t{0})},
            {"reduction_scheme", get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, uint32_t{0})},
            {"cta_swizzling", get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, uint32_t{0})},
            {"custom_option", get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, uint32_t{0})},
            {"cluster_shape_id", get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, uint16_t{0})},
            {"waves", m_heur.wavesCount},
            {"workspace_bytes", m_heur.workspaceSize},
            {"workspace_limit_bytes", workspace_bytes}};
  }

  // C as fp32 on the host.
  std::vector<float> result() const {
    std::vector<float> c((uint64_t)m_d.m * m_d.n);
    if (output_bytes(m_d) == 4) {
      m_c.download(c.data(), c.size() * 4);
    } else {
      std::vector<uint16_t> h(c.size());
      m_c.download(h.data(), h.size() * 2);
      for (size_t i = 0; i < c.size(); ++i)
        c[i] = m_d.out == dtype::fp16 ? fp16_to_float(h[i]) : bf16_to_float(h[i]);
    }
    return c;
  }

private:
  template <class T> void set(cublasLtMatmulDescAttributes_t a, const T& v) {
    check_lt(cublasLtMatmulDescSetAttribute(m_desc.h, a, &v, sizeof v), "set attribute", m_d);
  }
  // A column-major [rows, cols] matrix layout, densely packed (leading dimension = rows).
  void make_layout(lt_layout& l, cudaDataType_t t, int64_t rows, int64_t cols, const char* what) {
    check_lt(cublasLtMatrixLayoutCreate(&l.h, t, rows, cols, rows), what, m_d);
  }
  // cuBLASLt's A and B scale pointers (its A is our B), each set as a void*.
  void set_scale_pointers(void* pa, void* pb) {
    set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, pa);
    set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, pb);
  }

  dims m_d;
  device::device_buffer m_a, m_b, m_c, m_ws, m_scales, m_sa, m_sb;
  lt_ctx m_lt;
  lt_desc m_desc;
  lt_layout m_la, m_lb, m_lc;
  lt_pref m_pref;
  cublasLtMatmulHeuristicResult_t m_heur{};
};

// What ran: the algorithm cuBLASLt chose, the device, FLOPs and least traffic per iteration,
// the samples a clock throttle touched.
void describe(const dims& d, const lt_gemm& k, const json& device, run& out) {
  out.extra["algorithm"] = k.algorithm();
  out.extra["implementation"] = "cublasLt";
  out.extra["device"] = device;
  out.extra["flops_per_iteration"] = d.flops();
  out.extra["output_dtype"] = to_string(d.out);
  // Least traffic of one GEMM (the report's roofline): A and B read once at their element
  // width, C written once; block scales of mxfp8/nvfp4 are not counted.
  out.extra["bytes_per_iteration"] =
      ((double)d.a_elems() + (double)d.b_elems()) * element_bits(d.type) / 8.0 +
      (double)d.c_elems() * output_bytes(d);
  if (d.type == dtype::fp8_e5m2)
    out.extra["operand_types"] = "A e5m2, B e4m3 (cuBLASLt has no e5m2 x e5m2)";
  const auto throttled = std::count_if(out.samples.begin(), out.samples.end(), [](const auto& s) {
    return s.extra.value("throttled", false);
  });
  if (throttled)
    out.extra["throttled_samples"] = throttled;
}

// Correctness on sampled outputs (the four corners always), against a double-precision dot
// product over the dequantised inputs the device read, each element against the error bound
// of cuda_error_model (workloads/gemm/gemm_tolerance.hpp).
void check_output(const dims& d, const host_operand& ha, const host_operand& hb,
                  std::vector<float>& c, const cuda_output_hook& hook, run& out,
                  const run_context& ctx, uint64_t seed) {
  auto a_at = [&](int64_t i, int64_t kk) {
    return (double)ha.val[d.trans_a ? (uint64_t)kk * d.m + i : (uint64_t)i * d.k + kk];
  };
  auto b_at = [&](int64_t kk, int64_t j) {
    return (double)hb.val[d.trans_b ? (uint64_t)j * d.k + kk : (uint64_t)kk * d.n + j];
  };
  if (hook) {
    cuda_gemm_output view{d.m, d.n, d.k, a_at, b_at, c};
    hook(view);
  }
  const int64_t points = std::max<int64_t>(4, ctx.rules->correctness_samples());
  const gemm_check chk = check_gemm_output(
      d.m, d.n, d.k, a_at, b_at, [&](int64_t i, int64_t j) { return c[(uint64_t)i * d.n + j]; },
      cuda_error_model(d.type, d.out), points, seed + 17);
  record_check(out, chk);
}

} // namespace

void gemm_cuda_execute(const gemm_shape& stated, const std::string& key, run& out, run_context& ctx,
                       const cuda_output_hook& hook) {
  const gemm_shape d = with_cuda_out(stated);
  if (auto why = gemm_cuda_unavailable_reason(d); !why.empty()) {
    out.mark_skipped(why);
    return;
  }
  const auto st = device::query_cuda();
  const auto& gpu = st.gpus.front();
  const uint64_t seed = seed_of(ctx.seed, key);
  try {
    device::set_device(gpu.index);
    // Operands in their stored layout: A [M,K] or [K,M]; B [K,N] or [N,K]. The narrow dtypes are
    // K-major (layout_reason), so their blocks run along the stored rows.
    const int64_t a_rows = d.trans_a ? d.k : d.m, a_cols = d.trans_a ? d.m : d.k;
    const int64_t b_rows = d.trans_b ? d.n : d.k, b_cols = d.trans_b ? d.k : d.n;
    auto ha = make_operand(d.type, true, a_rows, a_cols, seed);
    auto hb = make_operand(d.type, false, b_rows, b_cols, seed ^ 0x9e3779b97f4a7c15ULL);
    lt_gemm k(d, ha, hb, gpu.index);

    measure::kernel_run_steps steps;
    steps.flops = d.flops();
    steps.peak = [&] { return datasheet_peak(gpu.name, d.type); };
    steps.describe = [&](run& r) { describe(d, k, gpu.to_json(), r); };
    steps.check = [&](run& r) {
      auto c = k.result();
      check_output(d, ha, hb, c, hook, r, ctx, seed);
    };
    measure::run_checked_kernel(out, key, k, ctx, steps);
  } catch (const no_algorithm& e) {
    out.mark_skipped(e.what());
  } catch (const backend_error& e) {
    out.mark_failed(e.what());
  }
}

} // namespace accelbench::gemm
