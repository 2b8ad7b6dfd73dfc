#include "engine/group/address_seed.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::engine {
namespace {

// Every group address held by this process's groups, with its seed.
struct Held {
  drivers::PeerAddress mac;
  drivers::GroupAddressSeed seed;
};
std::mutex g_mu;
std::vector<Held>& held() {
  static std::vector<Held> h;
  return h;
}

// splitmix64's finaliser: spreads every input bit over the output.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace

drivers::GroupAddressSeed random_address_seed() {
  drivers::GroupAddressSeed k;
  size_t got = 0;
  while (got < sizeof k.bytes) {
    const ssize_t n = getrandom(k.bytes + got, sizeof k.bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  return k;
}

drivers::GroupAddressSeed address_seed_of(uint32_t group_id, const bootstrap::EndpointTable& table) {
  // Two chains over the same inputs with different starting points: 128 bits.
  uint64_t a = mix(0x6c616e6563617374ull ^ group_id), b = mix(0x67726f75706b6579ull ^ (uint64_t{group_id} << 32));
  a = mix(a ^ table.epoch);
  b = mix(b ^ (uint64_t{table.epoch} << 17));
  // The incarnations carry the randomness; the addresses set apart two
  // static groups (no incarnations) of the same id and epoch on one segment.
  for (const bootstrap::Endpoint& e : table.members) {
    a = mix(a ^ e.incarnation);
    b = mix(b ^ mix(e.incarnation ^ e.rank));
    for (const drivers::PeerAddress& l : e.lanes)
      for (uint8_t i = 0; i < l.len; ++i) {
        a = mix(a ^ (uint64_t{l.bytes[i]} << (8 * (i % 8))));
        b = mix(b ^ l.bytes[i] ^ (uint64_t{i} << 32));
      }
  }
  drivers::GroupAddressSeed k;
  std::memcpy(k.bytes, &a, 8);
  std::memcpy(k.bytes + 8, &b, 8);
  return k;
}

std::optional<AddressSeedClaim> AddressSeedClaim::claim(const drivers::GroupAddressSeed& seed, uint16_t lanes, std::string* clash) {
  std::vector<Held> mine;
  for (uint16_t l = 0; l < lanes; ++l) mine.push_back(Held{drivers::ethernet::group_mac(seed, l), seed});
  std::lock_guard<std::mutex> g(g_mu);
  std::vector<Held>& h = held();
  for (const Held& m : mine)
    for (const Held& x : h)
      if (x.mac == m.mac) {
        if (clash != nullptr)
          *clash = "group address " + drivers::format_address(m.mac) + " is already used by another group of this process";
        return std::nullopt;
      }
  h.insert(h.end(), mine.begin(), mine.end());
  AddressSeedClaim c;
  c.seed_ = seed;
  c.held_ = true;
  return c;
}

AddressSeedClaim AddressSeedClaim::claim_random(uint16_t lanes) {
  for (;;) {  // a clash is a 2^-46 event: the loop runs once
    std::optional<AddressSeedClaim> c = claim(random_address_seed(), lanes, nullptr);
    if (c) return std::move(*c);
  }
}

AddressSeedClaim& AddressSeedClaim::operator=(AddressSeedClaim&& o) noexcept {
  if (this != &o) {
    release();
    seed_ = o.seed_;
    held_ = o.held_;
    o.held_ = false;
  }
  return *this;
}

void AddressSeedClaim::release() {
  if (!held_) return;
  std::lock_guard<std::mutex> g(g_mu);
  std::vector<Held>& h = held();
  for (size_t i = 0; i < h.size();)
    if (h[i].seed == seed_) {
      h.erase(h.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  held_ = false;
}

}  // namespace lanecast::engine
