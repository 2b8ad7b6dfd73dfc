// MachineArena itself: a machine lives in it until its MachinePtr goes, which
// rewinds it; one machine at a time; too little room throws and leaves the
// arena free; and neither building, running nor destroying a machine touches
// the heap (counted by the replaced global operator new, heap_counter.h).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "algos/bitmap.h"
#include "algos/registry.h"
#include "tests/algos/arena_helpers.h"
#include "tests/algos/heap_counter.h"

namespace lanecast::algos::testing {
namespace {

using lanecast::testing::HeapWatch;

TEST(Arena, MachineLivesUntilItsPointerGoes) {
  const Plan plan = plan_of(4, 0, 10 * 64, 64);
  MachineArena arena(machine_arena_bytes(4, 1, 10));
  EXPECT_FALSE(arena.busy());
  EXPECT_EQ(arena.used(), 0u);
  MachinePtr m = make_machine(Algo::Linear, plan, 1, arena);
  EXPECT_TRUE(arena.busy());
  const size_t used = arena.used();
  EXPECT_GT(used, 0u);
  EXPECT_LE(used, arena.capacity());
  m.reset();
  EXPECT_FALSE(arena.busy());
  EXPECT_EQ(arena.used(), 0u);
  // Rewound: the next broadcast's machine starts from the same place.
  m = make_machine(Algo::Linear, plan, 1, arena);
  EXPECT_EQ(arena.used(), used);
}

TEST(Arena, OneMachineAtATime) {
  const Plan plan = plan_of(4, 0, 64, 64);
  MachineArena arena(4096);
  MachinePtr first = make_machine(Algo::Chain, plan, 1, arena);
  const size_t used = arena.used();
  EXPECT_THROW(make_machine(Algo::Chain, plan, 2, arena), std::logic_error);
  EXPECT_TRUE(arena.busy());  // the refusal did not rewind the living machine
  EXPECT_EQ(arena.used(), used);
  first.reset();
  EXPECT_NO_THROW(make_machine(Algo::Chain, plan, 2, arena));
}

TEST(Arena, TooSmallThrowsBadAllocAndStaysFree) {
  const Plan plan = plan_of(4, 0, 1000 * 64, 64);
  // No room for the machine object itself.
  MachineArena tiny(16);
  try {
    make_machine(Algo::Linear, plan, 1, tiny);
    ADD_FAILURE() << "a 16-byte arena held a machine";
  } catch (const std::bad_alloc& e) {
    EXPECT_NE(std::string(e.what()).find("machine arena exhausted"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(tiny.busy());
  EXPECT_EQ(tiny.used(), 0u);
  // Room for the object, not its bitmap: the constructor throws half way.
  MachineArena small(machine_arena_bytes(Algo::Linear, 4, 1, 0));
  EXPECT_NO_THROW(make_machine(Algo::Linear, plan, 0, small));  // the root keeps no bitmap
  EXPECT_THROW(make_machine(Algo::Linear, plan, 1, small), ArenaExhausted);
  EXPECT_FALSE(small.busy());
  EXPECT_EQ(small.used(), 0u);
  // Bad arguments are refused before the arena is touched.
  EXPECT_THROW(make_machine(Algo::Linear, plan, 4, small), std::invalid_argument);
  EXPECT_THROW(make_machine(static_cast<Algo>(0), plan, 0, small), std::invalid_argument);
  EXPECT_FALSE(small.busy());
}

TEST(Arena, MachineStartsOnACacheLine) {
  const Plan plan = plan_of(8, 3, 100, 8);
  MachineArena arena(machine_arena_bytes(8, 2, 13));
  for (const AlgoInfo& a : algorithms()) {
    MachinePtr m = make_machine(a.id, plan, 5, arena);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m.get()) % 64, 0u) << a.name;
  }
}

// The bound is a sum of sizes: without segments it is the largest machine
// object whatever the group (the registered machines keep no per-rank table);
// max_segments adds at most two bitmaps (mcast_chain's have-bitmap and what
// its successor asked for); lanes change nothing; and it does not overflow at
// the largest plan.
TEST(Arena, BoundIsObjectsPlusTwoBitmaps) {
  const size_t base = machine_arena_bytes(1, 1, 0);
  EXPECT_LE(base, 512u);  // a few hundred bytes
  for (uint32_t p : {1u, 2u, 3u, 64u, 1000u, 4096u, 1u << 20})
    for (uint32_t m : {0u, 1u, 1000u, UINT32_MAX}) {
      const size_t bound = machine_arena_bytes(p, 1, m);
      const size_t bitmap = arena_block(Bitmap::bytes_for(m));
      EXPECT_EQ(machine_arena_bytes(p, 1, 0), base) << "p " << p;
      EXPECT_LE(bound, base + 2 * bitmap) << "p " << p << " m " << m;
      EXPECT_GE(bound, bitmap) << "p " << p << " m " << m;
      for (uint16_t lanes : {2, 4}) EXPECT_EQ(machine_arena_bytes(p, lanes, m), bound);
    }
}

// A FIFO executor whose one queue is reserved up front, so that any heap
// call while it runs is a machine's.
class FifoRun final : public Actions {
 public:
  explicit FifoRun(std::vector<MachinePtr>& machines, size_t capacity) : machines_(machines) {
    events_.reserve(capacity);
  }
  void send(Rank to, SegmentIndex seg, Lane) override { push({Event::Segment, to, me_, seg}); }
  void multicast(SegmentIndex seg, Lane) override {
    for (Rank r = 0; r < machines_.size(); ++r)
      if (r != me_) push({Event::Segment, r, me_, seg});
  }
  void deliver(SegmentIndex) override { ++delivered; }
  void arm(uint64_t, uint32_t tag) override { push({Event::Timer, me_, me_, tag}); }
  void signal(Rank to, uint32_t tag) override { push({Event::Signal, to, me_, tag}); }

  void run() {
    for (me_ = 0; me_ < machines_.size(); ++me_) machines_[me_]->start(*this);
    for (size_t head = 0; head < events_.size(); ++head) {
      const Event e = events_[head];
      me_ = e.to;
      Machine& m = *machines_[e.to];
      if (e.kind == Event::Segment) m.on_segment(e.value, e.from, 0, *this);
      if (e.kind == Event::Timer) m.on_timer(e.value, *this);
      if (e.kind == Event::Signal) m.on_signal(e.from, e.value, *this);
    }
  }

  uint64_t delivered = 0;
  bool overflow = false;

 private:
  struct Event {
    enum Kind : uint8_t { Segment, Timer, Signal } kind;
    Rank to, from;
    uint32_t value;  // segment or tag
  };
  void push(const Event& e) {
    if (events_.size() == events_.capacity()) overflow = true;
    else events_.push_back(e);
  }

  std::vector<MachinePtr>& machines_;
  std::vector<Event> events_;
  Rank me_ = 0;
};

// Every algorithm, a whole broadcast: building every rank's machine in its
// arena, running it to the end (timers and signals included: mcast_chain with
// both of its options) and destroying it make no heap call, and no machine
// takes arena bytes after its construction.
TEST(Arena, WholeBroadcastTouchesNoHeap) {
  for (const AlgoInfo& a : algorithms())
    for (uint32_t p : {1u, 2u, 7u, 8u, 13u}) {
      SCOPED_TRACE(std::string(a.name) + " p " + std::to_string(p));
      constexpr uint32_t m = 13, s = 8;
      PlanParams pp;
      pp.nodes = p;
      pp.root = p / 2;
      pp.lanes = 2;
      pp.message_bytes = m * s - 3;
      pp.segment_bytes = s;
      pp.op = 5;
      pp.algo.root_delay_ns = 1000;
      pp.algo.sync_seed = 77;
      const Plan plan(pp);
      std::vector<std::unique_ptr<MachineArena>> arenas;  // an arena does not move
      for (Rank r = 0; r < p; ++r) arenas.push_back(std::make_unique<MachineArena>(machine_arena_bytes(p, 2, m)));
      std::vector<MachinePtr> machines;
      machines.reserve(p);
      FifoRun run(machines, 4 * size_t{p} * p * (m + 1) + 16);
      std::vector<size_t> used;
      used.reserve(p);
      {
        const HeapWatch heap;
        for (Rank r = 0; r < p; ++r) machines.push_back(make_machine(a.id, plan, r, *arenas[r]));
        for (Rank r = 0; r < p; ++r) used.push_back(arenas[r]->used());
        run.run();
        EXPECT_EQ(heap.allocations(), 0u);
        EXPECT_EQ(heap.frees(), 0u);
      }
      EXPECT_FALSE(run.overflow);
      EXPECT_EQ(run.delivered, uint64_t{p - 1} * m);
      for (Rank r = 0; r < p; ++r) {
        EXPECT_TRUE(machines[r]->done()) << "rank " << r;
        EXPECT_EQ(arenas[r]->used(), used[r]) << "rank " << r;
      }
      const HeapWatch heap;
      for (MachinePtr& mp : machines) mp.reset();
      EXPECT_EQ(heap.allocations(), 0u);
      EXPECT_EQ(heap.frees(), 0u);
      for (const auto& arena : arenas) EXPECT_FALSE(arena->busy());
    }
}

// The machines a group shape changes (hypercube's order, multilane's sites)
// fit the bound machine_arena_bytes gives for that shape, for every root,
// touch no heap and deliver every segment.
TEST(Arena, ShapedMachinesFitTheirBound) {
  for (Algo algo : {Algo::Hypercube, Algo::Multilane})
    for (uint32_t p : {2u, 7u, 8u, 13u})
      for (Rank root = 0; root < p; ++root) {
        SCOPED_TRACE(std::string(algo_info(algo).name) + " p " + std::to_string(p) + " root " + std::to_string(root));
        constexpr uint32_t m = 13, s = 8;
        std::vector<Rank> order(p);
        std::vector<uint32_t> sites(p);
        for (Rank r = 0; r < p; ++r) {
          order[r] = p - 1 - r;
          sites[r] = r % 3;
        }
        const GroupShape shape{order, sites};
        PlanParams pp;
        pp.nodes = p;
        pp.root = root;
        pp.lanes = 2;
        pp.message_bytes = m * s - 3;
        pp.segment_bytes = s;
        const Plan plan(pp);
        std::vector<std::unique_ptr<MachineArena>> arenas;
        for (Rank r = 0; r < p; ++r)
          arenas.push_back(std::make_unique<MachineArena>(machine_arena_bytes(p, 2, m, shape)));
        std::vector<MachinePtr> machines;
        machines.reserve(p);
        FifoRun run(machines, 4 * size_t{p} * p * (m + 1) + 16);
        {
          const HeapWatch heap;
          for (Rank r = 0; r < p; ++r) machines.push_back(make_machine(algo, plan, r, *arenas[r], shape));
          run.run();
          EXPECT_EQ(heap.allocations(), 0u);
        }
        EXPECT_FALSE(run.overflow);
        EXPECT_EQ(run.delivered, uint64_t{p - 1} * m);
        for (Rank r = 0; r < p; ++r) EXPECT_TRUE(machines[r]->done()) << "rank " << r;
      }
}

// The heap overload still uses the heap (the counter sees it): the test above
// would notice a machine that did.
TEST(Arena, HeapOverloadIsCounted) {
  const Plan plan = plan_of(4, 0, 64 * 64, 64);
  const HeapWatch heap;
  auto m = make_machine(Algo::Linear, plan, 1);
  EXPECT_EQ(heap.allocations(), 2u);  // the machine and its bitmap
}

}  // namespace
}  // namespace lanecast::algos::testing
