// The algorithm interface: one Machine per node per broadcast, reacting to events
// with actions. Machines know nothing of packets, mbufs or clocks; the executor
// (the engine, the model executor, the simulator) owns those.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "algos/plan.h"
#include "algos/types.h"

namespace lanecast::algos {

// Where a machine's decisions go. The engine turns send() into a reliable
// transmission of the segment's bytes to `to`; deliver() into a copy of the
// segment into the application's buffer. Executors implement this sink directly
// so that no action list is ever buffered or allocated.
class Actions {
 public:
  // Send segment `seg` (which this node must hold) to rank `to` on `lane`.
  // The channel is reliable, but segments may arrive in any order.
  virtual void send(Rank to, SegmentIndex seg, Lane lane) = 0;
  // Multicast segment `seg` (which this node must hold) on `lane` to every other
  // member of the group: one unreliable datagram. Each receiver gets one copy or
  // none (lost independently per receiver); the network never duplicates it, but
  // a copy may arrive after, or alongside, a send() of the same segment. A
  // machine that multicasts repairs losses itself; no executor requires a
  // multicast copy to arrive. At most once per segment per sender.
  virtual void multicast(SegmentIndex seg, Lane lane) = 0;
  // Segment `seg` is part of this node's result. Exactly once per segment on
  // every non-root node; never on the root (it already holds the message).
  virtual void deliver(SegmentIndex seg) = 0;
  // arm() and signal() are for the few machines that wait (mcast_chain's
  // options). Every executor in the tree implements them; the default throws,
  // so a sink written without them fails loudly instead of dropping a timer.
  //
  // Timer: on_timer(tag) is called on this machine once, after at least
  // `after_ns` of the executor's time (the engine's clock, the simulator's
  // virtual time; the model executor has no time and fires it at any legal
  // point after this call, also before every other pending event). At most
  // one timer pending per machine: arming a second before the first fired is
  // an error, and so is reporting done() while one is pending.
  virtual void arm(uint64_t after_ns, uint32_t tag) {
    (void)after_ns, (void)tag;
    throw std::logic_error("Actions::arm: this executor has no timers");
  }
  // Control message: on_signal(me, tag) is called on the machine of rank `to`
  // (not this node). Reliable like send(), carries no payload, and arrives
  // after `to` started, in any order relative to other sends. A signal to a
  // machine that is already done() may be dropped: a machine that needs a
  // signal must not report done() before it arrived.
  virtual void signal(Rank to, uint32_t tag) {
    (void)to, (void)tag;
    throw std::logic_error("Actions::signal: this executor has no control messages");
  }

 protected:
  ~Actions() = default;
};

class Machine {
 public:
  virtual ~Machine() = default;
  // Called once on every node when its part of the operation is posted, before
  // any on_segment. The root emits its first sends here.
  virtual void start(Actions& out) = 0;
  // A segment arrived from `from` on `lane`. Called for every arrival the
  // reliable channel accepts, and for every multicast copy that arrives; an
  // algorithm in which a segment can reach a node twice must ignore the second
  // copy itself.
  virtual void on_segment(SegmentIndex seg, Rank from, Lane lane, Actions& out) = 0;
  // The timer this machine armed with `tag` expired (see Actions::arm). Only
  // machines that arm timers receive it.
  virtual void on_timer(uint32_t tag, Actions& out) {
    (void)tag, (void)out;
    throw std::logic_error("Machine::on_timer: this machine arms no timers");
  }
  // A signal (Actions::signal) from rank `from`. A machine that expects none
  // ignores it.
  virtual void on_signal(Rank from, uint32_t tag, Actions& out) { (void)from, (void)tag, (void)out; }
  // True once this node holds every segment and has emitted every send it owes.
  virtual bool done() const = 0;
};

}  // namespace lanecast::algos
