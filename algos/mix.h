// SplitMix64 (S. Vigna's finaliser of Java's SplittableRandom): a cheap, well
// mixed 64-bit hash and a seedable stream built on it. Pure and deterministic,
// so every member of a group draws the same values from the same seed.
#pragma once

#include <cstdint>

namespace lanecast::algos {

// Mixes x into a 64-bit value whose bits all depend on all of x's.
inline constexpr uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The next value of the stream whose state is `state` (advanced in place).
inline constexpr uint64_t splitmix64(uint64_t& state) { return mix64(state += 0x9e3779b97f4a7c15ull); }

}  // namespace lanecast::algos
