// Which hellos a discovering member takes (wire_discovery.cc), and what it
// refused. A hello is taken only if it is of the newest life heard of its
// rank: one of another life (incarnation) counts only if sent later, by its
// sender's clock, than the newest hello of the life it replaces - so a hello
// of an earlier life sent again (an unmodified capture) changes nothing
// once the rank's present life has been heard. With a key it must also open
// (its tag covers the link header: a hello sent again from another address
// does not), be within kHelloMaxAgeMs of this member's clock, and in its
// own life come under a counter above the last taken on its lane.
//
// Without a key these rules still turn away hellos sent again unchanged,
// but anyone on the segment can write a hello that passes them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/auth/sealer.h"
#include "engine/wire/wire.h"
#include "lanecast/group_spec.h"

struct rte_mbuf;

namespace lanecast::engine::bootstrap {

// A sealed hello older than this (or this far in the sender's future) is a
// replay of an earlier formation: members' clocks must agree within it.
inline constexpr int64_t kHelloMaxAgeMs = 30'000;

uint64_t unix_ms();

class HelloGate {
 public:
  // `link`: the receive link header's bytes, `sealed_link`: how many of
  // them are under a hello's tag (Port::sealed_link_bytes).
  HelloGate(const GroupSpec& spec, uint16_t link, uint16_t sealed_link);
  ~HelloGate();

  bool sealed() const { return sealer_ != nullptr; }
  // Seals a hello being sent: frame[0, link + seal_at) under the next counter.
  void seal(uint8_t* frame, uint16_t link, uint16_t seal_at, uint32_t me);

  enum class Verdict : uint8_t {
    Take,      // of the rank's present life (perhaps a new one: `new_life`)
    Refused,   // counted: unsealed, bad tag, stale
    Returned,  // of a life this member saw replaced, sent after its successor's:
               // two processes with one rank (taken as the rank's life now)
  };
  // A hello from another rank (p.src != me), as the port read it on `lane`.
  // `new_life`: its incarnation replaces the one taken before.
  Verdict check(const rte_mbuf* m, const wire::Parsed& p, uint16_t lane, bool* new_life);
  // The incarnation a rank had before its present one (0: none).
  uint64_t replaced(uint32_t rank) const { return lives_[rank].replaced; }

  // For a time-out's message and `lanecast run`'s steps.
  uint64_t unsealed() const { return unsealed_; }
  uint64_t bad_tags() const { return bad_tags_; }
  uint64_t stale() const { return stale_; }
  const std::string& key_print() const { return key_print_; }

 private:
  bool seal_opens(const rte_mbuf* m, const wire::Parsed& p, uint64_t* counter);

  uint32_t lanes_;
  uint16_t link_, sealed_link_;
  std::unique_ptr<auth::Sealer> sealer_;
  uint64_t counter_ = 0;  // of the hellos this member seals
  std::string key_print_;
  struct Life {
    uint64_t incarnation = 0, newest_sent_ms = 0, replaced = 0;
  };
  std::vector<Life> lives_;          // per rank
  std::vector<uint64_t> counters_;   // [rank][lane]: the last sealed hello's counter taken
  uint64_t unsealed_ = 0, bad_tags_ = 0, stale_ = 0;
};

}  // namespace lanecast::engine::bootstrap
