#include "apps/mpi/comm_group.h"

#include <climits>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "apps/mpi/job.h"

namespace lanecast::mpi {
namespace {

// One rank's part of the exchange, as every rank of the communicator
// receives it. Fixed size (PMPI_Allgather); read as bytes from another
// process, so every length in it is checked before use.
struct Slot {
  static constexpr uint32_t kMagic = 0x4c434d50;  // "LCMP"
  uint32_t magic = kMagic;
  int32_t ok = 0;
  uint32_t record_bytes = 0;
  std::byte record[kMaxEndpointRecordBytes] = {};
  char why[320] = {};
};

std::vector<Slot> allgather(const Slot& mine, MPI_Comm comm, int size) {
  std::vector<Slot> all(static_cast<size_t>(size));
  const int rc = PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);
  if (rc != MPI_SUCCESS) throw std::runtime_error("PMPI_Allgather of the endpoint records failed (" + std::to_string(rc) + ")");
  return all;
}

Slot failed_slot(const std::string& why) {
  Slot s;
  std::strncpy(s.why, why.c_str(), sizeof s.why - 1);
  return s;
}

// Every member's record out of the slots; throws naming the first rank that
// could not join (its own words) or whose slot makes no sense.
std::vector<std::vector<std::byte>> records_of(const std::vector<Slot>& all) {
  std::vector<std::vector<std::byte>> records;
  for (size_t r = 0; r < all.size(); ++r) {
    const Slot& s = all[r];
    if (s.magic != Slot::kMagic) throw std::runtime_error("rank " + std::to_string(r) + " sent no lanecast-mpi record");
    if (!s.ok) throw std::runtime_error("rank " + std::to_string(r) + ": " + std::string(s.why, strnlen(s.why, sizeof s.why)));
    if (s.record_bytes == 0 || s.record_bytes > sizeof s.record)
      throw std::runtime_error("rank " + std::to_string(r) + "'s record has " + std::to_string(s.record_bytes) + " bytes");
    records.emplace_back(s.record, s.record + s.record_bytes);
  }
  return records;
}

// "MPI_COMM_WORLD (8 ranks)", or "a communicator of 4 ranks" when it has no name.
std::string name_of(MPI_Comm comm, int size) {
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  if (PMPI_Comm_get_name(comm, name, &len) == MPI_SUCCESS && len > 0 && len < MPI_MAX_OBJECT_NAME)
    return std::string(name, static_cast<size_t>(len)) + " (" + std::to_string(size) + " ranks)";
  return "a communicator of " + std::to_string(size) + " ranks";
}

// Forms `comm`'s group into g (or marks it refused). Every step is a
// collective every rank of comm makes, whatever happened before it here.
void form(CommGroup& g, MPI_Comm comm, int size) {
  Job& job = Job::get();
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  unsigned mine_id = job.next_group_id(), id = 0;
  PMPI_Allreduce(&mine_id, &id, 1, MPI_UNSIGNED, MPI_MAX, comm);
  job.used_group_id(id);

  GroupSpec spec = group_spec_of(job.settings());
  // The same on every rank (it is part of the settings' digest): a
  // communicator's name is each rank's own (MPI_Comm_set_name is local).
  spec.name = "mpi group " + std::to_string(id);
  spec.id = id;
  spec.key = job.key();
  const std::vector<std::string> lanes = job.lanes_for_group();
  spec.lanes = static_cast<uint16_t>(lanes.size());
  for (int r = 0; r < size; ++r) spec.members.push_back({static_cast<uint32_t>(r), lanes, {}, 0});
  bool exchanged = false;
  spec.exchange = [&](std::span<const std::byte> record) {
    Slot s;
    s.ok = 1;
    if (record.size() > sizeof s.record) throw std::logic_error("an endpoint record over kMaxEndpointRecordBytes");
    s.record_bytes = static_cast<uint32_t>(record.size());
    std::memcpy(s.record, record.data(), record.size());
    exchanged = true;  // whatever comes of it: the collective is not made twice
    return records_of(allgather(s, comm, size));
  };
  std::string failure;
  try {
    g.group = job.engine().join(spec, static_cast<Rank>(rank));
  } catch (const std::exception& e) {
    failure = e.what();
    if (failure.empty()) failure = "the join failed";
  }
  if (!exchanged) {  // it failed before the exchange: the others still wait in it
    try {
      allgather(failed_slot(failure), comm, size);
    } catch (const std::exception&) {
    }
  }
  int failed = failure.empty() ? INT_MAX : rank, first_failed = INT_MAX;
  PMPI_Allreduce(&failed, &first_failed, 1, MPI_INT, MPI_MIN, comm);
  if (first_failed == INT_MAX) {
    job.add(&g);
    Stats::add(job.stats().formed);
    return;
  }
  g.group.reset();  // a peer could not join: nothing was sent on it
  g.refused = true;
  Stats::add(job.stats().refused);
  if (rank == first_failed) {
    // The engine's advice names its own option; the library's are these.
    const bool memory = failure.find("memory_mb") != std::string::npos;
    say(g.name + ": no lanecast group, its broadcasts go to MPI: rank " +
        std::to_string(rank) + ": " + failure +
        (memory ? " - LANECAST_MPI_GROUPS or LANECAST_MPI_MEMORY_MB size it for more groups at once" : ""));
  }
}

}  // namespace

CommGroup& group_of(MPI_Comm comm, int size) {
  Job& job = Job::get();
  void* value = nullptr;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, job.comm_keyval(), &value, &found) == MPI_SUCCESS && found && value != nullptr)
    return *static_cast<CommGroup*>(value);
  auto* g = new CommGroup();
  g->name = name_of(comm, size);
  form(*g, comm, size);
  PMPI_Comm_set_attr(comm, job.comm_keyval(), g);
  return *g;
}

std::string group_counters(const CommGroup& g) {
  std::string out = g.name + ":";
  if (!g.group) return out + " no group";
  for (const auto& [name, value] : g.group->member().counters())
    if (value != 0) out += " " + name + "=" + std::to_string(value);
  out += "; joined in: " + g.group->join_steps();
  const PortCounters p = g.group->port_counters();
  out += "; port rx_frames=" + std::to_string(p.rx_frames) + " tx_frames=" + std::to_string(p.tx_frames) +
         " rx_missed=" + std::to_string(p.rx_missed) + " tx_full=" + std::to_string(p.tx_full) +
         " rx_no_buffer=" + std::to_string(p.rx_no_buffer);
  return out;
}

void leave(CommGroup& g) {
  g.group.reset();
  Job::get().remove(&g);
}

int delete_comm_group(MPI_Comm, int, void* value, void*) {
  auto* g = static_cast<CommGroup*>(value);
  if (g != nullptr) {
    leave(*g);
    delete g;
  }
  return MPI_SUCCESS;
}

}  // namespace lanecast::mpi
