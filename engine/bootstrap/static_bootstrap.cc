#include "engine/bootstrap/static_bootstrap.h"

#include <optional>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::engine::bootstrap {
namespace {

class StaticBootstrap final : public Bootstrap {
 public:
  explicit StaticBootstrap(const GroupSpec& s) : spec_(s) {}

  EndpointTable exchange(const Endpoint& mine) override {
    const std::string where = spec_.source.empty() ? spec_.name : spec_.source;
    if (spec_.epoch == 0) throw std::runtime_error(where + ": the static bootstrap needs the group's epoch");
    EndpointTable t;
    t.epoch = spec_.epoch;
    for (const MemberSpec& m : spec_.members) {
      Endpoint e;
      e.rank = m.rank;
      if (m.macs.size() != spec_.lanes)
        throw std::runtime_error(where + ": rank " + std::to_string(m.rank) + " has " + std::to_string(m.macs.size()) +
                                 " addresses for " + std::to_string(spec_.lanes) + " lanes (static bootstrap)");
      for (const std::string& mac : m.macs) {
        const std::optional<drivers::PeerAddress> a = drivers::ethernet::parse_mac(mac);
        if (!a) throw std::runtime_error(where + ": rank " + std::to_string(m.rank) + ": bad address '" + mac + "'");
        e.lanes.push_back(*a);
      }
      t.members.push_back(e);
    }
    // The file must describe this member as its port really is.
    const Endpoint& me = t.members.at(mine.rank);
    for (size_t l = 0; l < mine.lanes.size() && l < me.lanes.size(); ++l)
      if (!(mine.lanes[l] == me.lanes[l]))
        throw std::runtime_error(where + ": rank " + std::to_string(mine.rank) + " lane " + std::to_string(l) +
                                 " is " + format_address(mine.lanes[l]) + ", the file says " +
                                 format_address(me.lanes[l]));
    return t;
  }

 private:
  GroupSpec spec_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_static_bootstrap(const GroupSpec& spec) {
  return std::make_unique<StaticBootstrap>(spec);
}

}  // namespace lanecast::engine::bootstrap
