/* Many communicators at once, as an ordinary MPI program (nothing in it
 * knows of lanecast) for tests/mpi/mpi_shim_test.sh: 40 duplicates of
 * MPI_COMM_WORLD alive together, each broadcasting, more than one process
 * can give lanecast groups (DPDK opens at most 32 ports per process, and the
 * engine's memory is sized for a few groups). Communicators whose group
 * cannot form must fall back to MPI the same way on every rank - nobody
 * hangs - and every byte must still arrive. Then every communicator
 * broadcasts again (in the other order) and all are freed.
 *
 * prints "many_comms: rank R calls N ok" (or FAILED lines); exit 0 when every
 * byte matched on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define COMMS 40
#define BYTES 3000

static int check(MPI_Comm c, int root, int seed, int rank) {
  unsigned char got[BYTES], want[BYTES];
  for (int i = 0; i < BYTES; ++i) want[i] = (unsigned char)(seed * 131 + i * 7);
  if (rank == root) memcpy(got, want, BYTES);
  else memset(got, 0, BYTES);
  MPI_Bcast(got, BYTES, MPI_BYTE, root, c);
  return memcmp(got, want, BYTES) == 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm comms[COMMS];
  long calls = 0, bad = 0;
  for (int i = 0; i < COMMS; ++i) {
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
    bad += !check(comms[i], i % p, i, rank);
    ++calls;
  }
  for (int i = COMMS - 1; i >= 0; --i) {
    bad += !check(comms[i], (i + 1) % p, 1000 + i, rank);
    ++calls;
  }
  for (int i = 0; i < COMMS; ++i) MPI_Comm_free(&comms[i]);
  long all_bad = 0;
  MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  printf("many_comms: rank %d calls %ld %s\n", rank, calls, bad == 0 ? "ok" : "FAILED");
  fflush(stdout);
  MPI_Finalize();
  return all_bad == 0 ? 0 : 1;
}
