// MPI_Bcast's body: a broadcast lanecast carries, or one passed to
// PMPI_Bcast - decided only by what every rank of the communicator knows
// alike, so no rank can go one way while another goes the other:
//
//   lanecast off for the job (the verdict of MPI_Init)     -> MPI
//   an intercommunicator, one rank, or arguments MPI must
//   refuse (a null communicator or datatype, a bad root)  -> MPI (it reports the error)
//   count x type size below LANECAST_MPI_MIN_BYTES         -> MPI
//   the communicator's group could not form                -> MPI
//   otherwise                                              -> lanecast
//
// Never this rank's datatype: ranks may pass different datatypes for the
// same bytes (layout.h lays them out). Broadcasts larger than the group's
// message limit go as several lanecast broadcasts, two in flight.
#pragma once

#include <mpi.h>

namespace lanecast::mpi {

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm);

}  // namespace lanecast::mpi
