/* An example accelbench plugin (include/accelbench/plugin.h): fp32 SAXPY z = a * x + y on the CPU.
 *
 *   accelbench run --plugin ./libaccelbench_example_saxpy.so example.saxpy --set n=1048576
 *
 * The EXAMPLE_* macros build the broken variants the tests refuse (examples/plugin/CMakeLists.txt);
 * a real plugin has none of them. */
#include <accelbench/plugin.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "saxpy_kernel.h"

#ifndef EXAMPLE_API_VERSION
#define EXAMPLE_API_VERSION ACCELBENCH_PLUGIN_API_VERSION
#endif
#ifndef EXAMPLE_N_TYPE
#define EXAMPLE_N_TYPE "integer"
#endif

typedef struct saxpy_state {
  int64_t n;
  float a;
  float *x, *y, *z;
} saxpy_state;

static const accelbench_plugin_axis k_axes[] = {
    {"n", EXAMPLE_N_TYPE, "1048576", "elements of x, y and z", 1},
    {"a", "number", "2.5", "the scalar a", 0},
};

static int parse_config(const accelbench_plugin_config* cfg, int64_t* n, float* a, char* err,
                        size_t err_size) {
  const char* nv = accelbench_plugin_value(cfg, "n");
  const char* av = accelbench_plugin_value(cfg, "a");
  if (!nv || !av) {
    snprintf(err, err_size, "n and a are required");
    return 1;
  }
  *n = strtoll(nv, NULL, 10);
  *a = strtof(av, NULL);
  return 0;
}

static int saxpy_validate(const accelbench_plugin_config* cfg, char* err, size_t err_size) {
  int64_t n = 0;
  float a = 0;
  if (parse_config(cfg, &n, &a, err, err_size))
    return 1;
  if (n > ((int64_t)1 << 30)) {
    snprintf(err, err_size, "parameter n = %lld is more than 2^30 elements", (long long)n);
    return 1;
  }
  if (!isfinite(a)) {
    snprintf(err, err_size, "parameter a = %s is not finite", accelbench_plugin_value(cfg, "a"));
    return 1;
  }
  return 0;
}

/* A small counter-based generator: the same seed gives the same inputs. */
static float input_value(uint64_t seed, uint64_t i) {
  uint64_t v = (seed ^ (i * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
  v ^= v >> 31;
  return (float)((double)(v >> 40) / (double)(1ull << 24)) - 0.5f;
}

static void saxpy_teardown(void* state) {
  saxpy_state* s = (saxpy_state*)state;
  if (!s)
    return;
  free(s->x);
  free(s->y);
  free(s->z);
  free(s);
}

static void* saxpy_setup(const accelbench_plugin_config* cfg, uint64_t seed, char* err,
                         size_t err_size) {
  saxpy_state* s = (saxpy_state*)calloc(1, sizeof *s);
  if (!s || parse_config(cfg, &s->n, &s->a, err, err_size)) {
    free(s);
    return NULL;
  }
  s->x = (float*)malloc((size_t)s->n * sizeof(float));
  s->y = (float*)malloc((size_t)s->n * sizeof(float));
  s->z = (float*)calloc((size_t)s->n, sizeof(float));
  if (!s->x || !s->y || !s->z) {
    snprintf(err, err_size, "cannot allocate 3 x %lld floats", (long long)s->n);
    saxpy_teardown(s);
    return NULL;
  }
  for (int64_t i = 0; i < s->n; ++i) {
    s->x[i] = input_value(seed, (uint64_t)(2 * i));
    s->y[i] = input_value(seed, (uint64_t)(2 * i + 1));
  }
  return s;
}

static void saxpy_work(const void* state, accelbench_plugin_work* out) {
  const saxpy_state* s = (const saxpy_state*)state;
  out->flops = 2.0 * (double)s->n;
  out->bytes = 3.0 * sizeof(float) * (double)s->n;
  out->items = (double)s->n;
}

static int saxpy_run(void* state, int64_t iterations, void* stream, char* err, size_t err_size) {
  saxpy_state* s = (saxpy_state*)state;
  for (int64_t it = 0; it < iterations; ++it)
    example_saxpy(s->n, s->a, s->x, s->y, s->z);
#ifdef EXAMPLE_WRONG_RESULT
  s->z[s->n / 2] += 1.0f;
#endif
#ifdef EXAMPLE_RUN_FAILS
  snprintf(err, err_size, "the example was built to fail");
  return 1;
#endif
  return 0;
}

static int saxpy_check(void* state, char* err, size_t err_size) {
  const saxpy_state* s = (const saxpy_state*)state;
  for (int64_t i = 0; i < s->n; ++i) {
    const double want = (double)s->a * s->x[i] + s->y[i];
    if (fabs(s->z[i] - want) > 1e-6 * (fabs(want) + 1.0)) {
      snprintf(err, err_size, "z[%lld] = %g, expected %g", (long long)i, s->z[i], want);
      return 1;
    }
  }
  return 0;
}

static const accelbench_plugin_v1 k_plugin = {
    {EXAMPLE_API_VERSION, sizeof(accelbench_plugin_v1)},
    "example.saxpy",
    "fp32 SAXPY z = a * x + y (example plugin)",
    "cpu",
    "fp32",
    k_axes,
    sizeof k_axes / sizeof k_axes[0],
    saxpy_validate,
    saxpy_setup,
    saxpy_work,
    saxpy_run,
    saxpy_check,
    saxpy_teardown,
};

#ifndef EXAMPLE_NO_ENTRY
ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_head* accelbench_plugin(void) {
  return &k_plugin.head;
}
#else
ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_head* accelbench_plugin_misspelt(void) {
  return &k_plugin.head;
}
#endif
