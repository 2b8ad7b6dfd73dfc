// A communicator's lanecast group: formed at the communicator's first
// broadcast that lanecast carries, cached in an attribute of the
// communicator (Job::comm_keyval()) whose delete callback leaves it -
// MPI_Comm_free, or MPI_Finalize for the built-in ones. MPI_Comm_dup does
// not copy it: the duplicate forms its own on its first broadcast.
//
// Forming is collective over the communicator, and every rank reaches the
// same outcome: a group id above every id its members used (an allreduce),
// the members' endpoint records moved by PMPI_Allgather (the engine's
// "exchange" bootstrap), then an allreduce of who failed. A rank that
// cannot join - its port refused, memory short - still takes part in every
// collective step, saying why; if any rank failed, every rank leaves what it
// made, and the communicator's broadcasts go to MPI for good. The lowest
// rank that failed prints one line naming the cause.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "lanecast/lanecast.h"

namespace lanecast::mpi {

struct CommGroup {
  std::unique_ptr<Group> group;
  std::string name;      // "MPI_COMM_WORLD (8 ranks)", or "a communicator of 4 ranks"
  bool refused = false;  // it could not form: the communicator's broadcasts go to MPI
  bool broken = false;   // a broadcast failed on it: every later one fails too (the error handler is called)
};

// `comm`'s group, formed now if this is its first broadcast (every rank of
// `comm` is then in the same MPI_Bcast call). `size` is comm's size (>= 2).
CommGroup& group_of(MPI_Comm comm, int size);
// Leaves the group (lingering until its peers are quiet); the record stays.
void leave(CommGroup& g);
// "MPI_COMM_WORLD (8 ranks): rx_frames=1200 ...; port rx_frames=... rx_missed=...":
// the member's counters that are not zero, and its port's.
std::string group_counters(const CommGroup& g);
// The attribute's delete callback (MPI_Comm_delete_attr_function).
int delete_comm_group(MPI_Comm comm, int keyval, void* value, void* extra);

}  // namespace lanecast::mpi
