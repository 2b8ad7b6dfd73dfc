#include "engine/bootstrap/hello_gate.h"

#include <rte_mbuf.h>
#include <sodium.h>
#include <time.h>

#include <cstring>

#include "engine/auth/epoch_keys.h"

namespace lanecast::engine::bootstrap {

uint64_t unix_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

HelloGate::HelloGate(const GroupSpec& spec, uint16_t link, uint16_t sealed_link)
    : lanes_(spec.lanes), link_(link), sealed_link_(sealed_link), lives_(spec.members.size()),
      counters_(spec.members.size() * spec.lanes, 0) {
  if (spec.key) {
    // Hellos are sealed under a key of the group id alone (the formation
    // is what the hellos decide), with a counter random per life.
    sealer_ = std::make_unique<auth::Sealer>(auth::derive_hello_key(*spec.key, spec.id).key);
    randombytes_buf(&counter_, sizeof counter_);
    counter_ >>= 1;
    key_print_ = spec.key->fingerprint();
  }
}

HelloGate::~HelloGate() = default;

void HelloGate::seal(uint8_t* frame, uint16_t link, uint16_t seal_at, uint32_t me) {
  wire::Seal s{};
  s.counter = counter_++;
  // Over the link header too: the source address is what a member learns
  // from a hello, so it is under the tag (its sealed part:
  // Port::sealed_link_bytes; all of an Ethernet header).
  const uint16_t skip = static_cast<uint16_t>(link - sealed_link_);
  sealer_->tag(frame + skip, link - skip + seal_at, me, s.counter, s.tag);
  std::memcpy(frame + link + seal_at, &s, sizeof s);
}

bool HelloGate::seal_opens(const rte_mbuf* m, const wire::Parsed& p, uint64_t* counter) {
  if (!p.sealed) {
    ++unsealed_;
    return false;
  }
  const auto* frame = rte_pktmbuf_mtod(m, const uint8_t*);
  wire::Seal seal;
  std::memcpy(&seal, frame + link_ + p.seal_at, sizeof seal);
  const uint16_t skip = static_cast<uint16_t>(link_ - sealed_link_);
  if (!sealer_->check(frame + skip, link_ - skip + p.seal_at, p.src, seal.counter, seal.tag)) {
    ++bad_tags_;
    return false;
  }
  *counter = seal.counter;
  return true;
}

HelloGate::Verdict HelloGate::check(const rte_mbuf* m, const wire::Parsed& p, uint16_t lane, bool* new_life) {
  *new_life = false;
  uint64_t counter = 0;
  if (sealer_) {
    if (!seal_opens(m, p, &counter)) return Verdict::Refused;
    const int64_t age = static_cast<int64_t>(unix_ms()) - static_cast<int64_t>(p.hello.sent_unix_ms);
    if (age > kHelloMaxAgeMs || age < -kHelloMaxAgeMs) {
      ++stale_;
      return Verdict::Refused;
    }
  }
  Life& life = lives_[p.src];
  uint64_t& last_counter = counters_[size_t{p.src} * lanes_ + lane];  // each lane's hellos count on their own
  const bool known = life.incarnation != 0;
  bool returned = false;
  if (known && p.hello.incarnation == life.incarnation) {
    if (sealer_ && last_counter != 0 && counter <= last_counter) {  // this life's hello sent again
      ++stale_;
      return Verdict::Refused;
    }
  } else if (known && p.hello.sent_unix_ms <= life.newest_sent_ms) {
    ++stale_;  // a life before the one taken: sent again, or a process long gone
    return Verdict::Refused;
  } else {
    returned = known && p.hello.incarnation == life.replaced;
    if (known) life.replaced = life.incarnation;
    for (uint32_t l = 0; l < lanes_; ++l) counters_[size_t{p.src} * lanes_ + l] = 0;
    life.incarnation = p.hello.incarnation;
    *new_life = true;
  }
  if (p.hello.sent_unix_ms > life.newest_sent_ms) life.newest_sent_ms = p.hello.sent_unix_ms;
  if (sealer_) last_counter = counter;
  return returned ? Verdict::Returned : Verdict::Take;
}

}  // namespace lanecast::engine::bootstrap
