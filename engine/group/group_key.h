// Where a group's multicast addresses come from (Port::group_address turns the
// key into a MAC, or an InfiniBand MGID).
//
// Random, never derived from the group id alone: two jobs that both call
// their group "1" on one bridge must not share an address, or each would
// receive the other's multicasts (they would be dropped by group id and epoch
// in the lanecast header, but only after costing every receiver). So:
//  - a group of one process (LocalGroup) draws its key from the kernel's
//    CSPRNG (getrandom(2)) when it is created;
//  - a group of member processes (Engine::join) must agree on one key without
//    another round trip: each member derives it from the endpoint table every
//    member holds after the bootstrap - the group id, the epoch and each
//    member's incarnation, itself 64 bits from getrandom drawn at process
//    start (bootstrap::fresh_incarnation). A new epoch (any member restarted)
//    is a new key. The static bootstrap has no incarnations: its key follows
//    the group file's id, epoch and member addresses.
// The groups this process holds are registered (GroupKeyClaim): a new group
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
drivers::GroupKey random_group_key();
// The key every member of a joined group computes from the same table.
drivers::GroupKey group_key_of(uint32_t group_id, const bootstrap::EndpointTable& table);

// A key this process holds while the group lives; released on destruction.
class GroupKeyClaim {
 public:
  // Registers `key` for `lanes` lanes, or returns nullopt and fills `clash`
  // when one of its Ethernet group addresses is one a held group uses.
  static std::optional<GroupKeyClaim> claim(const drivers::GroupKey& key, uint16_t lanes, std::string* clash);
  // A fresh random key that clashes with nothing held, claimed.
  static GroupKeyClaim claim_random(uint16_t lanes);

  GroupKeyClaim() = default;
  GroupKeyClaim(GroupKeyClaim&& o) noexcept : key_(o.key_), held_(o.held_) { o.held_ = false; }
  GroupKeyClaim& operator=(GroupKeyClaim&& o) noexcept;
  ~GroupKeyClaim() { release(); }

  const drivers::GroupKey& key() const { return key_; }

 private:
  void release();

  drivers::GroupKey key_;
  bool held_ = false;
};

}  // namespace lanecast::engine
