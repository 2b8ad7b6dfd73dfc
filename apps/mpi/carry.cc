#include "apps/mpi/carry.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "apps/mpi/comm_group.h"
#include "apps/mpi/job.h"
#include "apps/mpi/layout.h"

namespace lanecast::mpi {
namespace {

int to_mpi(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm, std::atomic<uint64_t>& reason) {
  Stats::add(reason);
  return PMPI_Bcast(buffer, count, type, root, comm);
}

// A failed lanecast broadcast cannot be finished by MPI (the other ranks
// may hold the message already, or wait in lanecast): it is an error of the
// communicator, reported as MPI reports its own - through its handler,
// fatal unless the program chose otherwise.
int fail(CommGroup& g, MPI_Comm comm, const std::string& why) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!g.broken) say("rank " + std::to_string(rank) + ": MPI_Bcast on " + g.name + " failed: " + why);
  g.broken = true;
  PMPI_Comm_call_errhandler(comm, MPI_ERR_OTHER);
  return MPI_ERR_OTHER;
}

// The bytes through the group, in pieces of at most its message limit, the
// next posted before the last is waited for (the engine starts it the
// moment the last ends). Each piece is waited for as MPI_Bcast returns:
// until this rank is done with its buffer (Completion::wait_local) - the
// root need not wait for the acks of frames that left, a rank for the acks
// of what it forwarded; the engine finishes them. "" or why it failed.
std::string carry(Group& group, int root, std::byte* data, uint64_t bytes, uint64_t limit) {
  std::array<Completion, 2> in_flight;
  const uint64_t pieces = bytes == 0 ? 1 : (bytes + limit - 1) / limit;
  std::string why;
  const auto await = [&](Completion& c) {
    const Status s = c.wait_local();
    if (!s.ok() && why.empty()) why = s.message;
    c = Completion();  // the outcome of what finishes later fails the next broadcast, if anything
  };
  try {
    for (uint64_t k = 0; k < pieces && why.empty(); ++k) {
      Completion& slot = in_flight[k % 2];
      if (k >= 2) await(slot);
      if (!why.empty()) break;
      const uint64_t at = k * limit;
      slot = group.broadcast(static_cast<Rank>(root), std::span<std::byte>(data + at, std::min(limit, bytes - at)));
    }
    for (uint64_t k = pieces > 2 ? pieces - 2 : 0; k < pieces; ++k) await(in_flight[k % 2]);
  } catch (const std::exception& e) {
    if (why.empty()) why = e.what();
  }
  return why;
}

}  // namespace

int bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  Job& job = Job::get();
  Stats& st = job.stats();
  if (!job.enabled()) return to_mpi(buffer, count, type, root, comm, st.off);
  int inter = 0, size = 0;
  if (comm == MPI_COMM_NULL || type == MPI_DATATYPE_NULL || count < 0 ||
      PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter || PMPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      size < 2 || root < 0 || root >= size)
    return to_mpi(buffer, count, type, root, comm, st.comm);
  MPI_Count type_size = 0;
  if (PMPI_Type_size_x(type, &type_size) != MPI_SUCCESS || type_size < 0 ||
      (count > 0 && static_cast<uint64_t>(type_size) > UINT64_MAX / static_cast<uint64_t>(count)))
    return to_mpi(buffer, count, type, root, comm, st.comm);
  const auto bytes = static_cast<uint64_t>(count) * static_cast<uint64_t>(type_size);
  if (bytes < job.settings().min_bytes) return to_mpi(buffer, count, type, root, comm, st.small);

  CommGroup& g = group_of(comm, size);
  if (g.refused) return to_mpi(buffer, count, type, root, comm, st.group);
  if (g.broken || !g.group) return fail(g, comm, "an earlier broadcast on it failed");

  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  const Layout layout = layout_of(type, count);
  std::byte* data = static_cast<std::byte*>(buffer) + layout.offset;
  if (!layout.in_place) {
    std::vector<std::byte>& scratch = job.scratch();
    if (scratch.size() < bytes) scratch.resize(bytes);
    data = scratch.data();
    if (rank == root)
      if (const int rc = pack(buffer, count, type, data, bytes, comm); rc != MPI_SUCCESS)
        return fail(g, comm, "MPI_Pack of the root's datatype failed (" + std::to_string(rc) + ")");
    Stats::add(st.packed);
  }
  if (const std::string why = carry(*g.group, root, data, bytes, job.settings().max_message); !why.empty())
    return fail(g, comm, why);
  if (!layout.in_place && rank != root)
    if (const int rc = unpack(data, bytes, buffer, count, type, comm); rc != MPI_SUCCESS)
      return fail(g, comm, "MPI_Unpack into this rank's datatype failed (" + std::to_string(rc) + ")");
  // A packed broadcast's scratch is kept for the next one, up to a size.
  constexpr uint64_t kScratchKept = 64u << 20;
  if (job.scratch().size() > kScratchKept) std::vector<std::byte>().swap(job.scratch());
  Stats::add(st.carried);
  Stats::add(st.carried_bytes, bytes);
  return MPI_SUCCESS;
}

}  // namespace lanecast::mpi
