/* accelbench plugin interface: a workload in a shared library, timed in process by accelbench's
 * own measurement (warm-up, steadiness, cache flush, samples) as its built-in kernels are.
 *
 *   accelbench run --plugin ./libmine.so NAME --set KEY=VALUE ...
 *
 * The library exports one C symbol, ACCELBENCH_PLUGIN_ENTRY ("accelbench_plugin"), a function
 * returning a pointer to a static accelbench_plugin_v1. Its first member is the interface version:
 * accelbench reads that member alone (as accelbench_plugin_head) and refuses the plugin when it is
 * not ACCELBENCH_PLUGIN_API_VERSION, before any other field is read. A later version that changes
 * the layout raises the version; the name of the entry symbol never changes.
 *
 * Strings are UTF-8 and must stay valid while the library is loaded. Functions that can fail write
 * one line (no newline) into `err` (at most err_size bytes with the terminating NUL) and return
 * non-zero. See docs/plugins.md and examples/plugin/. */
#ifndef ACCELBENCH_PLUGIN_H
#define ACCELBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ACCELBENCH_PLUGIN_API_VERSION 1
#define ACCELBENCH_PLUGIN_ENTRY "accelbench_plugin"

#ifdef __cplusplus
#define ACCELBENCH_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
extern "C" {
#else
#define ACCELBENCH_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* What every version starts with: the one part accelbench reads before the version is known. */
typedef struct accelbench_plugin_head {
  uint32_t api_version; /* ACCELBENCH_PLUGIN_API_VERSION of the header the plugin was built with */
  uint32_t struct_size; /* sizeof the whole struct (accelbench_plugin_v1 for version 1) */
} accelbench_plugin_head;

/* One parameter axis. type: "integer", "number", "string" or "boolean". */
typedef struct accelbench_plugin_axis {
  const char* name; /* [A-Za-z_][A-Za-z0-9_]* */
  const char* type;
  const char* default_value; /* NULL or "": the axis must be set (--set NAME=VALUE) */
  const char* description;   /* may be NULL */
  int64_t min_int;           /* integers: the smallest allowed value */
} accelbench_plugin_axis;

/* One resolved config: every axis, by name, as text (integers in decimal, booleans 0 or 1). */
typedef struct accelbench_plugin_config {
  size_t count;
  const char* const* names;
  const char* const* values;
} accelbench_plugin_config;

/* The work of one iteration, for the metrics (TFLOP/s, GB/s, items/s); 0: not counted. */
typedef struct accelbench_plugin_work {
  double flops;
  double bytes;
  double items;
} accelbench_plugin_work;

typedef struct accelbench_plugin_v1 {
  accelbench_plugin_head head; /* {ACCELBENCH_PLUGIN_API_VERSION, sizeof(accelbench_plugin_v1)} */
  const char* name;            /* the workload name: [a-z0-9_.-]+, not a built-in one */
  const char* description;
  const char* device; /* "cpu" (host-timed) or "cuda" (timed with CUDA events) */
  const char* dtype;  /* "fp32", "bf16", ...: the CPU peak's dtype; NULL: no % of peak */
  const accelbench_plugin_axis* axes;
  size_t axis_count;

  /* Optional (NULL): cross-axis rules, before anything runs; non-zero refuses the config. */
  int (*validate)(const accelbench_plugin_config* cfg, char* err, size_t err_size);
  /* Allocates and fills the inputs for one config; NULL (with err) when it cannot. `seed` is the
   * run's seed mixed with the config key: the same config gets the same inputs. */
  void* (*setup)(const accelbench_plugin_config* cfg, uint64_t seed, char* err, size_t err_size);
  /* The work of one iteration of this state. */
  void (*work)(const void* state, accelbench_plugin_work* out);
  /* Runs `iterations` iterations back to back. cpu: on the calling thread, returning when done
   * (`stream` is NULL). cuda: enqueued on `stream` (a cudaStream_t), without synchronising. */
  int (*run)(void* state, int64_t iterations, void* stream, char* err, size_t err_size);
  /* Optional (NULL): checks the outputs after the samples; non-zero: wrong (the run is INVALID,
   * err says why). */
  int (*check)(void* state, char* err, size_t err_size);
  void (*teardown)(void* state);
} accelbench_plugin_v1;

/* The entry symbol's type: `ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_v1*
 * accelbench_plugin(void) { return &my_plugin; }` */
typedef const accelbench_plugin_head* (*accelbench_plugin_entry_fn)(void);

/* The value of axis `name` in `cfg`, or NULL. */
static inline const char* accelbench_plugin_value(const accelbench_plugin_config* cfg,
                                                  const char* name) {
  for (size_t i = 0; i < cfg->count; ++i)
    if (strcmp(cfg->names[i], name) == 0)
      return cfg->values[i];
  return NULL;
}

#ifdef __cplusplus
}
#endif

#endif /* ACCELBENCH_PLUGIN_H */
