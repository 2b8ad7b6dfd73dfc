// A fixed-size bit set sized once in a machine's constructor: the have-bitmap
// of a machine's cursor. No allocation after construction. Its words come from
// the memory resource it is given (a machine's MachineArena, algos/arena.h),
// else from the default resource.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <vector>

namespace lanecast::algos {

class Bitmap {
 public:
  Bitmap() = default;
  explicit Bitmap(uint64_t bits, std::pmr::memory_resource* mem = std::pmr::get_default_resource())
      : words_(words_for(bits), 0, mem), bits_(bits) {}

  // What a Bitmap of `bits` asks its memory resource for (one request).
  static constexpr uint64_t words_for(uint64_t bits) { return (bits + 63) / 64; }
  static constexpr size_t bytes_for(uint64_t bits) {
    return static_cast<size_t>(words_for(bits)) * sizeof(uint64_t);
  }

  uint64_t size() const { return bits_; }
  bool test(uint64_t i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
  void set(uint64_t i) { words_[i >> 6] |= uint64_t{1} << (i & 63); }
  // Sets bit i; returns false when it was already set.
  bool test_and_set(uint64_t i) {
    const uint64_t bit = uint64_t{1} << (i & 63);
    uint64_t& w = words_[i >> 6];
    if (w & bit) return false;
    w |= bit;
    return true;
  }

 private:
  std::pmr::vector<uint64_t> words_;
  uint64_t bits_ = 0;
};

}  // namespace lanecast::algos
