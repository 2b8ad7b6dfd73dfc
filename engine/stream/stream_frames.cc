// StreamFrames (stream_frames.h): the frames a member's streams send (streams.cc has the whole
// picture) - reports up the tree, eviction notices, and the frame that
// carries a held batch to a child over its channel, which the node's
// transmit path asks for when the channels' order comes to an owed batch.
// A batch's payload goes by reference (zero copy); the wire format is the
// data frame's, flagged kFlagStream.
#include <rte_mbuf.h>

#include <algorithm>

#include "engine/stream/stream_frames.h"
#include "engine/wire/stream_body.h"

namespace lanecast::engine::stream {

using algos::Rank;

void StreamFrames::connect(const StreamsFraming& f) {
  auth_ = f.auth;
  seal_flag_ = f.seal_flag;
  hdr_data_ = f.hdr_data;
  link_bytes_ = f.link_bytes;
  payload_pool_ = f.payload_pool;
  addrs_ = f.addrs;
  if (f.group != nullptr) group_addr_ = *f.group;
}

// A report to the parent: a datagram (never acknowledged: the next one
// carries everything this one did). `flags` kFlagAbandoned: this member's
// streams failed (tell_parents).
bool StreamFrames::send_report(StreamState& s, uint64_t now, uint16_t flags) {
  const uint64_t held = std::max(s.held_end, s.deliver.next);
  uint32_t gap = 0;  // batches missing from `held` on, with a later one here
  if (core_.cfg.streams.multicast)
    while (held + gap < s.received_end && !s.holds(held + gap)) ++gap;
  if (!report_to(s.tree.parent(), s.publisher, s.index, s.books.mark, s.books.slowest, flags, now, held, gap))
    return false;
  s.books.reported_held = held;
  s.books.reported = s.books.mark;
  s.books.last_report_ns = now;
  return true;
}

// `mark`: every batch below it delivered in this member's subtree;
// `slowest`: who holds the mark back, for the publisher's counters.
bool StreamFrames::report_to(Rank parent, Rank publisher, uint16_t index, uint64_t mark, uint32_t slowest, uint16_t flags,
                        uint64_t now, uint64_t held, uint32_t gap) {
  if (parent == algos::kNoRank || !core_.host.lane_room(0, link_bytes_ + hdr_data_, now, false)) return false;
  uint8_t* at;
  rte_mbuf* h = core_.host.alloc_frame(addrs_[parent], hdr_data_, &at);
  if (h == nullptr) return false;
  wire::StreamReport b{};
  b.stream = index;
  b.publisher = publisher;
  b.delivered = mark;
  b.slowest = slowest;
  // Streams over multicast: what to repair (stream_multicast.cc) - what it
  // holds, and its first gap.
  b.held = held;
  b.gap = gap;
  b.segment_bytes = core_.cfg.segment_bytes;
  wire::write_stream(at, core_.cfg.origin, b, static_cast<uint16_t>(flags | wire::kFlagSignal | seal_flag_),
                     wire::FrameType::Datagram);
  put_payload_seal(at, wire::Seal{});
  core_.host.push(0, h);
  core_.counters.stream_reports_tx.add();
  return true;
}

// The notice, to each other member in turn (datagrams: one that finds the
// lane's batch full waits for the next turn).
void StreamFrames::tell_eviction(StreamState& s, uint64_t now) {
  for (; s.evict_notice_next < core_.cfg.nodes; ++s.evict_notice_next) {
    const Rank to = s.evict_notice_next;
    if (to == core_.cfg.rank) continue;
    if (!core_.host.lane_room(0, link_bytes_ + hdr_data_, now, false)) return;
    uint8_t* at;
    rte_mbuf* h = core_.host.alloc_frame(addrs_[to], hdr_data_, &at);
    if (h == nullptr) return;
    wire::StreamEviction b{};
    b.stream = s.index;
    b.publisher = s.publisher;
    b.member = core_.cfg.rank;
    b.segment_bytes = core_.cfg.segment_bytes;
    wire::write_stream(at, core_.cfg.origin, b, wire::kFlagSignal | wire::kFlagEvicted | seal_flag_,
                       wire::FrameType::Datagram);
    put_payload_seal(at, wire::Seal{});
    core_.host.push(0, h);
  }
}

// ---------------------------------------------------------------- batches

// A batch went to a child over its channel: the child's reports may now
// say it has it (StreamState::sent_to_child).
void StreamFrames::note_sent_to_child(StreamState& s, Rank child, uint32_t batch_low) {
  const uint32_t i = s.tree.child_index(child);
  if (i == s.tree.children()) return;  // a repair's channel is always a child's; nothing else sends batches
  s.books.child_sent[i] = std::max(s.books.child_sent[i], s.unwrap(batch_low) + 1);
}

rte_mbuf* StreamFrames::build_frame(Rank peer, uint16_t lane, uint16_t slot, uint32_t batch_low, uint32_t seq,
                               uint16_t flags) {
  const StreamState& s = *core_.table.at(slot);
  const BatchSlot& b = s.slots[batch_low & s.mask];
  if (b.payload == nullptr || static_cast<uint32_t>(b.batch) != batch_low) return nullptr;  // let go
  return build_batch_frame(addrs_[peer], s, b, seq, static_cast<uint8_t>(lane), flags,
                           wire::FrameType::Data);
}

// A batch's frame: its header, then the held payload by reference.
rte_mbuf* StreamFrames::build_batch_frame(const drivers::PeerAddress& to, const StreamState& s, const BatchSlot& b,
                                     uint32_t seq, uint8_t lane, uint16_t flags, wire::FrameType type) {
  uint8_t* at;
  rte_mbuf* h = core_.host.alloc_frame(to, hdr_data_, &at);
  if (h == nullptr) return nullptr;
  wire::StreamBatch body{};
  body.stream = s.index;
  body.publisher = s.publisher;
  body.seq = seq;
  body.batch_low = static_cast<uint32_t>(b.batch);
  body.first_msg = b.first_msg;
  body.records = b.records;
  body.payload_len = b.len;
  body.payload_crc = b.crc;
  body.segment_bytes = core_.cfg.segment_bytes;
  body.lane = lane;
  wire::write_stream(at, core_.cfg.origin, body, static_cast<uint16_t>(flags | seal_flag_), type);
  put_payload_seal(at, b.seal);
  return core_.host.attach_payload(h, b.payload);
}

}  // namespace lanecast::engine::stream
