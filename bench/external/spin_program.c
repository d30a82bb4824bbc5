/* The external program of bench_external: spins for W microseconds per sample, N samples, and
 * reports each sample's own time on the results protocol when ACCELBENCH_RESULTS_FD is set (else
 * with a third argument "quiet") says nothing, to be timed as a whole process.
 * Usage: spin_program N W [quiet] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1;
  const double w = (argc > 2 ? atof(argv[2]) : 1000.0) * 1e-6;
  const char* fd = getenv("ACCELBENCH_RESULTS_FD");
  const int quiet = argc > 3;
  FILE* out = fd && !quiet ? fdopen(atoi(fd), "w") : NULL;
  for (int i = 0; i < n; ++i) {
    const double t0 = now_s();
    double t = t0;
    while (t - t0 < w)
      t = now_s();
    if (out) {
      fprintf(out, "{\"sample\": {\"seconds\": %.9g}}\n", t - t0);
      fflush(out);
    }
  }
  return 0;
}
