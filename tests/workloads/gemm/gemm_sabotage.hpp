#pragma once
// Wrong GEMM outputs for the correctness-check tests of the CPU and CUDA backends: made from the
// real kernel's output and the operands it read, they are what a broken kernel would write.
// Also the "before/after" verdict table: the old flat tolerances on |c - ref| / sum|ab| against
// the error bound of workloads/gemm/gemm_tolerance.hpp.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "workloads/gemm/gemm_tolerance.hpp"

namespace accelbench::gemm::testing {

enum class sabotage { none, unrelated, half_k, eighth_k };
inline const std::vector<sabotage> all_sabotages = {sabotage::none, sabotage::unrelated,
                                                    sabotage::half_k, sabotage::eighth_k};

inline const char* name_of(sabotage s) {
  switch (s) {
  case sabotage::none:
    return "real kernel";
  case sabotage::unrelated:
    return "unrelated output";
  case sabotage::half_k:
    return "half of K missing";
  case sabotage::eighth_k:
    return "1/8 of K missing";
  }
  return "?";
}

// c (row-major M x N) as the sabotaged kernel would write it. unrelated: each element is another
// column's result (right magnitude, wrong value); half_k / eighth_k: the kernel's own result minus
// the products of the last half / eighth of K (a kernel that stops early).
template <class A, class B>
void apply_sabotage(sabotage s, int64_t m, int64_t n, int64_t k, const A& a_at, const B& b_at,
                    std::vector<float>& c) {
  if (s == sabotage::none)
    return;
  if (s == sabotage::unrelated) {
    const std::vector<float> orig = c;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[size_t(i * n + j)] =
            n > 1 ? orig[size_t(i * n + (j + 1) % n)] : orig[size_t(((i + 1) % m) * n)];
    return;
  }
  const int64_t from = s == sabotage::half_k ? k / 2 : k - k / 8;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double dropped = 0;
      for (int64_t kk = from; kk < k; ++kk)
        dropped += double(a_at(i, kk)) * double(b_at(kk, j));
      c[size_t(i * n + j)] = float(double(c[size_t(i * n + j)]) - dropped);
    }
}

// The flat tolerances the checks used before the error bound: the kernel rulesets' per-dtype
// values on the CPU (a backend label starting "cpu"); on CUDA the same capped at 1e-2.
inline double old_flat_tolerance(const std::string& backend, const std::string& dtype) {
  double t = 0;
  if (dtype == "fp32")
    t = 1e-4;
  else if (dtype == "tf32" || dtype == "fp16")
    t = 5e-3;
  else if (dtype == "bf16")
    t = 2e-2;
  else if (dtype == "fp8_e4m3" || dtype == "mxfp8")
    t = 1e-1;
  else if (dtype == "fp8_e5m2")
    t = 2e-1;
  else if (dtype == "nvfp4")
    t = 3e-1;
  return backend.rfind("cpu", 0) == 0 ? t : std::min(t, 1e-2);
}

struct verdict_row {
  std::string backend, dtype;
  int64_t k = 0;
  sabotage what = sabotage::none;
  double normalised = 0, old_tolerance = 0, ratio = 0;
  bool old_valid() const { return normalised <= old_tolerance; }
  bool new_valid() const { return ratio <= 1.0; }
};

inline verdict_row make_row(const std::string& backend, const std::string& dtype, int64_t k,
                            sabotage what, const gemm_check& chk) {
  return {backend,      dtype, k, what, chk.max_normalised, old_flat_tolerance(backend, dtype),
          chk.max_ratio};
}

// Markdown, so it can go into a report as it is.
inline void print_table(const char* title, const std::vector<verdict_row>& rows) {
  std::printf("\n%s\n\n", title);
  std::printf(
      "| backend | dtype | K | output | max |c-ref|/sum|ab| | old flat tolerance | old verdict "
      "| max |c-ref|/bound | new verdict |\n|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %s | %lld | %s | %.2e | %.0e | %s | %.3g | %s |\n", r.backend.c_str(),
                r.dtype.c_str(), (long long)r.k, name_of(r.what), r.normalised, r.old_tolerance,
                r.old_valid() ? "VALID" : "INVALID", r.ratio, r.new_valid() ? "VALID" : "INVALID");
  std::fflush(stdout);
}

} // namespace accelbench::gemm::testing
