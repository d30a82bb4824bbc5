#include "saxpy_kernel.h"

void example_saxpy(int64_t n, float a, const float* x, const float* y, float* z) {
  for (int64_t i = 0; i < n; ++i)
    z[i] = a * x[i] + y[i];
}
