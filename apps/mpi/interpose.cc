// The MPI functions liblanecast-mpi takes over, through MPI's standard
// profiling interface: each is defined here under its MPI_ name and calls
// MPI's own under the PMPI_ name. A program picks them up without a change
// - LD_PRELOAD, or the library linked before the MPI library - and calls
// every other MPI function as before (MPI_Ibcast among them: it passes
// through to MPI).
//
//   MPI_Init, MPI_Init_thread  MPI's, then the job's collective start (job.h)
//   MPI_Bcast                  carry.h
//   MPI_Finalize               not taken over: the attribute Job::start sets on
//                              MPI_COMM_SELF leaves every group first
#include <mpi.h>

#include "apps/mpi/carry.h"
#include "apps/mpi/job.h"
#include "lanecast/mpi.h"

// The library is built with hidden symbols: these are all it exports.
#define LANECAST_MPI_EXPORT __attribute__((visibility("default")))

extern "C" {

LANECAST_MPI_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) {
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    lanecast::mpi::Job::get().start(provided);
  }
  return rc;
}

LANECAST_MPI_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) lanecast::mpi::Job::get().start(*provided);
  return rc;
}

LANECAST_MPI_EXPORT int MPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return lanecast::mpi::bcast(buffer, count, datatype, root, comm);
}

LANECAST_MPI_EXPORT int lanecast_mpi_get_stats(lanecast_mpi_stats* out, size_t size) {
  if (out == nullptr) return -1;
  const lanecast_mpi_stats s = lanecast::mpi::Job::get().stats().read();
  __builtin_memcpy(out, &s, size < sizeof s ? size : sizeof s);
  return 0;
}

}  // extern "C"
