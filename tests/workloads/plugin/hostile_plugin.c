/* A test plugin (include/accelbench/plugin.h) that ends its process or lies about its work on
 * purpose, chosen by the axis `how`:
 *   good        sums n floats (a well-behaved kernel)
 *   segv, abort its first run call writes through a null pointer / calls abort()
 *   exit0/exit3 its first run call calls exit(0) / exit(3)
 *   loop        its first run call never returns
 *   fail_first  its first run call returns an error
 *   nan_flops, neg_bytes, inf_items   its work callback reports that value
 *   stray       its setup forks a process that sleeps (in the worker's process group), then runs
 *               as good does
 * `pidfile` (not "-"): setup writes the pid of the process it runs in (stray: of the sleeper)
 * there, for the tests that check a process is gone. */
#include <accelbench/plugin.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct hostile_state {
  char how[32];
  int64_t n;
  float* x;
  float sum;
} hostile_state;

static const accelbench_plugin_axis k_axes[] = {
    {"how", "string", "good", "what the plugin does (see hostile_plugin.c)", 0},
    {"n", "integer", "4096", "floats summed per iteration", 1},
    {"pidfile", "string", "-", "where setup writes a pid (- for nowhere)", 0},
};

static int is(const hostile_state* s, const char* how) { return strcmp(s->how, how) == 0; }

static void write_pid(const char* path, pid_t pid) {
  FILE* f;
  if (strcmp(path, "-") == 0 || !(f = fopen(path, "w")))
    return;
  fprintf(f, "%ld\n", (long)pid);
  fclose(f);
}

static void hostile_teardown(void* state) {
  hostile_state* s = (hostile_state*)state;
  if (s)
    free(s->x);
  free(s);
}

static void* hostile_setup(const accelbench_plugin_config* cfg, uint64_t seed, char* err,
                           size_t err_size) {
  hostile_state* s = (hostile_state*)calloc(1, sizeof *s);
  const char* pidfile = accelbench_plugin_value(cfg, "pidfile");
  if (!s)
    return NULL;
  snprintf(s->how, sizeof s->how, "%s", accelbench_plugin_value(cfg, "how"));
  s->n = strtoll(accelbench_plugin_value(cfg, "n"), NULL, 10);
  s->x = (float*)malloc((size_t)s->n * sizeof(float));
  if (!s->x) {
    snprintf(err, err_size, "cannot allocate %lld floats", (long long)s->n);
    hostile_teardown(s);
    return NULL;
  }
  for (int64_t i = 0; i < s->n; ++i)
    s->x[i] = (float)((seed + (uint64_t)i) % 7);
  if (is(s, "stray")) {
    const pid_t child = fork();
    if (child == 0) {
      sleep(1000);
      _exit(0);
    }
    write_pid(pidfile, child);
  } else {
    write_pid(pidfile, getpid());
  }
  return s;
}

static void hostile_work(const void* state, accelbench_plugin_work* out) {
  const hostile_state* s = (const hostile_state*)state;
  out->flops = (double)s->n;
  out->bytes = 4.0 * (double)s->n;
  out->items = (double)s->n;
  if (is(s, "nan_flops"))
    out->flops = NAN;
  if (is(s, "neg_bytes"))
    out->bytes = -4378.0;
  if (is(s, "inf_items"))
    out->items = INFINITY;
}

static int hostile_run(void* state, int64_t iterations, void* stream, char* err, size_t err_size) {
  hostile_state* s = (hostile_state*)state;
  (void)stream;
  if (is(s, "segv")) {
    int* volatile nowhere = NULL; /* volatile: the compiler cannot drop the write */
    *nowhere = 1;
  }
  if (is(s, "abort"))
    abort();
  if (is(s, "exit0"))
    exit(0);
  if (is(s, "exit3"))
    exit(3);
  if (is(s, "loop"))
    for (volatile int spin = 1; spin;) {
    }
  if (is(s, "fail_first")) {
    snprintf(err, err_size, "refused on its first call");
    return 1;
  }
  for (int64_t it = 0; it < iterations; ++it) {
    float sum = 0;
    for (int64_t i = 0; i < s->n; ++i)
      sum += s->x[i];
    s->sum = sum;
  }
  return 0;
}

static const accelbench_plugin_v1 k_plugin = {
    {ACCELBENCH_PLUGIN_API_VERSION, sizeof(accelbench_plugin_v1)},
    "test.hostile",
    "a plugin that crashes, exits, hangs or lies on purpose (tests/workloads/plugin)",
    "cpu",
    "fp32",
    k_axes,
    sizeof k_axes / sizeof k_axes[0],
    NULL,
    hostile_setup,
    hostile_work,
    hostile_run,
    NULL,
    hostile_teardown,
};

ACCELBENCH_PLUGIN_EXPORT const accelbench_plugin_head* accelbench_plugin(void) {
  return &k_plugin.head;
}
