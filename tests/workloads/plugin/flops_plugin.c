/* A test plugin (include/accelbench/plugin.h) whose work per iteration is what its `flops` axis
 * says, read with strtod: a finite count so large (1e308) that TFLOP/s overflow, beside the "nan"
 * that the plugin workload refuses before measuring. Its kernel is a short loop on the CPU; it
 * names no dtype, so no peak is probed. */
#include <accelbench/plugin.h>

#include <stdio.h>
#include <stdlib.h>

typedef struct flops_state {
  double flops;
  volatile double sink;
} flops_state;

static const accelbench_plugin_axis k_axes[] = {
    {"flops", "string", "1e6", "the FLOPs per iteration the plugin reports (strtod)", 0},
};

static void* flops_setup(const accelbench_plugin_config* cfg, uint64_t seed, char* err,
                         size_t err_size) {
  const char* v = accelbench_plugin_value(cfg, "flops");
  flops_state* s = (flops_state*)calloc(1, sizeof *s);
  if (!s || !v) {
    snprintf(err, err_size, "cannot set up");
    free(s);
    return NULL;
  }
  s->flops = strtod(v, NULL);
  s->sink = (double)(seed & 1u);
  return s;
}

static void flops_work(const void* state, accelbench_plugin_work* out) {
  out->flops = ((const flops_state*)state)->flops;
  out->bytes = 0;
  out->items = 0;
}

static int flops_run(void* state, int64_t iterations, void* stream, char* err, size_t err_size) {
  flops_state* s = (flops_state*)state;
  for (int64_t it = 0; it < iterations; ++it)
    for (int i = 0; i < 1000; ++i)
      s->sink = s->sink * 0.5 + 1.0;
  return 0;
}

static void flops_teardown(void* state) { free(state); }

static const accelbench_plugin_v1 k_plugin = {
    {ACCELBENCH_PLUGIN_API_VERSION, sizeof(accelbench_plugin_v1)},
    "test.flops",
    "a loop that reports the FLOPs its axis names (test plugin)",
    "cpu",
    NULL,
    k_axes,
    sizeof k_axes / sizeof k_axes[0],
    NULL,
    flops_setup,
    flops_work,
    flops_run,
    NULL,
    flops_teardown,
};

ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_head* accelbench_plugin(void) {
  return &k_plugin.head;
}
