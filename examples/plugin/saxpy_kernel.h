/* The example kernel, fp32 SAXPY z = a * x + y, shared by the example plugin (saxpy_plugin.c) and
 * the overhead benchmark (bench/plugin), which links it directly: the same code on both sides. */
#ifndef ACCELBENCH_EXAMPLE_SAXPY_KERNEL_H
#define ACCELBENCH_EXAMPLE_SAXPY_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void example_saxpy(int64_t n, float a, const float* x, const float* y, float* z);

#ifdef __cplusplus
}
#endif

#endif
