// The node's transport: one reliable channel per (peer, lane), what each
// owes its peer, and the order they send in. The part of a node that owns
// the channels, the flight slabs they borrow, the owed runs and the lists
// the transmit path walks - the heaps of channels that owe something (keyed
// by the machine's order of sends), the channels holding frames in flight,
// those with frames to send again - and their counters.
//
// It knows nothing of frames, mbufs or ports: the node builds and sends
// (node_tx.cc) through the callbacks of send_owed() and send_resends(); this
// part decides who goes next and keeps the books (owed, in flight, slabs).
// Everything is sized at construction; nothing allocates afterwards but
// grow_runs(), which a stream calls when it opens.
//
// Owed sends go out in the order they were owed (stamps), across peers, as
// the simulator models it: a forwarder sends segment s to each child before
// segment s+1 to any. Serving one peer's whole backlog before the next
// instead made symmetric's receivers take turns flooding one peer at a time
// (a 300-frame queue on one downlink of a shaped 8-node fabric while others
// idled).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "algos/machine.h"
#include "engine/node/owed_runs.h"
#include "engine/reliable/flight_pool.h"
#include "engine/reliable/recv_channel.h"
#include "engine/reliable/send_channel.h"
#include "engine/runtime/counter.h"

namespace lanecast::engine {

class Channels {
 public:
  // One reliable channel: this node and one peer, on one lane.
  struct Channel {
    reliable::SendChannel tx;
    reliable::RecvChannel rx;
    OwedList owed;              // what the machine or a stream asked to send, not yet sent
    uint32_t peer = 0;
    uint16_t lane = 0;
    bool listed = false;        // in ready_ or waiting_ (it owes something)
    bool in_resend = false;     // in resend_
    uint32_t active_index = UINT32_MAX;  // position in active_ while it holds a slab
  };
  struct Counters {
    Counter owed_runs_exhausted;  // the owed-runs pool ran out: the broadcast failed
    Counter fast_retransmits;     // acks that revealed holes (each hole sent again once)
    Counter rto_timeouts;         // a channel's timer expired: nothing acknowledged for an RTO
    Counter rto_spurious;         // of those, shown late, not lost, by acks of frames sent once (F-RTO)
  };
  // What the node did with the item send_owed() offered it.
  enum class Step : uint8_t {
    kSent,      // a frame went out: the item is in flight
    kLetGo,     // nothing to send any more (a stream batch let go): the item is done
    kWait,      // not now (its window is closed, or its lane was blocked): the channel waits
    kLaneFull,  // its lane has no room this turn: nothing more goes on that lane
    kStop,      // a pool is empty: stop, try again next turn
  };
  // A Step, and for kSent and kLetGo how many items of the run offered
  // (OwedItem::run) it took: a callback sending a run at once says so.
  struct Outcome {
    Outcome(Step s, uint32_t n = 1) : step(s), items(n) {}  // NOLINT: a Step alone is one item
    Step step;
    uint32_t items;
  };
  static constexpr uint16_t kMaxLanes = 32;  // lanes a bit mask holds

  // Slabs: channels with frames in flight at once. Runs: owed runs to start
  // with (owed_runs.h).
  Channels(uint32_t nodes, uint16_t lanes, uint32_t window, const reliable::RttParams& rtt, uint32_t slabs,
           uint32_t runs, Counters& counters);
  Channels(const Channels&) = delete;
  Channels& operator=(const Channels&) = delete;

  Channel& at(algos::Rank peer, uint16_t lane) { return channels_[size_t{peer} * lanes_ + lane]; }
  Channel& operator[](uint32_t id) { return channels_[id]; }
  uint32_t id_of(const Channel& c) const { return static_cast<uint32_t>(&c - channels_.data()); }

  // ------------------------------------------------------------ owed work
  // The next owed item of every channel is ordered after every item owed so
  // far; a broadcast starts its order afresh.
  void restart_order() { next_stamp_ = 0; }
  // False (counted) when the owed runs ran out.
  bool owe_segment(Channel& c, uint32_t segment) { return owed(c, c.owed.push(runs_, segment, next_stamp_++)); }
  bool owe_signal(Channel& c, uint32_t tag) { return owed(c, c.owed.push_signal(runs_, tag, next_stamp_++)); }
  bool owe_batch(Channel& c, uint32_t batch_low, uint16_t slot) {
    return owed(c, c.owed.push(runs_, batch_low, next_stamp_++, slot));
  }
  void grow_runs(uint32_t extra) { runs_.grow(extra); }
  uint64_t owed() const { return owed_total_; }        // items owed over every channel
  uint64_t unacked() const { return unacked_total_; }  // frames in flight over every channel

  // ------------------------------------------------------------ sending
  // Owed sends in the order they were owed, within each channel's window:
  // free slabs go to the waiting channels owed the earliest items, then the
  // channel whose next item is earliest is offered it -
  //   send(Channel&, const OwedItem&, bool may_send) -> Step or Outcome
  // (may_send: its window is open and its lane not blocked; the item's
  // `run` says how many items of its run come before anything owed to
  // another channel, so a callback may send them as one burst and say how
  // many it took in an Outcome) - until every
  // channel waits, owes nothing, or every lane is blocked. Lanes in
  // `blocked_lanes` (a bit each) send nothing this turn. kSent and kLetGo
  // take the item off the channel's list; the callback pushes a sent frame
  // into the channel's window itself (SendChannel::push).
  template <typename Send>
  void send_owed(uint32_t blocked_lanes, Send&& send);
  // Frames to send again: send(Channel&) sends what it can of the
  // channel's resends; the channel stays listed while it has more.
  template <typename Send>
  void send_resends(Send&& send);
  bool resending() const { return !resend_.empty(); }

  // ------------------------------------------------------------ acks and timers
  // After c's window took an ack (SendChannel::on_ack): the books, resends
  // the ack revealed, and the slab back when c has nothing in flight and
  // owes nothing.
  void on_ack(Channel& c, const reliable::SendChannel::AckResult& r);
  // c's retransmission deadline passed: what it had in flight goes again.
  // Whether anything was queued (a timeout that counts).
  bool on_timeout(Channel& c, uint64_t now);
  // Channels holding a flight slab (those that may have frames in flight).
  size_t active_count() const { return active_.size(); }
  Channel& active(size_t i) { return channels_[active_[i]]; }

  // ------------------------------------------------------------ failures
  // A broadcast failed: what it still owed is dropped; what any channel has
  // in flight is abandoned - sent again empty until acknowledged, so every
  // channel stays in step for the next broadcast. Streams' batches stay.
  void drop_broadcast(uint64_t now);
  // A broadcast ended: channels still owing (streams' batches) stay listed,
  // keyed anew; the others leave the lists.
  void after_broadcast();
  // Streams failed: everything owed is dropped, everything in flight
  // abandoned (streams' batches too), and no channel owes anything.
  void drop_everything(uint64_t now);

  size_t list_bytes() const;  // channels and their lists
  size_t flight_bytes() const { return flights_.bytes(); }
  size_t owed_bytes() const { return runs_.bytes(); }
  uint32_t slabs() const { return flights_.slabs(); }
  uint32_t slabs_in_use() const { return flights_.in_use(); }

 private:
  // The stamp of the earliest item owed by a ready channel other than the
  // top one (ready_[0]): its items before it may go as one run.
  uint64_t next_other_stamp() const {
    if (ready_.size() < 2) return UINT64_MAX;
    return ready_.size() == 2 ? ready_[1].stamp : std::min(ready_[1].stamp, ready_[2].stamp);
  }
  // A channel that owes something, keyed by the stamp of its first owed item.
  struct Owing {
    uint64_t stamp;
    uint32_t channel;
    bool operator>(const Owing& o) const { return stamp > o.stamp; }
  };
  // After an item was (or could not be) added to what c owes: inline, as
  // every segment a machine passes on comes through here.
  bool owed(Channel& c, bool pushed) {
    if (!pushed) {
      counters_.owed_runs_exhausted.add();
      return false;
    }
    ++owed_total_;
    if (!c.listed) list_owing(c);
    return true;
  }
  void list_owing(Channel& c);
  void want_resend(Channel& c);
  void grant_slabs();
  bool take_slab(Channel& c);
  void release_slab(Channel& c);
  void push_heap(std::vector<Owing>& heap, Owing o) {
    heap.push_back(o);  // capacity reserved: each channel is in a list at most once
    std::push_heap(heap.begin(), heap.end(), std::greater<>{});
  }

  uint16_t lanes_;
  Counters& counters_;
  std::vector<Channel> channels_;  // (peer, lane), peer-major
  reliable::FlightPool flights_;
  RunPool runs_;
  // Channels that owe something, as min-heaps on the stamp of the first item
  // they owe: those holding a flight slab, and those waiting for one.
  std::vector<Owing> ready_, waiting_, blocked_;
  std::vector<uint32_t> active_;  // channels holding a flight slab
  std::vector<uint32_t> resend_;  // channels with frames to send again
  uint64_t next_stamp_ = 0;
  uint64_t owed_total_ = 0;
  uint64_t unacked_total_ = 0;
  uint64_t lane_rto_ns_[kMaxLanes] = {};  // the RTO a channel of the lane learned last
};

template <typename Send>
void Channels::send_owed(uint32_t blocked_lanes, Send&& send) {
  grant_slabs();
  uint16_t lanes_blocked = 0;
  for (uint16_t l = 0; l < lanes_; ++l) lanes_blocked += (blocked_lanes >> l) & 1;
  const auto later = std::greater<>{};
  blocked_.clear();
  while (!ready_.empty() && lanes_blocked < lanes_) {
    const Owing top = ready_.front();
    Channel& c = channels_[top.channel];
    const bool may_send = !(blocked_lanes >> c.lane & 1) && c.tx.window_open();
    const OwedItem item = c.owed.front(runs_, next_other_stamp());
    const Outcome outcome = send(c, item, may_send);
    const Step step = outcome.step;
    if (step == Step::kStop) break;
    const bool moved = step == Step::kSent || step == Step::kLetGo;
    if (step == Step::kLaneFull) {
      blocked_lanes |= 1u << c.lane;
      ++lanes_blocked;
    }
    if (moved) {
      c.owed.pop(runs_, outcome.items);
      owed_total_ -= outcome.items;
      if (step == Step::kSent) unacked_total_ += outcome.items;
      if (!c.owed.empty() && ready_.size() == 1) {
        ready_.front().stamp = c.owed.front(runs_).stamp;  // one channel owing (a chain): no heap work
        continue;
      }
    }
    std::pop_heap(ready_.begin(), ready_.end(), later);
    ready_.pop_back();
    if (!moved) {
      blocked_.push_back(top);
    } else if (c.owed.empty()) {
      c.listed = false;
      if (c.tx.idle()) release_slab(c);  // nothing in flight either (all it owed was let go): no ack will free it
    } else {
      push_heap(ready_, Owing{c.owed.front(runs_).stamp, top.channel});
    }
  }
  for (const Owing& o : blocked_) push_heap(ready_, o);
}

template <typename Send>
void Channels::send_resends(Send&& send) {
  size_t keep = 0;
  for (size_t i = 0; i < resend_.size(); ++i) {
    Channel& c = channels_[resend_[i]];
    send(c);
    if (c.tx.has_resend()) resend_[keep++] = resend_[i];
    else c.in_resend = false;
  }
  resend_.resize(keep);
}

}  // namespace lanecast::engine
