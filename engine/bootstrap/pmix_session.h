// This process as a client of its launcher's PMIx server (mpirun, prterun,
// srun), for the length of one bootstrap: PMIx's C calls with their status
// codes turned into messages a user can act on. Built only with PMIx.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace lanecast::engine::bootstrap {

class PmixSession {
 public:
  // PMIx_Init. Throws std::runtime_error when the process was not started by
  // a PMIx launcher, or its server cannot be reached. Every message starts
  // with `context` ("g.toml: pmix bootstrap").
  explicit PmixSession(std::string context);
  // PMIx_Finalize: every process that connected must, or Open MPI's mpirun
  // calls its exit "improper" and kills the job.
  ~PmixSession();
  PmixSession(const PmixSession&) = delete;
  PmixSession& operator=(const PmixSession&) = delete;

  uint32_t rank() const { return rank_; }
  // PMIX_JOB_SIZE: how many processes the launcher started in this job.
  uint32_t job_size() const;
  // PMIx_Put (global scope) and PMIx_Commit.
  void publish(const std::string& key, std::span<const uint8_t> bytes);
  // PMIx_Fence over the whole job, collecting every process's published data
  // on the way. Throws naming the timeout when a member does not arrive.
  void fence_collect(double timeout_ms);
  // `rank`'s bytes under `key`, looked up only among the data the fence
  // collected (PMIX_OPTIONAL: never a wait for data that will not come);
  // nullopt when absent. Throws if the value is there but not bytes.
  std::optional<std::vector<uint8_t>> fetch(uint32_t rank, const std::string& key) const;

 private:
  std::string context_;
  std::string nspace_;
  uint32_t rank_ = 0;
};

}  // namespace lanecast::engine::bootstrap
