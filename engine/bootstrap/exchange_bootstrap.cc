#include "engine/bootstrap/exchange_bootstrap.h"

#include <cstdio>
#include <stdexcept>

#include "engine/bootstrap/endpoint_record.h"
#include "engine/bootstrap/record_table.h"
#include "engine/runtime/clock.h"

namespace lanecast::engine::bootstrap {
namespace {

class ExchangeBootstrap final : public Bootstrap {
 public:
  explicit ExchangeBootstrap(const GroupSpec& s) : spec_(s) {}

  EndpointTable exchange(const Endpoint& mine) override {
    const std::string where = spec_.source.empty() ? spec_.name : spec_.source;
    const std::vector<uint8_t> record = encode_record({mine, spec_digest(spec_)});
    const uint64_t t = now_ns();
    const std::vector<std::vector<std::byte>> got =
        spec_.exchange(std::as_bytes(std::span<const uint8_t>(record.data(), record.size())));
    char took[48];
    std::snprintf(took, sizeof took, "exchange %.1f ms", static_cast<double>(now_ns() - t) / 1e6);
    steps_ = took;
    std::vector<std::optional<std::vector<uint8_t>>> records;
    records.reserve(got.size());
    for (const std::vector<std::byte>& g : got) {
      if (g.empty()) {
        records.emplace_back(std::nullopt);
        continue;
      }
      const auto* b = reinterpret_cast<const uint8_t*>(g.data());
      records.emplace_back(std::vector<uint8_t>(b, b + g.size()));
    }
    return table_from_records(spec_, records, where, "passed no endpoint record through the exchange");
  }

  std::string steps() const override { return steps_; }

 private:
  GroupSpec spec_;
  std::string steps_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_exchange_bootstrap(const GroupSpec& spec) {
  if (!spec.exchange)
    throw std::invalid_argument((spec.source.empty() ? spec.name : spec.source) +
                                ": bootstrap \"exchange\" needs GroupSpec::exchange, the function that carries the "
                                "members' records");
  return std::make_unique<ExchangeBootstrap>(spec);
}

}  // namespace lanecast::engine::bootstrap
