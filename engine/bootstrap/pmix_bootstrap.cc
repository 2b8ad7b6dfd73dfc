#include "engine/bootstrap/pmix_bootstrap.h"

#include <cstdio>
#include <stdexcept>

#include "engine/bootstrap/endpoint_record.h"
#include "engine/bootstrap/pmix_session.h"
#include "engine/bootstrap/record_table.h"
#include "engine/runtime/clock.h"

namespace lanecast::engine::bootstrap {
namespace {

// One job may form several groups: each puts its records under its own key.
std::string record_key(const GroupSpec& s) { return "lanecast.endpoint." + std::to_string(s.id) + "." + s.name.substr(0, 200); }

std::string ms_since(uint64_t t0) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f ms", static_cast<double>(now_ns() - t0) / 1e6);
  return b;
}

class PmixBootstrap final : public Bootstrap {
 public:
  explicit PmixBootstrap(const GroupSpec& s) : spec_(s), digest_(spec_digest(s)) {}

  EndpointTable exchange(const Endpoint& mine) override {
    const std::string where = spec_.source.empty() ? spec_.name : spec_.source;
    const auto n = static_cast<uint32_t>(spec_.members.size());
    uint64_t t = now_ns();
    // Connected for this exchange only: finalising once the records are read
    // is what MPI_Finalize does too, and mpirun then waits for the process to
    // exit as for any other (tried: Open MPI 4.1 with PMIx 4.2, and a second
    // session in the same process connects again).
    PmixSession pmix(where + ": pmix bootstrap");
    steps_ = "init " + ms_since(t);
    if (pmix.rank() != mine.rank)
      throw std::invalid_argument(where + ": joining as rank " + std::to_string(mine.rank) +
                                  ", but the PMIx launcher started this process as rank " + std::to_string(pmix.rank()) +
                                  " (leave --rank out, or give the launcher's)");
    const uint32_t job = pmix.job_size();
    if (job != n)
      throw std::invalid_argument(where + ": the group has " + std::to_string(n) +
                                  " members, but the PMIx launcher started " + std::to_string(job) +
                                  " processes (one per member: mpirun -np " + std::to_string(n) + ")");

    const std::string key = record_key(spec_);
    t = now_ns();
    pmix.publish(key, encode_record({mine, digest_}));
    pmix.fence_collect(spec_.bootstrap_timeout_ms);
    steps_ += ", put + fence " + ms_since(t);

    t = now_ns();
    std::vector<std::optional<std::vector<uint8_t>>> records;
    for (uint32_t r = 0; r < n; ++r) records.push_back(pmix.fetch(r, key));
    EndpointTable table = table_from_records(
        spec_, records, where, "put no endpoint under '" + key + "' (started with another group file, or not lanecast?)");
    steps_ += ", " + std::to_string(n) + " records " + ms_since(t);
    return table;
  }

  std::string steps() const override { return steps_; }

 private:
  GroupSpec spec_;
  uint64_t digest_;
  std::string steps_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_pmix_bootstrap(const GroupSpec& spec) { return std::make_unique<PmixBootstrap>(spec); }

}  // namespace lanecast::engine::bootstrap
