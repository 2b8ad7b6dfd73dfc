/* MPI_Bcast timed as osu_bcast times it, for the side-by-side comparison in
 * tests/bench/mpi_vs_lanecast.sh: a barrier before each broadcast, each
 * rank's own time from entering to leaving MPI_Bcast, and per size the
 * largest of the ranks' averages. The root's bytes are a pattern every rank
 * checks, so a broken run cannot pass for a fast one.
 *
 * usage: mpirun ... mpi_bcast ITERS WARMUP SIZE [SIZE ...]   (sizes in bytes)
 * prints: "mpi size=S iters=K avg_us=A min_us=M MBps=B verified=yes|NO" per size
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(uint64_t size, int it, uint64_t i) {
  return (unsigned char)((i * 131u + size * 7u + (uint64_t)it * 29u) >> 3);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (argc < 4) {
    if (rank == 0) fprintf(stderr, "usage: mpi_bcast ITERS WARMUP SIZE [SIZE ...]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int iters = atoi(argv[1]), warmup = atoi(argv[2]);
  uint64_t max = 1;
  for (int a = 3; a < argc; ++a)
    if (strtoull(argv[a], NULL, 10) > max) max = strtoull(argv[a], NULL, 10);
  unsigned char* buf = malloc(max);
  if (buf == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  for (int a = 3; a < argc; ++a) {
    const uint64_t size = strtoull(argv[a], NULL, 10);
    double sum = 0, mn = 1e300;
    long bad = 0;
    for (int it = 0; it < warmup + iters; ++it) {
      for (uint64_t i = 0; i < size; ++i) buf[i] = rank == 0 ? pattern(size, it, i) : 0xEE;
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
      const double us = (MPI_Wtime() - t0) * 1e6;
      for (uint64_t i = 0; i < size && rank != 0; ++i)
        if (buf[i] != pattern(size, it, i)) {
          ++bad;
          break;
        }
      if (it < warmup) continue;
      sum += us;
      if (us < mn) mn = us;
    }
    double avg = sum / (iters > 0 ? iters : 1), worst = 0, best = 0;
    long bad_all = 0;
    MPI_Reduce(&avg, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mn, &best, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      printf("mpi size=%llu iters=%d avg_us=%.1f min_us=%.1f MBps=%.2f verified=%s\n", (unsigned long long)size, iters,
             worst, best, worst > 0 ? size / worst : 0.0, bad_all == 0 ? "yes" : "NO");
      fflush(stdout);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
