// Streams (streams.h, docs/streams.md). A publisher's messages wait in a
// ring its application fills (stream_state.h); at each turn the core cuts
// whatever is there into batches - as many messages per frame as fit,
// pieces of larger ones, nothing held back to wait for more - keeps each
// batch in a slot of the stream's window, delivers it here and owes it to
// its children in the stream's tree (algos/topology/stream_tree.h). A member
// that receives a batch from its parent keeps it the same way, forwards the
// same buffer to its own children (zero-copy) and delivers in batch order.
// Batches travel on the reliable channels the broadcasts use, beside them.
//
// Progress flows back up the tree: each member reports to its parent the
// batch below which its whole subtree delivered (a datagram; reports are
// cumulative, so a lost one is made good by the next, and a member repeats
// its last one every millisecond while the stream is busy). A batch is let go
// once the subtree below a member delivered it; the publisher's "stable"
// point is the whole group's, and its application may publish only a window
// ahead of it.
#include "engine/stream/streams.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/stream/batch_format.h"

namespace lanecast::engine::stream {

using algos::Rank;

namespace {

// The table's shape, the stream options checked.
StreamTable::Shape shape_of(const Streams::Config& cfg) {
  const lanecast::StreamOptions& so = cfg.streams;
  if (so.window_batches < 16 || so.window_batches > 65536 || (so.window_batches & (so.window_batches - 1)) != 0 ||
      so.streams_per_member < 1 || so.streams_per_member > lanecast::kMaxStreamsPerMember || so.window_messages == 0)
    throw std::invalid_argument("node: stream options out of range (fanout >= 1, window_batches a power of two 16..65536, "
                                "streams_per_member 1.." + std::to_string(lanecast::kMaxStreamsPerMember) + ")");
  if (so.window_bytes < 4096 || so.delivery_bytes < 4096)
    throw std::invalid_argument("node: stream window_bytes and delivery_bytes must be at least 4096");
  return {cfg.nodes, cfg.rank, so.streams_per_member, so.fanout, so.window_batches};
}


// The largest message a stream carries: what the group allows, what half
// the publisher's ring and half a delivery ring hold, what the window of
// batches holds at once, and never more than kMaxMessage, so a
// record's 32-bit length (the rings' and the wire's) holds it with its heads
// (docs/streams.md).
//
// The window's bound: a message is delivered only once every piece is
// here, and its first batch is let go only after that, so all its batches
// must fit the window together - the first piece may be one byte at the end
// of a batch, every other batch carries a full piece. A larger message
// would leave the publisher waiting for a window that never opens.
uint64_t max_message_of(const Streams::Config& cfg) {
  const lanecast::StreamOptions& o = cfg.streams;
  const uint64_t ring = o.window_bytes / 2 > 64 ? o.window_bytes / 2 - 64 : 0;
  const uint64_t delivery = o.delivery_bytes / 2 > 64 ? o.delivery_bytes / 2 - 64 : 0;
  const uint64_t piece = cfg.segment_bytes > kHeadBytes ? cfg.segment_bytes - kHeadBytes : 0;
  const uint64_t window = uint64_t{o.window_batches - 2} * piece;
  return std::min({cfg.max_message_bytes, ring, delivery, window, Streams::kMaxMessage});
}

}  // namespace

Streams::Streams(const Config& cfg, StreamHost& host, StreamCounters& counters, const SharedCounters& shared)
    : core_{cfg, host, counters, shared, StreamTable(shape_of(cfg)), max_message_of(cfg)},
      frames_(core_),
      receiving_(core_, *this, frames_),
      publishing_(core_, *this, frames_, receiving_) {}

// Streams over multicast go to the group address only when the port joined
// one; a quiet stream's repairs wait multicast_repair_us (default: ten
// report intervals).
void Streams::connect(const Frames& f) {
  frames_.connect(f);
  core_.multicast = core_.cfg.streams.multicast && f.group != nullptr;
  publishing_.connect(static_cast<uint64_t>(
      (core_.cfg.streams.multicast_repair_us > 0 ? core_.cfg.streams.multicast_repair_us : 10 * core_.cfg.streams.report_us) *
      1000));
}

// Each turn: adopt new publishers, cut what they published into batches,
// deliver what waits for the application, and send the reports due.
void Streams::pump_streams(uint64_t now) {
  if (publishing_.waiting()) publishing_.adopt(now);
  core_.busy = false;
  core_.due_ns = UINT64_MAX;
  if (core_.failed) {
    tell_parents(now);
    return;
  }
  for (const uint16_t slot : core_.table.open_slots()) {
    StreamState& s = *core_.table.at(slot);
    if (s.pub.shared != nullptr) publishing_.turn(s, now);
    if (!receiving_.turn(s, now)) return;  // the streams failed
    const bool pending = (s.pub.shared != nullptr && (!s.pub.ring.empty() || s.mcast.next < s.pub.next_batch)) ||
                         s.deliver.next < s.received_end ||
                         s.books.mark < s.received_end;
    core_.busy = core_.busy || pending;
  }
}

// A member whose streams failed tells each stream's parent (a report
// flagged abandoned), whose streams then fail too, naming this member, and
// tell theirs, up to the publisher: a parent whose batches were all
// acknowledged has nothing in flight to time out on, and would wait for
// this member's reports for ever - its publisher's last messages never
// stable, and nobody told. Datagrams, so repeated every kRefreshNs for
// kRefreshForNs from the first telling, as reports are - from the first
// telling, not the failure: a core held still for kRefreshForNs after its
// streams fail would otherwise tell nobody, and the publisher would wait on
// this member unaware.
void Streams::tell_parents(uint64_t now) {
  if (streams_first_told_ns_ != kNeverTold && now >= streams_first_told_ns_ + kRefreshForNs) return;
  if (now >= streams_told_ns_ + kRefreshNs) {
    bool all = true;
    for (const uint16_t slot : core_.table.open_slots()) {
      StreamState& s = *core_.table.at(slot);
      if (s.tree.parent() != algos::kNoRank && !frames_.send_report(s, now, wire::kFlagAbandoned)) all = false;
    }
    if (!all) {  // no room on the lane: the next turn tries again
      core_.due_ns = now;
      return;
    }
    if (streams_first_told_ns_ == kNeverTold) streams_first_told_ns_ = now;
    streams_told_ns_ = now;
  }
  core_.due_ns = std::min(core_.due_ns, streams_told_ns_ + kRefreshNs);
}

// ---------------------------------------------------------------- failure

// A peer went silent while batches were in flight to it (or the group broke):
// every stream of this member stops. Publishers see the error; what is owed
// is dropped and what is in flight abandoned, so the channels stay in step.
// In a group of processes a member whose streams stopped is lost to the
// group for this epoch: the node tells every member (failure notices)
// instead of each finding out at its own timeout.
void Streams::fail(uint64_t now, OpError err, Rank peer) {
  if (core_.failed) return;
  core_.failed = true;
  streams_first_told_ns_ = kNeverTold;
  streams_told_ns_ = 0;  // the parents are told at the next turn (tell_parents)...
  core_.due_ns = now;  // ...which must come now, not at the core's next timer
  stream_error_peer_.store(peer, std::memory_order_relaxed);
  stream_error_.store(static_cast<uint8_t>(err), std::memory_order_release);
  publishing_.fail_all(static_cast<uint8_t>(err), peer);
  core_.owed = 0;
  // The node drops what its channels owe and abandons what is in flight
  // (streams' batches too, so the channels stay in step), and fails the
  // broadcast that runs beside them.
  core_.host.streams_failed(now, err, peer);
}

}  // namespace lanecast::engine::stream
