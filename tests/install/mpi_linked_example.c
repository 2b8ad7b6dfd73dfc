/* An MPI program linked with the installed liblanecast-mpi before MPI's own
 * library (the other way to use it than LD_PRELOAD): its MPI_Init and
 * MPI_Bcast are lanecast's, and lanecast/mpi.h reads what they did. Run as
 * one rank, lanecast has no peer to carry to: the broadcast goes to MPI,
 * counted as such. tests/install/run.sh builds it against a staged install. */
#include <lanecast/mpi.h>
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int value = 42;
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  lanecast_mpi_stats s;
  const int rc = lanecast_mpi_get_stats(&s, sizeof s);
  printf("mpi_linked_example: value %d, carried %llu, fell back %llu (off %llu)\n", value,
         (unsigned long long)s.carried, (unsigned long long)s.fell_back, (unsigned long long)s.fell_back_off);
  MPI_Finalize();
  return rc == 0 && value == 42 && s.carried == 0 && s.fell_back == 1 && s.fell_back_off == 1 ? 0 : 1;
}
