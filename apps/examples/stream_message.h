// The messages the example publisher sends and the example subscriber
// checks: who sent it (a publisher id the user picks), its number, and bytes
// any reader can recompute from those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace lanecast::examples {

inline constexpr uint32_t kMagic = 0x5845434c;  // "LCEX"
inline constexpr size_t kHead = 16;

inline std::byte pattern(uint32_t id, uint64_t seq, size_t i) {
  return static_cast<std::byte>((seq * 31 + id * 7 + i * 13) & 0xff);
}

inline void make_message(std::vector<std::byte>& m, uint32_t id, uint64_t seq, size_t size) {
  m.resize(std::max(size, kHead));
  std::memcpy(m.data(), &kMagic, 4);
  std::memcpy(m.data() + 4, &id, 4);
  std::memcpy(m.data() + 8, &seq, 8);
  for (size_t i = kHead; i < m.size(); ++i) m[i] = pattern(id, seq, i);
}

// True when the bytes start as such a message does (its magic): a message
// of this format, intact or not.
inline bool is_example(std::span<const std::byte> m) {
  uint32_t magic;
  if (m.size() < kHead) return false;
  std::memcpy(&magic, m.data(), 4);
  return magic == kMagic;
}

// False when the bytes are not such a message; else its id and number.
inline bool read_message(std::span<const std::byte> m, uint32_t* id, uint64_t* seq) {
  uint32_t magic;
  if (m.size() < kHead) return false;
  std::memcpy(&magic, m.data(), 4);
  std::memcpy(id, m.data() + 4, 4);
  std::memcpy(seq, m.data() + 8, 8);
  if (magic != kMagic) return false;
  for (size_t i = kHead; i < m.size(); ++i)
    if (m[i] != pattern(*id, *seq, i)) return false;
  return true;
}

}  // namespace lanecast::examples
