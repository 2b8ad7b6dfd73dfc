#include "apps/common/pattern.h"

#include <cstring>

namespace lanecast::apps {
namespace {

// xorshift64: cheap, and no two nearby seeds give overlapping streams.
template <class F>
void walk(size_t size, uint64_t seed, F&& f) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (!f(i, x, 8)) return;
  }
  if (i < size) f(i, x, size - i);
}

}  // namespace

void fill_pattern(std::span<std::byte> b, uint64_t seed) {
  walk(b.size(), seed, [&](size_t at, uint64_t x, size_t n) {
    std::memcpy(&b[at], &x, n);
    return true;
  });
}

size_t check_pattern(std::span<const std::byte> b, uint64_t seed) {
  size_t bad = b.size();
  walk(b.size(), seed, [&](size_t at, uint64_t x, size_t n) {
    if (std::memcmp(&b[at], &x, n) == 0) return true;
    for (size_t k = 0; k < n; ++k)
      if (b[at + k] != static_cast<std::byte>(x >> (8 * k))) {
        bad = at + k;
        break;
      }
    return false;
  });
  return bad;
}

}  // namespace lanecast::apps
