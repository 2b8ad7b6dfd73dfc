// A preallocated home for one broadcast's machine. The engine's rule is that
// the polling core allocates nothing per broadcast: the group owns one
// MachineArena, sized once (machine_arena_bytes() in registry.h) when the group
// is created, and every broadcast builds its machine in it with
// make_machine(algo, plan, me, arena). The machine object and everything it
// allocates (its have-bitmap, vectors, layouts: std::pmr containers over
// resource()) are carved from the arena's one buffer by bump allocation;
// destroying the MachinePtr runs the destructor and rewinds the arena, so the
// next broadcast starts from an empty buffer again. Nothing is freed on the
// heap, and nothing falls back to it: a request the buffer cannot hold throws
// ArenaExhausted (a std::bad_alloc).
//
// Accounting, so that a bound can be a plain sum of sizes: every block the
// arena hands out starts on, and takes a whole number of, kArenaAlign-byte
// units (alignof(std::max_align_t)); an object that needs more alignment is
// refused at compile time (MachineArena::make) or padded (the resource).
// arena_block(n) is what a request of n bytes costs.
//
// Why not std::pmr::monotonic_buffer_resource: it cannot say how much of its
// buffer it used, and its padding depends on the order of requests; this one
// is as small and its cost per request is a formula.
#pragma once

#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "algos/machine.h"

namespace lanecast::algos {

inline constexpr size_t kArenaAlign = alignof(std::max_align_t);

// The arena bytes one request of `bytes` takes.
inline constexpr size_t arena_block(size_t bytes) {
  return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

// Thrown when a machine asks its arena for more than is left. A std::bad_alloc,
// so code that handles allocation failure handles this; what() names the sizes.
class ArenaExhausted : public std::bad_alloc {
 public:
  ArenaExhausted(size_t requested, size_t used, size_t capacity) noexcept;
  const char* what() const noexcept override { return what_; }

 private:
  char what_[128];
};

class MachineArena;

// Destroys an arena-made machine and rewinds its arena; frees nothing.
struct MachineRelease {
  MachineArena* arena = nullptr;
  void operator()(Machine* m) const noexcept;
};

// The owner of a machine built in a MachineArena. The arena must outlive it.
using MachinePtr = std::unique_ptr<Machine, MachineRelease>;

class MachineArena {
 public:
  // Allocates (and touches, so that the polling core never page-faults on
  // it) a buffer of `bytes`. Throws std::bad_alloc when the heap cannot.
  explicit MachineArena(size_t bytes);
  ~MachineArena();  // no machine may still live in it
  MachineArena(const MachineArena&) = delete;
  MachineArena& operator=(const MachineArena&) = delete;

  size_t capacity() const { return bump_.capacity(); }
  // Bytes the living machine took, its own object included; 0 when free.
  size_t used() const { return bump_.used(); }
  bool busy() const { return busy_; }

  // Builds one M (a Machine) in the arena, passing resource() as the last
  // constructor argument for M's containers. One machine at a time: throws
  // std::logic_error while another lives here. If M's constructor throws
  // (ArenaExhausted included), the arena is free again.
  template <class M, class... Args>
  MachinePtr make(Args&&... args);

 private:
  friend struct MachineRelease;

  // Bump allocation over one buffer; deallocation is a no-op (rewind() frees
  // everything at once).
  class Bump final : public std::pmr::memory_resource {
   public:
    explicit Bump(size_t bytes);
    ~Bump() override;
    size_t capacity() const { return capacity_; }
    size_t used() const { return used_; }
    void rewind() { used_ = 0; }

   private:
    void* do_allocate(size_t bytes, size_t align) override;
    void do_deallocate(void*, size_t, size_t) override {}
    bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override { return this == &o; }

    std::byte* buffer_;
    size_t capacity_;
    size_t used_ = 0;
  };

  void release() noexcept {
    bump_.rewind();
    busy_ = false;
  }

  Bump bump_;
  bool busy_ = false;
};

inline void MachineRelease::operator()(Machine* m) const noexcept {
  m->~Machine();
  arena->release();
}

template <class M, class... Args>
MachinePtr MachineArena::make(Args&&... args) {
  static_assert(std::is_base_of_v<Machine, M>, "MachineArena holds machines");
  static_assert(alignof(M) <= kArenaAlign, "arena blocks are aligned to kArenaAlign only");
  if (busy_) throw std::logic_error("machine arena: a machine still lives in it (one broadcast at a time)");
  busy_ = true;
  try {
    void* at = bump_.allocate(sizeof(M), alignof(M));
    Machine* m = ::new (at) M(std::forward<Args>(args)..., static_cast<std::pmr::memory_resource*>(&bump_));
    return MachinePtr(m, MachineRelease{this});
  } catch (...) {
    release();
    throw;
  }
}

// The heap form of MachineArena::make, for the make_* overloads without an
// arena (model executor, simulator, tests): M's containers use the default
// memory resource.
template <class M, class... Args>
std::unique_ptr<Machine> make_on_heap(Args&&... args) {
  return std::make_unique<M>(std::forward<Args>(args)..., std::pmr::get_default_resource());
}

}  // namespace lanecast::algos
