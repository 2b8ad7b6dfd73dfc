#include "engine/bootstrap/endpoints.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>

namespace lanecast::engine::bootstrap {
namespace {

// FNV-1a, 64 bit: enough to tell group files apart, not a defence.
struct Fnv {
  uint64_t h = 0xcbf29ce484222325ULL;
  void bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ULL;
  }
  void str(const std::string& s) {
    bytes(s.data(), s.size());
    u64(s.size());
  }
  void u64(uint64_t v) { bytes(&v, sizeof v); }
};

}  // namespace

bool same_addresses(const EndpointTable& a, const EndpointTable& b) {
  if (a.members.size() != b.members.size()) return false;
  for (size_t r = 0; r < a.members.size(); ++r) {
    const Endpoint& x = a.members[r];
    const Endpoint& y = b.members[r];
    if (x.rank != y.rank || x.lanes.size() != y.lanes.size()) return false;
    for (size_t l = 0; l < x.lanes.size(); ++l)
      if (!(x.lanes[l] == y.lanes[l])) return false;
  }
  return true;
}

std::string describe(const EndpointTable& t, std::string (*format)(const drivers::PeerAddress&)) {
  std::string s;
  for (const Endpoint& e : t.members)
    for (size_t l = 0; l < e.lanes.size(); ++l)
      s += "rank " + std::to_string(e.rank) + " lane " + std::to_string(l) + " " + format(e.lanes[l]) + "\n";
  return s;
}

std::string describe(const EndpointTable& t) { return describe(t, &format_address); }

uint64_t spec_digest(const GroupSpec& s) {
  Fnv f;
  f.str(s.name);
  f.u64(s.id);
  f.u64(s.members.size());
  f.u64(s.lanes);
  f.str(s.algo);
  f.u64(s.segment_bytes);
  f.u64(s.max_message_bytes);
  f.u64(s.window);
  f.bytes(&s.peer_timeout_ms, sizeof s.peer_timeout_ms);
  // mcast_chain's root waits for what every member must do alike.
  f.bytes(&s.mcast_root_delay_us, sizeof s.mcast_root_delay_us);
  f.u64(s.mcast_sync_seed);
  f.u64(s.mcast_repair_on_request ? 1 : 0);
  // With a key or without: members that disagree could not read each other.
  f.u64(s.key != nullptr ? 1 : 0);
  return f.h;
}

uint64_t fresh_incarnation() {
  // The kernel's CSPRNG (getrandom(2)): two processes started at once still
  // differ, and a group's multicast key is derived from these
  // (engine/group/address_seed.h). The clock and pid only if getrandom fails.
  uint64_t x = 0;
  if (getrandom(&x, sizeof x, 0) != static_cast<ssize_t>(sizeof x)) {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    x = uint64_t(ts.tv_sec) * 1'000'000'000 + uint64_t(ts.tv_nsec) + (uint64_t(getpid()) << 40);
  }
  return x != 0 ? x : 1;
}

uint32_t epoch_of(uint32_t group_id, const std::vector<Endpoint>& members) {
  Fnv f;
  f.u64(group_id);
  for (const Endpoint& e : members) f.u64(e.incarnation);
  const auto e = static_cast<uint32_t>(f.h ^ (f.h >> 32));
  return e != 0 ? e : 1;
}

uint64_t formation_of(uint32_t group_id, const std::vector<Endpoint>& members) {
  Fnv f;
  f.str("formation");
  f.u64(group_id);
  for (const Endpoint& e : members) f.u64(e.incarnation);
  return f.h != 0 ? f.h : 1;
}

}  // namespace lanecast::engine::bootstrap
