/* The reference for accelbench's collective workload: a minimal MPI_Allreduce loop in
 * C against the same Open MPI, timed as nccl-tests times it (a barrier, then ITERS back-to-back
 * all-reduces, the slowest rank's time). Prints one line per size:
 *   bytes  time_per_op_s  algbw_GBps  busbw_GBps
 * Usage: mpirun -np 2 mpi_allreduce_loop BYTES ITERS REPS [BYTES ITERS REPS ...]
 * fp32 sum, out of place, as `accelbench run collective --set dtype=fp32 --set inplace=0`. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  for (int a = 1; a + 2 < argc; a += 3) {
    long long bytes = atoll(argv[a]);
    int iters = atoi(argv[a + 1]), reps = atoi(argv[a + 2]);
    long long count = bytes / 4;
    float* send = malloc((size_t)count * 4);
    float* recv = malloc((size_t)count * 4);
    for (long long i = 0; i < count; ++i)
      send[i] = (float)(i % 5) - 2;
    memset(recv, 0, (size_t)count * 4);
    for (int w = 0; w < 2; ++w)
      MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double* t = malloc(sizeof(double) * (size_t)reps);
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i)
        MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double dt = (MPI_Wtime() - t0) / iters;
      MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      t[r] = dt;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp);
    double med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    double algbw = (double)(count * 4) / med / 1e9;
    if (rank == 0)
      printf("%lld %.6e %.4f %.4f\n", count * 4, med, algbw, algbw * 2.0 * (n - 1) / n);
    free(t);
    free(send);
    free(recv);
  }
  MPI_Finalize();
  return 0;
}
