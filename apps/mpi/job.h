// liblanecast-mpi's part of this process: its settings, its engine (one per
// process, progressing inside the application's MPI_Bcast calls and, between
// them, on a thread that looks every LANECAST_MPI_LOOK_US), the lanes its
// groups open, and the verdict the job reached at MPI_Init.
//
// The verdict is collective: every rank tries to start - settings, thread
// level, lanes, the engine, a port opened and closed - and the ranks
// allgather what each found. If any rank cannot, or the ranks disagree
// (lanes of different kinds or counts, different group keys), lanecast
// carries nothing in this job; rank 0 prints one line naming the first
// rank and its cause, and every MPI_Bcast goes to MPI. No rank hangs, none
// aborts. Thereafter each communicator's group forms on its first
// broadcast (comm_group.h), again deciding collectively.
//
// MPI_Finalize deletes MPI_COMM_SELF's attributes first: the one set here
// leaves every group and stops the engine while MPI still runs.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "apps/mpi/lanes.h"
#include "apps/mpi/settings.h"
#include "apps/mpi/stats.h"
#include "lanecast/lanecast.h"

namespace lanecast::mpi {

struct CommGroup;

class Job {
 public:
  static Job& get();

  // After PMPI_Init / PMPI_Init_thread, with the thread level MPI provided.
  // Collective over MPI_COMM_WORLD.
  void start(int provided);
  // Every group left, the engine stopped, the counters printed (when asked).
  // Idempotent; MPI_COMM_SELF's attribute calls it from MPI_Finalize.
  void finish();

  bool enabled() const { return enabled_; }
  const JobSettings& settings() const { return settings_; }
  Engine& engine() { return *engine_; }
  Stats& stats() { return stats_; }
  int comm_keyval() const { return comm_keyval_; }
  const std::shared_ptr<const AuthKey>& key() const { return key_; }
  // This rank's lanes for one more group: each DPDK port named anew.
  std::vector<std::string> lanes_for_group() { return renamed_lanes(); }
  uint32_t lanes() const { return static_cast<uint32_t>(lanes_.size()); }
  // Group ids: every group this rank formed had one below this.
  uint32_t next_group_id() const { return next_group_id_; }
  void used_group_id(uint32_t id) { next_group_id_ = std::max(next_group_id_, id + 1); }
  // Packed broadcasts' bytes (layout.h), kept between calls.
  std::vector<std::byte>& scratch() { return scratch_; }

  // Groups alive, left by finish().
  void add(CommGroup* g) { groups_.insert(g); }
  void remove(CommGroup* g) { groups_.erase(g); }

 private:
  Job() = default;
  // This rank's attempt: "" when it can carry broadcasts, else why not.
  std::string try_start(const std::vector<HostAddresses>& everyone);
  std::vector<std::string> renamed_lanes();
  uint64_t memory_mb_for(const std::vector<std::string>& lanes) const;

  JobSettings settings_;
  HostSettings host_;
  bool started_ = false, finished_ = false, enabled_ = false;
  bool carried_ = false;  // enabled until finish()
  int world_rank_ = 0, world_size_ = 1;
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<const AuthKey> key_;
  std::vector<std::string> lanes_;  // as chosen; renamed per group
  uint32_t next_port_ = 0;
  uint32_t next_group_id_ = 1;
  int comm_keyval_ = MPI_KEYVAL_INVALID;
  int self_keyval_ = MPI_KEYVAL_INVALID;
  std::unordered_set<CommGroup*> groups_;
  std::vector<std::byte> scratch_;
  Stats stats_;
};

}  // namespace lanecast::mpi
