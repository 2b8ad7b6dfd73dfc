// Where a group's multicast addresses come from (Port::group_address turns the
// seed into a MAC, or an InfiniBand MGID).
//
// Random, never derived from the group id alone: two jobs that both call
// their group "1" on one bridge must not share an address, or each would
// receive the other's multicasts (they would be dropped by group id and epoch
// in the lanecast header, but only after costing every receiver). So:
//  - a group of one process (LocalGroup) draws its seed from the kernel's
//    CSPRNG (getrandom(2)) when it is created;
//  - a group of member processes (Engine::join) must agree on one seed without
//    another round trip: each member derives it from the endpoint table every
//    member holds after the bootstrap - the group id, the epoch and each
//    member's incarnation, itself 64 bits from getrandom drawn at process
//    start (bootstrap::fresh_incarnation). A new epoch (any member restarted)
//    is a new seed. The static bootstrap has no incarnations: its seed follows
//    the group file's id, epoch and member addresses.
// The groups this process holds are registered (AddressSeedClaim): a new group
// whose address on any lane equals one already held is refused (joined
// groups) or draws again (local groups), so a process never merges two groups'
// multicasts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "drivers/port.h"
#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine {

// 16 bytes from getrandom(2); throws std::runtime_error if the kernel refuses.
drivers::GroupAddressSeed random_address_seed();
// The seed every member of a joined group computes from the same table.
drivers::GroupAddressSeed address_seed_of(uint32_t group_id, const bootstrap::EndpointTable& table);

// A seed this process holds while the group lives; released on destruction.
class AddressSeedClaim {
 public:
  // Registers `seed` for `lanes` lanes, or returns nullopt and fills `clash`
  // when one of its Ethernet group addresses is one a held group uses.
  static std::optional<AddressSeedClaim> claim(const drivers::GroupAddressSeed& seed, uint16_t lanes, std::string* clash);
  // A fresh random seed that clashes with nothing held, claimed.
  static AddressSeedClaim claim_random(uint16_t lanes);

  AddressSeedClaim() = default;
  AddressSeedClaim(AddressSeedClaim&& o) noexcept : seed_(o.seed_), held_(o.held_) { o.held_ = false; }
  AddressSeedClaim& operator=(AddressSeedClaim&& o) noexcept;
  ~AddressSeedClaim() { release(); }

  const drivers::GroupAddressSeed& seed() const { return seed_; }

 private:
  void release();

  drivers::GroupAddressSeed seed_;
  bool held_ = false;
};

}  // namespace lanecast::engine
