// Publishing (publishing.h): streams over the port's multicast (StreamOptions::multicast,
// docs/streams.md). The publisher sends each batch once, to the group's
// address, instead of once to each child; every member reports to the
// publisher (the star tree) what it holds and its first gap, and gets what
// it lacks again over its reliable channel - the repair on request
// mcast_chain uses for a broadcast (Hoefler, Siebert & Rehm's two stages:
// multicast, then point-to-point repair), the report being the request. A
// batch is repaired at most once per member: the channel then delivers it.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/stream/publishing.h"

namespace lanecast::engine::stream {


// Whether the publisher may cut a new batch now: the last one went out a
// batch gap ago, or a full frame's worth waits. The gap is 0 while the
// members keep up and grows (to at most kMaxBatchGapNs) while batches pile
// up that they have not reported held - more than a quarter of the window:
// then what is published meanwhile goes out together. Without it each
// message would leave alone - the polling core cuts a batch of whatever one
// turn finds - and the members' work per frame, not the link, would bound
// the stream. The gap follows the members rather than being fixed: a fixed
// gap batches as well, but makes every message of a moderate stream wait
// for it, members keeping up or not.
bool Publishing::multicast_may_form(StreamState& s, uint64_t now) {
  if (s.mcast.next < s.pub.next_batch) return false;  // the last one has not gone yet
  if (now >= s.mcast.gap_checked_ns + kBatchGapStepNs) {
    s.mcast.gap_checked_ns = now;
    uint64_t held = s.mcast.next;
    for (uint32_t i = 0; i < s.tree.children(); ++i) held = std::min(held, s.books.child_holds(i));
    const uint64_t behind = s.mcast.next - held;
    if (behind > s.slots.size() / 4) s.mcast.batch_gap_ns = std::min(kMaxBatchGapNs, 2 * s.mcast.batch_gap_ns + kBatchGapStepNs / 10);
    else if (behind < s.slots.size() / 16) s.mcast.batch_gap_ns /= 2;
  }
  const uint64_t may_at = s.slots[(s.mcast.next - 1) & s.mask].multicast_ns + s.mcast.batch_gap_ns;
  if (may_at <= now || s.pub.ring.bytes_waiting() >= core_.cfg.segment_bytes) return true;
  core_.due_ns = std::min(core_.due_ns, may_at);  // the core looks again then
  return false;
}

// The batches formed and not yet sent to the group address, in order, as
// far as the lane has room.
void Publishing::multicast_batches(StreamState& s, uint64_t now) {
  while (s.mcast.next < s.pub.next_batch) {
    BatchSlot& b = s.slot_of(s.mcast.next);
    if (b.payload == nullptr || b.batch != s.mcast.next) {  // never formed into this slot: nothing to send
      core_.host.internal_error();
      ++s.mcast.next;
      continue;
    }
    if (!core_.host.lane_room(0, frames_.frame_bytes(b.len), now, /*datagram=*/true)) return;  // the pacer says when
    rte_mbuf* m = frames_.build_batch_frame(frames_.group(), s, b, 0, 0, 0, wire::FrameType::Datagram);
    if (m == nullptr) return;  // no header buffer: next turn
    core_.host.push(0, m);
    core_.counters.stream_multicasts_tx.add();
    core_.counters.stream_batches_tx.add();
    b.multicast_ns = now;
    ++s.mcast.next;
  }
}

// What each child lacks, owed to it over its channel, once:
//   - its first gap: batches missing below one it has had - lost on the
//     way, since the group address delivers one sender's frames in order:
//     owed at once. Its reports name one gap at a time (the first, from
//     where it holds every batch below); once that is filled the next
//     report names the next.
//   - a quiet stream's last batches (nothing went out for repair_ns) that it
//     lacks with no gap to show: lost at the end.
// Its reports say what it holds (not what it delivered: a member whose
// application is slow holds batches it has not delivered, and needs no
// second copy); one that only lags is sent nothing again.
void Publishing::repair_batches(StreamState& s, uint64_t now) {
  if (s.mcast.next == 0) return;
  const uint64_t last_out = s.slot_of(s.mcast.next - 1).multicast_ns;
  const bool quiet = last_out + repair_ns_ <= now;
  for (uint32_t i = 0; i < s.tree.children(); ++i) {
    const uint64_t held = s.books.child_holds(i);
    uint64_t end = s.books.child_gap[i] > 0 ? std::min(held + s.books.child_gap[i], s.mcast.next) : held;
    if (s.books.child_gap[i] == 0 && quiet) end = s.mcast.next;
    uint64_t b = std::max(held, s.mcast.repair_next[i]);
    for (; b < end; ++b) {
      if (!s.holds(b)) continue;  // let go: every member delivered it
      if (!core_.host.owe_batch(s.tree.child(i), static_cast<uint32_t>(b), s.slot)) {
        core_.host.internal_error();
        break;
      }
      ++core_.owed;
      core_.counters.stream_repairs.add();
    }
    s.mcast.repair_next[i] = std::max(s.mcast.repair_next[i], b);
    if (!quiet && held < s.mcast.next) core_.due_ns = std::min(core_.due_ns, last_out + repair_ns_);
  }
}

}  // namespace lanecast::engine::stream
