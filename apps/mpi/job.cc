#include "apps/mpi/job.h"

#include <cstring>
#include <stdexcept>

#include "apps/mpi/comm_group.h"

namespace lanecast::mpi {
namespace {

// What each rank found when it tried to start, as every rank receives it
// (PMPI_Allgather): fixed size, strings NUL-terminated by the reader too.
struct StartReport {
  int32_t ok = 0;
  uint32_t lanes = 0;
  char kind[16] = {};
  char key[24] = {};  // the group key's fingerprint; "" without a key
  char why[400] = {};
};

template <size_t N>
void put(char (&to)[N], const std::string& from) {
  std::strncpy(to, from.c_str(), N - 1);
  to[N - 1] = '\0';
}

template <size_t N>
std::string get(const char (&from)[N]) {
  return std::string(from, strnlen(from, N));
}

int on_self_delete(MPI_Comm, int, void*, void*) {
  Job::get().finish();
  return MPI_SUCCESS;
}

// The job's verdict from every rank's report: "" when lanecast carries its
// broadcasts, else why not. Every rank holds the same reports, so every
// rank reaches the same verdict.
std::string verdict(const std::vector<StartReport>& reports) {
  std::string refusal;
  int failed = 0;
  for (size_t r = 0; r < reports.size(); ++r) {
    if (reports[r].ok) continue;
    if (refusal.empty()) refusal = "rank " + std::to_string(r) + " cannot carry broadcasts: " + get(reports[r].why);
    ++failed;
  }
  if (failed > 1) refusal += " (" + std::to_string(failed) + " of " + std::to_string(reports.size()) + " ranks cannot)";
  if (!refusal.empty()) return refusal;
  const StartReport& first = reports[0];
  for (size_t r = 1; r < reports.size(); ++r) {
    const StartReport& x = reports[r];
    if (x.lanes != first.lanes || get(x.kind) != get(first.kind))
      return "rank " + std::to_string(r) + " has " + std::to_string(x.lanes) + " " + get(x.kind) + " lane(s), rank 0 " +
             std::to_string(first.lanes) + " " + get(first.kind) + ": the ranks of a job need lanes of one kind and count";
    if (get(x.key) != get(first.key))
      return "rank " + std::to_string(r) + (get(x.key).empty() ? " has no group key" : " holds group key " + get(x.key)) +
             ", rank 0 " + (get(first.key).empty() ? "none" : get(first.key)) +
             " (LANECAST_GROUP_KEY / LANECAST_GROUP_KEY_FILE): the ranks of a job need the same key";
  }
  return "";
}

}  // namespace

Job& Job::get() {
  static Job* job = new Job();  // never destroyed: MPI may call its callbacks at exit
  return *job;
}

void Job::start(int provided) {
  if (started_) return;
  started_ = true;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size_);
  stats_.world_rank.store(world_rank_, std::memory_order_relaxed);
  host_ = read_host_settings();
  // finish() at MPI_Finalize whatever the verdict: the counters are printed then.
  if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, on_self_delete, &self_keyval_, nullptr) == MPI_SUCCESS)
    PMPI_Comm_set_attr(MPI_COMM_SELF, self_keyval_, nullptr);

  JobSettings js;
  if (world_rank_ == 0) js = read_job_settings();
  PMPI_Bcast(&js, sizeof js, MPI_BYTE, 0, MPI_COMM_WORLD);
  js.error[sizeof js.error - 1] = '\0';
  settings_ = js;
  if (!js.enabled) {
    if (world_rank_ == 0 && js.error[0] != '\0')
      say(std::string("settings refused: ") + js.error + "; every MPI_Bcast of this job goes to MPI");
    return;
  }
  if (world_size_ < 2) return;  // no communicator has two ranks
  int most = provided;
  PMPI_Allreduce(&provided, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (most >= MPI_THREAD_MULTIPLE) {
    if (world_rank_ == 0)
      say("MPI_THREAD_MULTIPLE: lanecast serves one thread of a rank at a time, so every MPI_Bcast of this job goes "
          "to MPI");
    return;
  }

  const HostAddresses mine = host_addresses();
  std::vector<HostAddresses> everyone(static_cast<size_t>(world_size_));
  PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, everyone.data(), sizeof mine, MPI_BYTE, MPI_COMM_WORLD);
  StartReport report;
  const std::string why = try_start(everyone);
  report.ok = why.empty();
  report.lanes = static_cast<uint32_t>(lanes_.size());
  put(report.kind, lanes_.empty() ? "" : lane_kind(lanes_));
  put(report.key, key_ ? key_->fingerprint() : "");
  put(report.why, why);
  std::vector<StartReport> reports(static_cast<size_t>(world_size_));
  PMPI_Allgather(&report, sizeof report, MPI_BYTE, reports.data(), sizeof report, MPI_BYTE, MPI_COMM_WORLD);
  if (const std::string refused = verdict(reports); !refused.empty()) {
    if (world_rank_ == 0) say(refused + "; every MPI_Bcast of this job goes to MPI");
    engine_.reset();
    key_.reset();
    return;
  }
  PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_comm_group, &comm_keyval_, nullptr);
  enabled_ = carried_ = true;
  stats_.enabled.store(1, std::memory_order_relaxed);
}

std::string Job::try_start(const std::vector<HostAddresses>& everyone) {
  if (!host_.error.empty()) return host_.error;
  const LaneChoice choice = lane_candidates(host_, world_rank_, everyone);
  if (choice.candidates.empty()) return choice.error;
  try {
    key_ = host_.group_file.empty() ? AuthKey::from_environment() : resolve_key(load_group_file(host_.group_file));
  } catch (const std::exception& e) {
    return e.what();
  }
  EngineOptions eo;
  eo.progress_in_calls = true;  // one thread per rank, as MPI's own progress
  eo.idle_look_us = settings_.look_us;
  eo.yield_when_idle = true;  // ranks share CPUs with each other and with MPI's progress
  eo.log_level = host_.log_level;
  eo.memory_mb = host_.memory_mb != 0 ? host_.memory_mb : static_cast<uint32_t>(memory_mb_for(choice.candidates[0]));
  try {
    engine_ = std::make_unique<Engine>(eo);
  } catch (const std::exception& e) {
    return std::string("the engine did not start: ") + e.what();
  }
  std::string first_refusal;
  for (const std::vector<std::string>& lanes : choice.candidates) {
    std::string why;
    for (const std::string& lane : renamed(lanes, &next_port_))
      if (why.empty()) why = engine_->try_lane(lane);
    if (why.empty()) {
      lanes_ = lanes;
      return "";
    }
    if (first_refusal.empty()) first_refusal = describe_lanes(lanes) + ": " + why;
  }
  engine_.reset();
  return first_refusal;
}

uint64_t Job::memory_mb_for(const std::vector<std::string>& lanes) const {
  GroupSpec g = group_spec_of(settings_);
  g.exchange = [](std::span<const std::byte>) { return std::vector<std::vector<std::byte>>(); };  // sized, not joined
  g.lanes = static_cast<uint16_t>(lanes.size());
  g.key = key_;
  for (int r = 0; r < world_size_; ++r) g.members.push_back({static_cast<uint32_t>(r), lanes, {}, 0});
  try {
    const uint64_t pools = Group::memory_bytes(g, static_cast<Rank>(world_rank_));
    return host_.groups * (pools + pools / 4) / (1u << 20) + 96;
  } catch (const std::exception&) {
    return 512;  // the join will say what is wrong with the lanes
  }
}

std::vector<std::string> Job::renamed_lanes() { return renamed(lanes_, &next_port_); }

void Job::finish() {
  if (finished_ || !started_) return;
  finished_ = true;
  enabled_ = false;
  stats_.enabled.store(0, std::memory_order_relaxed);
  const std::unordered_set<CommGroup*> alive = groups_;
  if (host_.stats >= 2)
    for (CommGroup* g : alive) say("rank " + std::to_string(world_rank_) + ": " + group_counters(*g));
  for (CommGroup* g : alive) leave(*g);
  groups_.clear();
  engine_.reset();
  key_.reset();
  if (host_.stats) say(stats_.line(world_size_, carried_ ? describe_lanes(lanes_) : ""));
}

}  // namespace lanecast::mpi
