#include "workloads/gemm/cpu/gemm_cpu.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>

#include <fmt/format.h>

#include "harness/core/bf16.hpp"
#include "harness/core/error.hpp"
#include "harness/core/stats.hpp"

namespace accelbench::gemm {

float gemm_buffers::a_at(const gemm_shape& s, int64_t i, int64_t kk) const {
  int64_t idx = s.trans_a ? kk * s.m + i : i * s.k + kk;
  return a16.empty() ? a32[idx] : bf16_to_float(a16[idx]);
}

float gemm_buffers::b_at(const gemm_shape& s, int64_t kk, int64_t j) const {
  int64_t idx = s.trans_b ? j * s.k + kk : kk * s.n + j;
  return b16.empty() ? b32[idx] : bf16_to_float(b16[idx]);
}

gemm_buffers make_buffers(const gemm_shape& s, uint64_t seed) {
  gemm_buffers b;
  stats::rng g(seed);
  auto fill = [&](std::vector<float>& v, int64_t n) {
    v.resize(n);
    for (auto& x : v)
      x = (float)(2.0 * g.uniform() - 1.0);
  };
  auto fill16 = [&](std::vector<uint16_t>& v, int64_t n) {
    v.resize(n);
    for (auto& x : v)
      x = float_to_bf16((float)(2.0 * g.uniform() - 1.0));
  };
  if (s.type == dtype::bf16) {
    fill16(b.a16, s.a_elems());
    fill16(b.b16, s.b_elems());
  } else {
    fill(b.a32, s.a_elems());
    fill(b.b32, s.b_elems());
  }
  b.c.assign(s.c_elems(), 0.0f);
  return b;
}

using sbgemm_fn = void (*)(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint,
                           float, const uint16_t*, blasint, const uint16_t*, blasint, float, float*,
                           blasint);

// cblas_sbgemm exists only in OpenBLAS builds made with BUILD_BFLOAT16; look it up at run time so
// the same binary works with either build.
sbgemm_fn openblas_sbgemm() {
  static sbgemm_fn fn = reinterpret_cast<sbgemm_fn>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  return fn;
}

bool openblas_has_bf16() { return openblas_sbgemm() != nullptr; }

namespace {

// oneDNN matmul primitive, created once per shape (creation is outside the timed region).
class onednn_gemm : public cpu_gemm {
public:
  explicit onednn_gemm(const gemm_shape& s) : m_eng(dnnl::engine::kind::cpu, 0), m_stream(m_eng) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    dt in = s.type == dtype::bf16 ? dt::bf16 : dt::f32;
    m_a_md = dnnl::memory::desc({s.m, s.k}, in, s.trans_a ? tag::ba : tag::ab);
    m_b_md = dnnl::memory::desc({s.k, s.n}, in, s.trans_b ? tag::ba : tag::ab);
    m_c_md = dnnl::memory::desc({s.m, s.n}, dt::f32, tag::ab);
    try {
      dnnl::matmul::desc d(m_a_md, m_b_md, m_c_md);
      m_pd = dnnl::matmul::primitive_desc(d, m_eng);
      m_prim = dnnl::matmul(m_pd);
    } catch (const dnnl::error& e) {
      throw input_error(fmt::format("oneDNN cannot run a {} matmul of {}x{}x{} here: {}",
                                    dtype_name(s.type), s.m, s.n, s.k, e.what()));
    }
  }
  void run(gemm_buffers& buf) override {
    dnnl::memory a(m_a_md, m_eng, const_cast<void*>(buf.a()));
    dnnl::memory b(m_b_md, m_eng, const_cast<void*>(buf.b()));
    dnnl::memory c(m_c_md, m_eng, buf.c.data());
    m_prim.execute(m_stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    m_stream.wait();
  }
  std::string implementation() const override {
    return fmt::format("oneDNN matmul {}", m_pd.impl_info_str());
  }

private:
  dnnl::engine m_eng;
  dnnl::stream m_stream;
  dnnl::memory::desc m_a_md, m_b_md, m_c_md;
  dnnl::matmul::primitive_desc m_pd;
  dnnl::matmul m_prim;
};

class openblas_gemm : public cpu_gemm {
public:
  explicit openblas_gemm(const gemm_shape& s) : m_s(s) {
    if (s.type == dtype::bf16 && !openblas_sbgemm())
      throw input_error("OpenBLAS in this build has no bfloat16 GEMM (cblas_sbgemm; Debian builds "
                        "it without BUILD_BFLOAT16): use library=onednn for bf16");
  }
  void run(gemm_buffers& buf) override {
    const auto& s = m_s;
    auto ta = s.trans_a ? CblasTrans : CblasNoTrans;
    auto tb = s.trans_b ? CblasTrans : CblasNoTrans;
    blasint lda = s.trans_a ? s.m : s.k, ldb = s.trans_b ? s.k : s.n;
    if (s.type == dtype::bf16)
      // OpenBLAS's bfloat16 GEMM (sbgemm): bf16 inputs, fp32 accumulation and output.
      openblas_sbgemm()(CblasRowMajor, ta, tb, s.m, s.n, s.k, 1.0f, buf.a16.data(), lda,
                        buf.b16.data(), ldb, 0.0f, buf.c.data(), s.n);
    else
      cblas_sgemm(CblasRowMajor, ta, tb, s.m, s.n, s.k, 1.0f, buf.a32.data(), lda, buf.b32.data(),
                  ldb, 0.0f, buf.c.data(), s.n);
  }
  std::string implementation() const override {
    return fmt::format("OpenBLAS cblas_{}gemm ({})", m_s.type == dtype::bf16 ? "sb" : "s",
                       openblas_get_corename());
  }

private:
  gemm_shape m_s;
};

} // namespace

std::unique_ptr<cpu_gemm> make_cpu_gemm(const std::string& library, const gemm_shape& s) {
  if (library == "onednn")
    return std::make_unique<onednn_gemm>(s);
  if (library == "openblas")
    return std::make_unique<openblas_gemm>(s);
  throw input_error(
      fmt::format("unknown library '{}' for gemm on cpu (choices: onednn, openblas)", library));
}

gemm_check check_gemm(const gemm_shape& s, const gemm_buffers& buf, int64_t points, uint64_t seed) {
  return check_gemm_output(
      s.m, s.n, s.k, [&](int64_t i, int64_t kk) { return buf.a_at(s, i, kk); },
      [&](int64_t kk, int64_t j) { return buf.b_at(s, kk, j); },
      [&](int64_t i, int64_t j) { return buf.c[size_t(i * s.n + j)]; }, cpu_error_model(s.type),
      points, seed);
}

std::string onednn_version() {
  auto v = dnnl_version();
  return fmt::format("{}.{}.{} ({})", v->major, v->minor, v->patch, v->hash ? v->hash : "");
}

std::string openblas_version() {
  std::string cfg = openblas_get_config();
  return cfg;
}

} // namespace accelbench::gemm
