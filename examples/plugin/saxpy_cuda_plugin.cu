/* An example accelbench plugin on CUDA (include/accelbench/plugin.h): fp32 SAXPY z = a * x + y,
 * enqueued on the stream accelbench times with CUDA events.
 *
 *   accelbench run --plugin ./libaccelbench_example_saxpy_cuda.so example.saxpy_cuda \
 *       --backend cuda --set n=16777216 */
#include <accelbench/plugin.h>

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct saxpy_state {
  int64_t n = 0;
  float a = 0;
  float *x = nullptr, *y = nullptr, *z = nullptr;
};

const accelbench_plugin_axis k_axes[] = {
    {"n", "integer", "16777216", "elements of x, y and z", 1},
    {"a", "number", "2.5", "the scalar a", 0},
};

__global__ void saxpy_kernel(int64_t n, float a, const float* x, const float* y, float* z) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    z[i] = a * x[i] + y[i];
}

bool failed(cudaError_t e, const char* what, char* err, size_t err_size) {
  if (e == cudaSuccess)
    return false;
  std::snprintf(err, err_size, "%s: %s", what, cudaGetErrorString(e));
  return true;
}

float input_value(uint64_t seed, uint64_t i) {
  uint64_t v = (seed ^ (i * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  v ^= v >> 31;
  return (float)((double)(v >> 40) / (double)(1ull << 24)) - 0.5f;
}

void saxpy_teardown(void* state) {
  auto* s = static_cast<saxpy_state*>(state);
  cudaFree(s->x);
  cudaFree(s->y);
  cudaFree(s->z);
  delete s;
}

bool fill_inputs(saxpy_state& s, uint64_t seed, char* err, size_t err_size) {
  std::vector<float> hx(s.n), hy(s.n);
  for (int64_t i = 0; i < s.n; ++i) {
    hx[i] = input_value(seed, (uint64_t)(2 * i));
    hy[i] = input_value(seed, (uint64_t)(2 * i + 1));
  }
  const size_t bytes = (size_t)s.n * sizeof(float);
  return !failed(cudaMemcpy(s.x, hx.data(), bytes, cudaMemcpyHostToDevice), "copy x", err,
                 err_size) &&
         !failed(cudaMemcpy(s.y, hy.data(), bytes, cudaMemcpyHostToDevice), "copy y", err,
                 err_size);
}

void* saxpy_setup(const accelbench_plugin_config* cfg, uint64_t seed, char* err, size_t err_size) {
  auto* s = new saxpy_state;
  s->n = std::strtoll(accelbench_plugin_value(cfg, "n"), nullptr, 10);
  s->a = std::strtof(accelbench_plugin_value(cfg, "a"), nullptr);
  const size_t bytes = (size_t)s->n * sizeof(float);
  if (failed(cudaMalloc(&s->x, bytes), "cudaMalloc x", err, err_size) ||
      failed(cudaMalloc(&s->y, bytes), "cudaMalloc y", err, err_size) ||
      failed(cudaMalloc(&s->z, bytes), "cudaMalloc z", err, err_size) ||
      !fill_inputs(*s, seed, err, err_size)) {
    saxpy_teardown(s);
    return nullptr;
  }
  return s;
}

void saxpy_work(const void* state, accelbench_plugin_work* out) {
  const auto* s = static_cast<const saxpy_state*>(state);
  out->flops = 2.0 * (double)s->n;
  out->bytes = 3.0 * sizeof(float) * (double)s->n;
  out->items = (double)s->n;
}

int saxpy_run(void* state, int64_t iterations, void* stream, char* err, size_t err_size) {
  auto* s = static_cast<saxpy_state*>(state);
  const int threads = 256;
  const auto blocks = (unsigned)((s->n + threads - 1) / threads);
  for (int64_t it = 0; it < iterations; ++it)
    saxpy_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(s->n, s->a, s->x, s->y,
                                                                            s->z);
  return failed(cudaGetLastError(), "saxpy launch", err, err_size) ? 1 : 0;
}

int saxpy_check(void* state, char* err, size_t err_size) {
  auto* s = static_cast<saxpy_state*>(state);
  std::vector<float> x(s->n), y(s->n), z(s->n);
  const size_t bytes = (size_t)s->n * sizeof(float);
  if (failed(cudaMemcpy(x.data(), s->x, bytes, cudaMemcpyDeviceToHost), "copy x", err, err_size) ||
      failed(cudaMemcpy(y.data(), s->y, bytes, cudaMemcpyDeviceToHost), "copy y", err, err_size) ||
      failed(cudaMemcpy(z.data(), s->z, bytes, cudaMemcpyDeviceToHost), "copy z", err, err_size))
    return 1;
  for (int64_t i = 0; i < s->n; ++i) {
    const double want = (double)s->a * x[i] + y[i];
    if (std::fabs(z[i] - want) > 1e-6 * (std::fabs(want) + 1.0)) {
      std::snprintf(err, err_size, "z[%lld] = %g, expected %g", (long long)i, z[i], want);
      return 1;
    }
  }
  return 0;
}

const accelbench_plugin_v1 k_plugin = {
    {ACCELBENCH_PLUGIN_API_VERSION, sizeof(accelbench_plugin_v1)},
    "example.saxpy_cuda",
    "fp32 SAXPY z = a * x + y on CUDA (example plugin)",
    "cuda",
    "fp32",
    k_axes,
    sizeof k_axes / sizeof k_axes[0],
    nullptr,
    saxpy_setup,
    saxpy_work,
    saxpy_run,
    saxpy_check,
    saxpy_teardown,
};

} // namespace

ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_head* accelbench_plugin(void) {
  return &k_plugin.head;
}
