// A group's endpoint table: every member's link addresses, the same in every
// member's process once a bootstrap has run, and the epoch they agreed on.
// Four bootstraps fill it (docs/groups.md): static (from the group file),
// discovery (hellos on the wire), PMIx (a job launcher's key-value store)
// and exchange (the application's own collective: MPI's allgather).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "drivers/backlog/backlog_port.h"
#include "drivers/port.h"
#include "lanecast/group_spec.h"

namespace lanecast::engine::bootstrap {

struct Endpoint {
  uint32_t rank = 0;
  std::vector<drivers::PeerAddress> lanes;  // link address per lane
  uint64_t incarnation = 0;                 // this life of its process (0: unknown, static)
};

struct EndpointTable {
  uint32_t epoch = 0;
  std::vector<Endpoint> members;  // by rank
};

// Whether two tables name the same ranks at the same addresses.
bool same_addresses(const EndpointTable& a, const EndpointTable& b);
// "rank R lane L AA:BB:CC:DD:EE:FF" lines, for logs and `lanecast run --show-endpoints`.
std::string describe(const EndpointTable& t);
// The same with each address written by `format` (a verbs port's: GID, LID, QPNs).
std::string describe(const EndpointTable& t, std::string (*format)(const drivers::PeerAddress&));
using drivers::format_address;

// What every member of a group must agree on, hashed: hellos carry it, so a
// member started with another group file is refused by name, not by
// mysterious failures later.
uint64_t spec_digest(const GroupSpec& spec);
// Random per process start (a restarted member is a new member).
uint64_t fresh_incarnation();
// The epoch a discovered group takes: a hash of its id and its members'
// incarnations, so it changes whenever any member restarts. Never 0.
uint32_t epoch_of(uint32_t group_id, const std::vector<Endpoint>& members);
// The same lives in 64 bits, for discovery's hellos: members start only once
// every one of them heard this same formation. Never 0.
uint64_t formation_of(uint32_t group_id, const std::vector<Endpoint>& members);

// Fills the endpoint table from this member's own endpoint. Throws
// std::runtime_error naming what is missing (ranks not heard, a mismatched
// group file) when it cannot.
class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual EndpointTable exchange(const Endpoint& mine) = 0;
  // Where the last exchange spent its time ("init 31.2 ms, fence 4.0 ms"),
  // for `lanecast run`'s log; empty when there is nothing to tell apart.
  virtual std::string steps() const { return {}; }
  // Frames of the group that came to the port while the exchange read it
  // (a member that finished first has begun the first operation), for the
  // member's port to hand up first (drivers/backlog/), as if they had come
  // just now. The caller owns them; a second call returns none.
  using EarlyFrame = drivers::BacklogPort::Frame;
  virtual std::vector<EarlyFrame> take_early_frames() { return {}; }
};

}  // namespace lanecast::engine::bootstrap
