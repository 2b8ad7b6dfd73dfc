// A fixed-size bit set sized once in a machine's constructor: the have-bitmap
// of a machine's cursor. No allocation after construction.
#pragma once

#include <cstdint>
#include <vector>

namespace lanecast::algos {

class Bitmap {
 public:
  Bitmap() = default;
  explicit Bitmap(uint64_t bits) : words_((bits + 63) / 64, 0), bits_(bits) {}

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
  std::vector<uint64_t> words_;
  uint64_t bits_ = 0;
};

}  // namespace lanecast::algos
