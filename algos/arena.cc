#include "algos/arena.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace lanecast::algos {
namespace {

// The buffer starts on a cache line: the machine object comes first in it,
// and it is the polling core's to touch alone.
constexpr std::align_val_t kBufferAlign{64};

}  // namespace

ArenaExhausted::ArenaExhausted(size_t requested, size_t used, size_t capacity) noexcept {
  std::snprintf(what_, sizeof what_,
                "machine arena exhausted: %zu bytes requested, %zu of %zu in use (see machine_arena_bytes)",
                requested, used, capacity);
}

MachineArena::Bump::Bump(size_t bytes)
    : buffer_(static_cast<std::byte*>(::operator new(bytes, kBufferAlign))), capacity_(bytes) {
  std::memset(buffer_, 0, capacity_);  // fault the pages in now, not on the polling core
}

MachineArena::Bump::~Bump() { ::operator delete(buffer_, kBufferAlign); }

void* MachineArena::Bump::do_allocate(size_t bytes, size_t align) {
  const uintptr_t unit = std::max(align, kArenaAlign);
  const uintptr_t base = reinterpret_cast<uintptr_t>(buffer_);
  const size_t at = static_cast<size_t>((base + used_ + unit - 1) / unit * unit - base);
  if (bytes > capacity_ || at > capacity_ || arena_block(bytes) > capacity_ - at)
    throw ArenaExhausted(bytes, used_, capacity_);
  used_ = at + arena_block(bytes);
  return buffer_ + at;
}

MachineArena::MachineArena(size_t bytes) : bump_(bytes) {}

MachineArena::~MachineArena() { assert(!busy_ && "a MachinePtr outlives its arena"); }

}  // namespace lanecast::algos
