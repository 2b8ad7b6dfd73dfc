// A port that does to frames what networks do: loses them (at random, or in
// Gilbert-Elliott bursts), reorders, duplicates, corrupts and delays them -
// on the frames it receives, on the frames it sends, or both, per link
// (the peer at the other end) and for unicast or multicast frames, as the
// rules of its FaultPortOptions say (fault_options.h). A test of everything
// above the port that a real network would do sooner or later, seeded and
// repeatable: a link's faults depend on the seed and that link's frames, not
// on time (fault_draw.h).
//
// What it does to a frame, in order: lost (freed, counted); duplicated (a
// clone: a second mbuf, as the engine frees each frame it is given); then for
// each copy: corrupted (a byte past the link header, so the frame still goes
// where it was going; frames whose bytes are shared - a forwarded payload, a
// multicast copy - are copied first, never changed under their other
// owners), set aside until later frames of its link overtook it, and held
// for its delay. Frames of a link leave in the order they came, but for
// those set aside.
//
// It holds frames on the clock it was given, like DelayPort: held_until_ns()
// says when the next is due, and the engine's core does not sleep past it.
// It takes from the port below (or from the sender) only what it has room to
// hold, so back-pressure, not loss, is what a full queue does. Frames held on
// the way out leave at the next call of either burst function on their lane.
// Everything it holds is freed when it goes. Ethernet framing only (the link
// header is a MAC header: the rules match MACs).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "drivers/fault/fault_draw.h"
#include "drivers/fault/fault_options.h"
#include "drivers/fault/fault_queues.h"
#include "drivers/forwarding_port.h"

namespace lanecast::drivers {

class FaultPort final : public ForwardingPort {
 public:
  // Wraps `inner` (owned, or not: the fabric owns its ring ports). Throws
  // std::invalid_argument for options out of range (each named), two rules
  // for the same frames, a missing clock or pool, or a port that is not
  // Ethernet.
  FaultPort(std::unique_ptr<Port> inner, const FaultPortOptions& o);
  FaultPort(Port& inner, const FaultPortOptions& o);
  ~FaultPort() override;  // frees every frame it holds
  FaultPort(const FaultPort&) = delete;
  FaultPort& operator=(const FaultPort&) = delete;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override;
  std::string name() const override { return in_.name() + " (faults)"; }
  PortStats stats() const override;
  uint64_t held_until_ns() const override;

  FaultStats counts(FaultWay way) const;  // from any thread
  uint64_t frames_held() const;           // now, every lane and way (the polling core's view)

 private:
  // Written by the polling core only, read by anyone (relaxed).
  class Count {
   public:
    void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
    uint64_t get() const { return v_.load(std::memory_order_relaxed); }

   private:
    std::atomic<uint64_t> v_{0};
  };
  struct Counts {
    Count lost, burst_lost, reordered, duplicated, corrupted_header, corrupted_payload, delayed, no_buffer;
  };
  struct Link {
    fault::LinkDraws draws;
    uint64_t last_due_ns = 0;  // its frames leave in order
    uint16_t profile[2] = {};  // unicast, multicast: an index into profiles_, 0 = none
  };
  // One lane of one way.
  struct Line {
    Line(uint32_t ready, uint32_t delayed, uint32_t aside) : ready(ready), delayed(delayed), aside(aside) {}
    fault::FrameRing ready;
    fault::DueHeap delayed;
    fault::AsideList aside;
    std::vector<Link> links;  // by link index; the last one: every other address
  };
  struct Way {
    bool active = false;  // some rule applies to some frame
    bool holds = false;   // some profile delays
    bool reorders = false;
    uint32_t ready_cap = 0, delayed_cap = 0, aside_cap = 0;
    std::vector<Line> lanes;
    Counts counts;
  };

  void setup(const FaultPortOptions& o);
  uint32_t link_of(const uint8_t* address) const;
  uint16_t resolve(const std::vector<FaultRule>& rules, FaultWay way, const PeerAddress* peer, bool multicast) const;
  uint32_t admissible(const Way& w, const Line& l) const;
  void take(Way& w, Line& l, rte_mbuf* m, bool receiving, uint64_t now);
  rte_mbuf* corrupt(Way& w, rte_mbuf* m, const fault::CopyFate& c);
  void place(Way& w, Line& l, uint32_t link, rte_mbuf* m, uint64_t hold_ns, uint64_t now);
  void go_on(Way& w, Line& l, uint32_t link, rte_mbuf* m, uint64_t hold_ns, uint64_t now);
  void release_due(Way& w, Line& l, uint64_t now);
  void flush_tx(uint16_t lane, uint64_t now);
  static void free_all(Line& l);

  uint64_t (*clock_)() = nullptr;
  rte_mempool* clone_pool_ = nullptr;
  rte_mempool* copy_pool_ = nullptr;
  uint16_t header_bytes_ = 0;
  uint64_t reorder_hold_ns_ = 0;
  std::vector<std::pair<PeerAddress, uint32_t>> link_index_;  // sorted by address
  std::vector<fault::Compiled> profiles_;                      // [0]: no faults
  Way rx_, tx_;
};

}  // namespace lanecast::drivers
