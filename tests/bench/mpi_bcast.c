/* MPI_Bcast timed as osu_bcast times it, for the side-by-side comparison in
 * tests/bench/mpi_vs_lanecast.sh: a barrier before each broadcast, each
 * rank's own time from entering to leaving MPI_Bcast, and per size the
 * largest of the ranks' averages. The root's bytes are a pattern every rank
 * checks, so a broken run cannot pass for a fast one.
 *
 * Beside it span_us, as lanecast's bench gives it: per iteration, from the
 * root entering MPI_Bcast to the last rank leaving it, on CLOCK_MONOTONIC (one
 * clock for every process of a host: the namespaces testbed), averaged. The
 * osu figure misses the ranks' skew - a rank that left the barrier late times
 * only the end of a broadcast that started without it - and the span does not.
 *
 * The barrier is MPI_Barrier, or with MPI_BCAST_BARRIER=bcast in the
 * environment a 1-byte MPI_Bcast rooted at each rank in turn - the barrier
 * `lanecast bench` makes of its own broadcasts (apps/bench/group_exchange.cc),
 * so that a run through liblanecast-mpi and lanecast's own bench leave the
 * barrier alike (tests/bench/mpi_shim.sh).
 *
 * usage: mpirun ... mpi_bcast ITERS WARMUP SIZE [SIZE ...]   (sizes in bytes)
 * prints: "mpi size=S iters=K avg_us=A min_us=M MBps=B span_us=P verified=yes|NO" per size
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double host_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The pattern of (size, iteration): xorshift64, 8 bytes a step - the same
 * cost per byte as lanecast's bench pays for its own check (apps/common/
 * pattern.cc), so neither side's timing carries a heavier check than the
 * other's. A byte at a time (a multiply per byte) it was 8% of both CPUs'
 * samples in an 8 MiB run, and a rank that leaves the broadcast early
 * refills or checks while the others still receive. */
static uint64_t pattern_start(uint64_t size, int it) {
  return (size * 31u + (uint64_t)it) * 0x9E3779B97F4A7C15ull + 1;
}
static uint64_t pattern_next(uint64_t x) {
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
}
static void fill(unsigned char* b, uint64_t size, int it) {
  uint64_t x = pattern_start(size, it), i = 0;
  for (; i + 8 <= size; i += 8) {
    x = pattern_next(x);
    memcpy(b + i, &x, 8);
  }
  x = pattern_next(x);
  if (i < size) memcpy(b + i, &x, size - i);
}
/* 1 when b holds the pattern of (size, it) */
static int holds(const unsigned char* b, uint64_t size, int it) {
  uint64_t x = pattern_start(size, it), i = 0;
  for (; i + 8 <= size; i += 8) {
    x = pattern_next(x);
    if (memcmp(b + i, &x, 8) != 0) return 0;
  }
  x = pattern_next(x);
  return i == size || memcmp(b + i, &x, size - i) == 0;
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
  const char* barrier = getenv("MPI_BCAST_BARRIER");
  const int bcast_barrier = barrier != NULL && strcmp(barrier, "bcast") == 0;
  uint64_t max = 1;
  for (int a = 3; a < argc; ++a)
    if (strtoull(argv[a], NULL, 10) > max) max = strtoull(argv[a], NULL, 10);
  unsigned char* buf = malloc(max);
  /* per timed iteration: the root's entry, everyone else's exit */
  double* mark = malloc(sizeof(double) * (iters > 0 ? iters : 1));
  double* marks = rank == 0 ? malloc(sizeof(double) * (iters > 0 ? iters : 1) * nprocs) : NULL;
  if (buf == NULL || mark == NULL || (rank == 0 && marks == NULL)) MPI_Abort(MPI_COMM_WORLD, 3);
  for (int a = 3; a < argc; ++a) {
    const uint64_t size = strtoull(argv[a], NULL, 10);
    double sum = 0, mn = 1e300;
    long bad = 0;
    for (int it = 0; it < warmup + iters; ++it) {
      if (rank == 0) fill(buf, size, it);
      else memset(buf, 0xEE, size);
      if (bcast_barrier) {
        static char token;
        for (int r = 0; r < nprocs; ++r) MPI_Bcast(&token, 1, MPI_CHAR, r, MPI_COMM_WORLD);
      } else {
        MPI_Barrier(MPI_COMM_WORLD);
      }
      const double t0 = MPI_Wtime(), entry = host_us();
      MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
      const double us = (MPI_Wtime() - t0) * 1e6, exit_us = host_us();
      if (rank != 0 && !holds(buf, size, it)) ++bad;
      if (it < warmup) continue;
      mark[it - warmup] = rank == 0 ? entry : exit_us;
      sum += us;
      if (us < mn) mn = us;
    }
    double avg = sum / (iters > 0 ? iters : 1), worst = 0, best = 0;
    long bad_all = 0;
    MPI_Reduce(&avg, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&mn, &best, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&bad, &bad_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Gather(mark, iters, MPI_DOUBLE, marks, iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double span = 0;
      for (int it = 0; it < iters; ++it) {
        double last = marks[it];
        for (int r = 1; r < nprocs; ++r)
          if (marks[r * iters + it] > last) last = marks[r * iters + it];
        span += last - marks[it];
      }
      span /= iters > 0 ? iters : 1;
      printf("mpi size=%llu iters=%d avg_us=%.1f min_us=%.1f MBps=%.2f span_us=%.1f verified=%s\n",
             (unsigned long long)size, iters, worst, best, worst > 0 ? size / worst : 0.0, span,
             bad_all == 0 ? "yes" : "NO");
      fflush(stdout);
    }
  }
  free(buf);
  free(mark);
  free(marks);
  MPI_Finalize();
  return 0;
}
