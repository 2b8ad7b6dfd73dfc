// A block of bytes aligned to a cache line (rings of records lay their
// indexes out on lines of their own), freed the way it was allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace lanecast::engine::stream {

struct FreeBytes {
  void operator()(uint8_t* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<uint8_t[], FreeBytes>;

inline AlignedBytes aligned_bytes(size_t n) {
  void* p = std::aligned_alloc(64, (n + 63) & ~size_t{63});
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBytes(static_cast<uint8_t*>(p));
}

}  // namespace lanecast::engine::stream
