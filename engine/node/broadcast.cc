// Broadcast: the life of one broadcast - started from a submission, timed,
// finished and published - and its frames: a segment copied out of the
// root's buffer, data and signal frames, multicasts.
#include "engine/node/broadcast.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>

#include "drivers/prefetch.h"
#include "engine/auth/frame_auth.h"
#include "engine/checksum/crc32c.h"
#include "engine/node/broadcast_sink.h"
#include "engine/node/rx_prefetch.h"

namespace lanecast::engine {

using algos::Rank;
using algos::SegmentIndex;

Broadcast::Broadcast(const NodeConfig& cfg, Parts parts, uint32_t max_segments)
    : cfg_(cfg),
      parts_(parts),
      machine_arena_(algos::machine_arena_bytes(cfg.nodes, cfg.lanes, max_segments,
                                                algos::GroupShape{cfg.hypercube_order, cfg.site_of_rank})),
      store_(max_segments, cfg.auth != nullptr),
      multicasts_(store_.capacity() + 1),  // a machine multicasts each segment at most once
      stash_(cfg.stash_frames, parts.counters.stash) {}

void Broadcast::connect(auth::FrameAuth* auth, const uint64_t* heard_ns) {
  auth_ = auth;
  heard_ns_ = heard_ns;
  if (auth != nullptr) scratch_.resize(cfg_.segment_bytes);
}

Broadcast::Bytes Broadcast::bytes() const {
  return {store_.bytes(), stash_.footprint_bytes(), multicasts_.bytes(), machine_arena_.capacity()};
}

// ---------------------------------------------------------------- life

void Broadcast::try_start(uint64_t now) {
  if (op_.active) return;
  Submission sub;
  if (!submissions_.pop(sub)) return;
  now = std::max(now, sub.posted_ns);  // this iteration's time may predate the post
  if (parts_.fail_stop.broken()) {  // a broken group's broadcasts fail at once
    CompletionRecord rec;
    rec.op = sub.op;
    rec.error = OpError::GroupBroken;
    blame_broken(rec);
    rec.start_ns = rec.finish_ns = now;
    parts_.counters.ops_failed.add();
    next_op_ = sub.op + 1;
    parts_.box.publish(rec);
    return;
  }

  algos::PlanParams pp;
  pp.nodes = cfg_.nodes;
  pp.lanes = cfg_.lanes;
  pp.root = sub.root;
  pp.message_bytes = sub.size;
  pp.segment_bytes = cfg_.segment_bytes;
  pp.op = sub.op;  // equal on every member: broadcasts are posted in the same order
  pp.algo = cfg_.algo_options;
  op_.sub = sub;
  op_.timer_at_ns = kNoTimer;
  next_op_ = sub.op + 1;
  try {
    op_.plan.emplace(pp);  // parameters were checked when the broadcast was posted
    op_.machine = algos::make_machine(sub.algo, *op_.plan, cfg_.rank, machine_arena_,
                                      algos::GroupShape{cfg_.hypercube_order, cfg_.site_of_rank});
  } catch (const std::exception&) {
    op_.plan.reset();
    CompletionRecord rec;
    rec.op = sub.op;
    rec.error = OpError::Internal;
    parts_.box.publish(rec);
    return;
  }
  op_.active = true;
  const bool root = sub.root == cfg_.rank;
  op_.held = root ? op_.plan->segments() : 0;
  op_.copied_out = 0;
  op_.released = false;
  op_.start_ns = now;
  op_.held_ns = root || op_.plan->segments() == 0 ? now : 0;
  op_.last_rx_ns = now;
  internal_error_ = false;
  parts_.host.broadcast_started(now);  // the broadcast's own deadline

  Sink sink(*this, now);
  op_.machine->start(sink);
  replay_stash(now);
  if (op_.active) check_done(now);
}

void Broadcast::fire_timer(uint64_t now) {
  op_.timer_at_ns = kNoTimer;
  parts_.counters.timers_fired.add();
  Sink sink(*this, now);
  op_.machine->on_timer(op_.timer_tag, sink);
}

// In a fail-stop group the member that sends to a lost peer names it
// (PeerSilent) at the deadline and tells everyone; those that only wait for
// data give it half a deadline more to arrive, so they fail naming the lost
// rank rather than "nothing arrived".
uint64_t Broadcast::silent_at() const {
  if (!op_.active || op_.machine->done()) return UINT64_MAX;
  return op_.last_rx_ns + cfg_.peer_timeout_ns + (cfg_.fail_stop ? cfg_.peer_timeout_ns / 2 : 0);
}

void Broadcast::end_turn(uint64_t now, bool frames_queued) {
  if (op_.active) check_done(now);
  if (op_.active && !op_.released && buffer_done(frames_queued)) {
    op_.released = true;
    parts_.box.release(op_.sub.op);
  }
}

void Broadcast::check_done(uint64_t now) {
  if (internal_error_) {
    finish(now, OpError::Internal, algos::kNoRank);
    return;
  }
  // Streams' batches share the channels; the broadcast waits only for its own.
  if (parts_.host.channels_done(/*acked=*/true) && multicasts_.empty() && op_.machine->done())
    finish(now, OpError::None, algos::kNoRank);
}

void Broadcast::finish(uint64_t now, OpError err, Rank peer) {
  CompletionRecord rec;
  rec.op = op_.sub.op;
  rec.error = err;
  rec.peer = peer;
  rec.start_ns = op_.start_ns;
  rec.held_ns = op_.held_ns;
  rec.finish_ns = std::max(now, op_.start_ns);
  rec.segments_held = op_.held;
  rec.segments_total = op_.plan ? op_.plan->segments() : 0;
  if (err == OpError::GroupBroken) blame_broken(rec);
  if (err == OpError::NoProgress) rec.quiet_peer = quietest_peer(now, &rec.quiet_ns);
  // A wait that ended with nothing arrived names its suspect to the group too.
  const bool breaks = parts_.fail_stop.saw(op_.sub.op, err, err == OpError::NoProgress ? rec.quiet_peer : peer);
  if (err == OpError::None) {
    parts_.counters.ops_completed.add();
  } else {
    parts_.counters.ops_failed.add();
    multicasts_.clear();
  }
  store_.clear();
  parts_.host.broadcast_ended(now, err != OpError::None);
  op_.active = false;
  op_.timer_at_ns = kNoTimer;
  op_.machine.reset();
  parts_.box.publish(rec);
  if (breaks) parts_.host.group_broken(now, peer);  // a broken group's streams stop too
}

void Broadcast::blame_broken(CompletionRecord& rec) const {
  const FailStop::Verdict& v = parts_.fail_stop.verdict();
  rec.peer = v.culprit;
  rec.reporter = v.reporter;
  rec.broken_op = v.op;
}

// Whom a member that waited in vain for data names. In a fail-stop group a
// lost forwarder is named by the member that sends to it (PeerSilent) and
// everyone hears of it before its own wait ends, so a wait that ends with
// nothing held means nobody sends to the lost member: it is this
// broadcast's root, named if it was silent a peer timeout or more - however
// recently the members that wait with it acknowledged each other's last
// broadcast (bench's barriers: linear, rooted at each member in turn).
// Otherwise, the peer heard from in this epoch that was silent longest, if
// that is a peer timeout or more.
Rank Broadcast::quietest_peer(uint64_t now, uint64_t* silent_ns) const {
  const auto silent_past_timeout = [&](Rank r) {
    return heard_ns_[r] != 0 && now >= heard_ns_[r] + cfg_.peer_timeout_ns;
  };
  const Rank root = op_.sub.root;
  Rank best = algos::kNoRank;
  if (cfg_.fail_stop && op_.held == 0 && root != cfg_.rank && root < cfg_.nodes && silent_past_timeout(root)) {
    best = root;
  } else {
    uint64_t oldest = UINT64_MAX;
    for (Rank r = 0; r < cfg_.nodes; ++r)
      if (heard_ns_[r] != 0 && heard_ns_[r] < oldest) {
        oldest = heard_ns_[r];
        best = r;
      }
    if (best == algos::kNoRank || !silent_past_timeout(best)) return algos::kNoRank;
  }
  *silent_ns = now - heard_ns_[best];
  return best;
}

// ---------------------------------------------------------------- frames

// The root's one copy: a segment of the user's buffer into a frame buffer,
// with its CRC computed in the same pass, made when the segment is first sent
// so the copy is spread over the pipeline.
bool Broadcast::materialize(SegmentIndex seg) {
  if (op_.sub.root != cfg_.rank) return false;
  rte_mbuf* m = rte_pktmbuf_alloc(parts_.payload_pool);
  if (m == nullptr) return false;
  const algos::Segment s = op_.plan->segment(seg);
  void* dst = rte_pktmbuf_append(m, static_cast<uint16_t>(s.length));
  if (dst == nullptr) {
    rte_pktmbuf_free(m);
    return false;
  }
  // With a key the root seals the segment once (the seal stands in for the
  // CRC) and every forwarder carries the seal.
  uint32_t crc = 0;
  wire::Seal seal{};
  if (auth_ != nullptr) {
    std::memcpy(dst, op_.sub.buffer + s.offset, s.length);
    seal = auth_->seal_payload(static_cast<const uint8_t*>(dst), s.length);
  } else {
    crc = crc32c_copy(0, dst, op_.sub.buffer + s.offset, s.length);
  }
  // The next segment's bytes, which the application wrote last (rx_prefetch.h),
  // and the buffer they will be copied into: the pool's next, cold since the
  // last broadcast freed it (drivers/prefetch.h).
  prefetch_next_segment(op_.sub.buffer + s.offset + s.length, op_.sub.buffer + op_.sub.size, s.length);
  drivers::prefetch_next_allocs(parts_.payload_pool, 1, s.length);
  store_.keep(seg, SegmentStore::Entry{m, crc, seal});
  parts_.counters.root_copy_bytes.add(s.length);
  ++op_.copied_out;
  return true;
}

bool Broadcast::buffer_done(bool frames_queued) const {
  const uint32_t segments = op_.plan->segments();
  const bool copied = op_.sub.root == cfg_.rank ? op_.copied_out == segments : op_.held == segments;
  return copied && parts_.host.channels_done(/*acked=*/false) && multicasts_.empty() && !frames_queued;
}

rte_mbuf* Broadcast::data_frame(const drivers::PeerAddress& to, SegmentIndex seg, uint32_t seq, uint16_t lane,
                                uint16_t flags, wire::FrameType type) {
  rte_mbuf* m = nullptr;
  return data_frames(to, seg, 1, 1, seq, lane, flags, &m, type) == 1 ? m : nullptr;
}

uint32_t Broadcast::data_frames(const drivers::PeerAddress& to, SegmentIndex first, uint32_t stride, uint32_t n,
                                uint32_t seq, uint16_t lane, uint16_t last_flags, rte_mbuf** frames,
                                wire::FrameType type) {
  n = std::min(n, kMaxRun);
  for (uint32_t i = 0; i < n; ++i) {
    const SegmentIndex seg = first + i * stride;
    if (!store_.held(seg) && !materialize(seg)) {
      if (op_.sub.root != cfg_.rank) internal_error_ = true;  // sending what it lacks
      n = i;
      break;
    }
  }
  FrameBuilder& f = parts_.frames;
  uint8_t* at[kMaxRun];
  if (n == 0 || !f.alloc_frames(to, f.data_header(), frames, at, n)) return 0;
  // The body's fields every frame of the run shares, once.
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.total_len = op_.sub.size;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  b.lane = static_cast<uint8_t>(lane);
  // The words every frame of the run shares, once; the last frame's own
  // when it carries flags the others do not.
  const wire::DataHeaderRun headers(f.origin(), b, f.seal_flag(), type);
  const wire::DataHeaderRun last_headers(f.origin(), b, last_flags | f.seal_flag(), type);
  for (uint32_t i = 0; i < n; ++i) {
    const SegmentIndex seg = first + i * stride;
    const algos::Segment s = op_.plan->segment(seg);
    (i + 1 == n ? last_headers : headers).write(at[i], seq + i, seg, s.offset, s.length, store_.crc(seg));
    if (f.seal_flag() != 0) f.put_payload_seal(at[i], store_.seal(seg));
    frames[i] = f.attach_payload(frames[i], store_.payload(seg));
    if (frames[i] == nullptr) {  // flattening failed (both freed): the rest go back unsent
      rte_pktmbuf_free_bulk(frames + i + 1, n - i - 1);
      return i;
    }
  }
  return n;
}

// So the receiver checks it against its plan like data.
rte_mbuf* Broadcast::build_signal(Rank to, uint16_t lane, uint32_t tag, uint32_t seq, uint16_t flags) {
  FrameBuilder& f = parts_.frames;
  uint8_t* at;
  rte_mbuf* h = f.alloc_frame(parts_.addrs[to], f.data_header(), &at);
  if (h == nullptr) return nullptr;
  wire::DataBody b{};
  b.op = op_.sub.op;
  b.root = op_.sub.root;
  b.seq = seq;
  b.segment = tag;
  b.total_len = op_.sub.size;
  b.segment_bytes = cfg_.segment_bytes;
  b.algo = static_cast<uint8_t>(op_.sub.algo);
  b.lane = static_cast<uint8_t>(lane);
  wire::write_data(at, f.origin(), b, static_cast<uint16_t>(flags | wire::kFlagSignal | f.seal_flag()));
  f.put_payload_seal(at, wire::Seal{});
  return h;
}

// Multicasts: one frame to the group address where the port's switch copies,
// otherwise one datagram to each member in turn (the emulation).
uint32_t Broadcast::send_multicasts(uint64_t now, TxLanes& lanes) {
  uint32_t blocked = 0;
  while (!multicasts_.empty()) {
    MulticastQueue::Item& g = multicasts_.front();
    if (!store_.held(g.segment) && !materialize(g.segment)) {
      if (op_.sub.root != cfg_.rank) internal_error_ = true;  // multicasting what it lacks
      return blocked;
    }
    const uint32_t frame = parts_.frames.data_frame_bytes(op_.plan->segment(g.segment).length);
    if (g.next_rank == cfg_.rank) ++g.next_rank;
    // A multicast that cannot go yet holds back the owed sends of its lane
    // (Node::pump_owed): they come after it in the machine's order, and a
    // small frame the pacer would let through - mcast_chain's last segment
    // to virtual rank 1 - must not overtake the multicasts it closes.
    blocked = 1u << g.lane;
    if (parts_.caps.multicast) {
      if (!lanes.room(g.lane, frame, now, /*datagram=*/true)) return blocked;
      rte_mbuf* m = data_frame(parts_.group_addrs[g.lane], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return blocked;
      lanes.push(g.lane, m);
      parts_.counters.tx_datagrams.add();
      g.next_rank = cfg_.nodes;
    }
    while (g.next_rank < cfg_.nodes) {
      if (!lanes.room(g.lane, frame, now, /*datagram=*/true)) return blocked;
      rte_mbuf* m = data_frame(parts_.addrs[g.next_rank], g.segment, 0, g.lane, 0, wire::FrameType::Datagram);
      if (m == nullptr) return blocked;
      lanes.push(g.lane, m);
      parts_.counters.tx_datagrams.add();
      if (++g.next_rank == cfg_.rank) ++g.next_rank;
    }
    multicasts_.pop();
  }
  return 0;
}

}  // namespace lanecast::engine
