// libFuzzer target: the stream layer's receive path (engine/stream/streams.h).
// One input is a group of 2-3 members whose streams travel a chain or a
// binary tree, each member taking its messages in a handler or from its
// delivery ring, while rank 0 publishes a real stream and the input plays
// the parent of a member in other streams: batches whose numbers, record
// heads, pieces, flags, message lengths, record counts and bytes come from
// the input, with the group, epoch, source MAC, channel sequence numbers and
// CRCs right, so they reach the stream layer - mixed with reports,
// duplicates, frames past the window, batches given up and real publishes
// (input format in fuzz_input.h). Whatever the frames:
//   - nothing crashes, and no sanitizer speaks (forged payloads live on the
//     heap: a read past one is a report);
//   - every message a member delivers is the next of its stream (once, in
//     order); a real one has its publisher's length, time stamp and bytes; a
//     forged one the length and time stamp a first piece's head announced,
//     and that piece's bytes first; a stream's messages never add up to more
//     bytes than its batches carried;
//   - in a group with a key (the input plays a member that holds it), a
//     frame sealed as its member seals it always opens (no rx_bad_tag, no
//     rx_unsealed), and payload seals refused never outnumber the frames
//     whose seal the input spoiled;
//   - the group stays responsive: real messages published after the frames
//     reach every member within bounded virtual time, or each member that
//     lacks them says why (its streams failed, naming a member), or the
//     publisher's stream failed saying why - never a silent stall;
//   - taking the group down returns every mbuf to its pool.
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "algos/topology/stream_tree.h"
#include "drivers/ethernet.h"
#include "engine/auth/frame_auth.h"
#include "engine/stream/batch_format.h"
#include "ipc/delivery_reader.h"
#include "ipc/record_ring.h"
#include "engine/stream/stream_state.h"
#include "tests/fuzz/fuzz_group.h"
#include "tests/fuzz/fuzz_input.h"

namespace lanecast::fuzz {
namespace {

namespace eth = drivers::ethernet;
namespace stream = engine::stream;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPeerTimeoutNs = 5'000'000;
constexpr uint32_t kMaxRounds = 200;     // switch rounds the records may ask for, per input
constexpr uint64_t kRoundMostNs = 100'000;  // a round: to the next timer, 1 to 100 us
constexpr uint64_t kSettleNs = 10 * kPeerTimeoutNs;  // virtual time the real stream has after the records
constexpr uint32_t kMaxSettleRounds = 20000;
constexpr uint32_t kMaxFresh = 120;      // sequence numbers per channel: all within the receiver's window (128)
constexpr uint32_t kMaxPayload = kNodeSegment + 64;  // a little past the segment: refused, counted
constexpr uint16_t kRealStream = 0, kForgedStream = 1;
constexpr uint32_t kMaxMembers = 3, kStreams = 2;
// The real messages published after the frames: one byte, one frame, a
// message in pieces over several frames.
constexpr uint32_t kFinalLengths[] = {1, 120, 700, 2000};

engine::NodeConfig config(uint8_t scenario) {
  engine::NodeConfig c = small_group_config(kPeerTimeoutNs);
  c.fail_stop = (scenario & kStreamFailStop) != 0;
  c.streams.multicast = (scenario & kStreamMulticast) != 0;
  c.streams.fanout = stream_fanout(scenario);
  c.streams.window_batches = 16;    // the least: frames past it are easy to reach
  c.streams.window_bytes = 16384;
  c.streams.delivery_bytes = 8192;  // the ring fills when the application stops taking
  c.streams.streams_per_member = kStreams;
  c.streams.report_us = 20;
  if (scenario & kStreamKeyed) c.auth = group_keys();
  return c;
}

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

// What the input sent as publisher p's stream 1: the batch number after the
// highest, the most payload bytes sent under each number (a member keeps
// one payload per number), and the first pieces the heads announce, by
// time stamp and message length.
struct ForgedStream {
  uint32_t next = 0;
  std::unordered_map<uint32_t, uint32_t> payload;
  uint64_t payload_total = 0;
  struct First {
    uint64_t stamp;
    uint32_t message_len;
    Bytes piece;
  };
  std::unordered_multimap<uint64_t, First> firsts;

  static uint64_t key(uint64_t stamp, uint32_t len) { return stamp * 0x9E3779B97F4A7C15ULL ^ len; }

  void note_payload(uint32_t batch, uint32_t len) {
    uint32_t& most = payload[batch];
    if (len > most) {
      payload_total += len - most;
      most = len;
    }
  }
  // The records as a receiver walks them (the heads' piece lengths, as far
  // as they stay within the payload): each first piece it may deliver.
  void note_firsts(const uint8_t* p, uint32_t len) {
    constexpr uint32_t kHead = sizeof(stream::RecordHead);
    for (uint32_t off = 0; len - off >= kHead;) {
      const stream::RecordHead h = stream::read_head(p + off);
      const uint32_t piece = h.piece & stream::kPieceMask;
      if (piece > len - off - kHead) break;
      if (!(h.piece & stream::kContinuation))
        firsts.emplace(key(h.timestamp_ns, h.message_len),
                       First{h.timestamp_ns, h.message_len, Bytes(p + off + kHead, p + off + kHead + piece)});
      off += kHead + piece;
    }
  }
  bool announced(uint64_t stamp, const uint8_t* data, uint32_t len) const {
    const auto [from, to] = firsts.equal_range(key(stamp, len));
    for (auto it = from; it != to; ++it) {
      const First& f = it->second;
      if (f.stamp == stamp && f.message_len == len && f.piece.size() <= len &&
          std::equal(f.piece.begin(), f.piece.end(), data))
        return true;
    }
    return false;
  }
};

// A frame the input sent, for resends.
struct SentFrame {
  uint32_t port;
  uint32_t src, to;
  wire::FrameType type;
  bool spoiled;  // its payload's seal (a group with a key)
  Bytes bytes;
};

class Run {
 public:
  Run(const uint8_t* data, size_t size)
      : data_(data), size_(size), scenario_(data[0]),
        g_(stream_members(scenario_), 2, config(scenario_), fuzz_process().pools) {
    for (uint32_t r = 0; r < g_.members(); ++r) {
      handler_[r] = (scenario_ & (kStreamHandler0 << r)) != 0;
      if (handler_[r])
        g_.node(r).streams().set_message_handler([this, r](const stream::DeliveredHead& h, const uint8_t* bytes, uint32_t len) {
          take(r, h.publisher, h.stream, h.seq, h.timestamp_ns, bytes, len);
        });
    }
    open_publisher();
  }

  void play() {
    for (size_t at = 1; at + kStreamRecordHeader <= size_;) {
      const uint8_t kind = data_[at], then = data_[at + 1];
      at += kStreamRecordHeader;
      if (!record(kind, &at)) break;  // the input ended inside the record
      if (then & kStreamWait) g_.wait(kPeerTimeoutNs / 4);
      for (uint32_t i = 0; i < (then & kStreamRoundsMask) && rounds_ < kMaxRounds; ++i, ++rounds_)
        step(g_.next_round_ns(kRoundMostNs));
    }
  }

  // The real stream after the frames. Every member delivers it or says why
  // not (its streams failed, naming a member); or the publisher's stream
  // failed, saying why - then members that never heard of the messages may
  // wait unaware. Anything else is a silent stall.
  void finish() {
    for (bool& t : taking_) t = true;
    size_t pending = 0;  // of kFinalLengths, the next to publish
    const auto publish_pending = [&] {
      const size_t before = pending;
      while (pending < std::size(kFinalLengths) && publish(kFinalLengths[pending])) ++pending;
      return pending != before;
    };
    const auto accounted = [&](uint32_t r) {
      return g_.node(r).streams().error() != engine::OpError::None ||
             (pending == std::size(kFinalLengths) && next_seq_[r][0][kRealStream] == lengths_.size());
    };
    const auto settled = [&] {
      if (pub_->error.load(std::memory_order_acquire) != 0) return true;
      for (uint32_t r = 0; r < g_.members(); ++r)
        if (!accounted(r)) return false;
      return true;
    };
    // Deadlines may have to pass: a member whose streams failed is heard of
    // by its parent at once, or when it stops acknowledging (a peer timeout
    // per hop). Rounds jump to the next timer.
    const uint64_t deadline = g_.now() + kSettleNs;
    bool published = publish_pending();
    for (uint32_t i = 0; i < kMaxSettleRounds && !settled() && g_.now() < deadline; ++i) {
      step(published ? 1000 : g_.next_round_ns(kPeerTimeoutNs / 10));
      published = publish_pending();
    }
    if (fuzz_process().verbose) print("after the real stream");
    for (uint32_t r = 0; r < g_.members(); ++r)
      if (!accounted(r) && pub_->error.load() == 0)
        die("silent stall: rank " + std::to_string(r) + " delivered " + std::to_string(next_seq_[r][0][kRealStream]) +
            " of the " + std::to_string(lengths_.size()) + " real messages published (" +
            std::to_string(std::size(kFinalLengths) - pending) + " more waiting for room in the publisher's ring), " +
            "and neither its streams nor the publisher's stream failed");
    for (uint32_t r = 0; r < g_.members(); ++r)
      says_why("rank " + std::to_string(r) + "'s streams", g_.node(r).streams().error(), g_.node(r).streams().error_peer());
    says_why("the publisher's stream", static_cast<engine::OpError>(pub_->error.load()), pub_->error_peer.load());
    if (keyed()) check_seals();
  }

  // Every frame the input sealed as its member seals them opens; a payload
  // seal is refused only where the input spoiled it.
  void check_seals() {
    uint64_t bad_tag = 0, unsealed = 0, bad_payload = 0;
    for (uint32_t r = 0; r < g_.members(); ++r) {
      const auto& c = g_.node(r).counters();
      bad_tag += c.rx_bad_tag.get();
      unsealed += c.rx_unsealed.get();
      bad_payload += c.rx_bad_payload_seal.get();
    }
    if (bad_tag != 0 || unsealed != 0)
      die("a frame sealed as its member seals it did not open: rx_bad_tag " + std::to_string(bad_tag) +
          ", rx_unsealed " + std::to_string(unsealed));
    if (bad_payload > spoiled_sent_)
      die("payload seals refused: " + std::to_string(bad_payload) + ", only " + std::to_string(spoiled_sent_) +
          " frames carried a spoiled one");
  }

  // A failure names the member it blames (a fail-stop group's may not know).
  void says_why(const std::string& what, engine::OpError err, uint32_t peer) {
    if (err != engine::OpError::None && err != engine::OpError::GroupBroken && peer >= g_.members())
      die(what + " failed (error " + std::to_string(static_cast<int>(err)) + ") naming no member");
  }

  FuzzGroup& group() { return g_; }

 private:
  // --- records

  bool record(uint8_t kind, size_t* at) {
    const auto have = [&](size_t n) { return *at + n <= size_; };
    switch (kind & kStreamKindMask) {
      case kStreamBatch: {
        if (!have(kStreamBatchFields)) return false;
        const uint8_t* f = data_ + *at;
        const size_t records = (f[3] & 7) + 1;
        if (!have(kStreamBatchFields + records * kStreamRecordFields)) return false;
        *at += kStreamBatchFields + records * kStreamRecordFields;
        batch(kind, f, records);
        return true;
      }
      case kStreamReport:
        if (!have(3)) return false;
        report(kind, data_ + *at);
        *at += 3;
        return true;
      case kStreamResend:
        if (!have(1)) return false;
        resend(kind, data_[*at]);
        *at += 1;
        return true;
      case kStreamPublish:
        if (!have(2)) return false;
        publish(static_cast<uint32_t>(le16(data_ + *at) % (g_.node(0).streams().max_message() + 1)));
        *at += 2;
        return true;
      case kStreamDrain:
        if (!have(1)) return false;
        taking_[(data_[*at] & 3) % g_.members()] = !(data_[*at] & kStreamStopTaking);
        *at += 1;
        return true;
      default:
        return true;
    }
  }

  // Who sends a frame of publisher p's stream to `to`: its parent in the
  // stream's tree, or (not_parent) another member; the attacker's port
  // claiming the parent when no other member is left. The rank is always a
  // member's.
  struct From {
    uint32_t port, rank;
  };
  From parent_of(uint32_t p, uint32_t to, bool not_parent) {
    const algos::Rank parent = algos::StreamTree(g_.members(), p, to, stream_fanout(scenario_)).parent();
    if (!not_parent && parent != algos::kNoRank) return {parent, parent};
    for (uint32_t k = 1; k < g_.members(); ++k) {
      const uint32_t c = (to + k) % g_.members();
      if (c != parent) return {c, c};
    }
    return {g_.attacker(), parent};
  }

  void batch(uint8_t kind, const uint8_t* f, size_t records) {
    const uint8_t where = f[0];
    const uint32_t to = (where & 3) % g_.members(), p = (where >> 2 & 3) % g_.members();
    const From from = parent_of(p, to, kind & kStreamNotParent);
    uint32_t& fresh = fresh_[from.rank][to];
    const bool datagram = (kind & kStreamDatagram) != 0;  // as from the group address: no channel
    if (!datagram && fresh >= kMaxFresh) return;
    ForgedStream& s = forged_[p];
    const auto offset = static_cast<int16_t>(le16(f + 1));
    uint32_t number = s.next + static_cast<uint32_t>(static_cast<int32_t>(offset));
    if (f[3] & kStreamFarBatch) number ^= 1u << 31;

    Bytes pay;
    uint32_t held = 0;
    const bool abandoned = (kind & kStreamAbandoned) != 0;
    for (size_t i = 0; i < records && !abandoned; ++i) {
      const uint8_t* r = f + kStreamBatchFields + i * kStreamRecordFields;
      const uint32_t piece = le16(r + 1) % kStreamPieceMod;
      if (pay.size() + sizeof(stream::RecordHead) + piece > kMaxPayload) break;
      static constexpr uint32_t kLies[4] = {0, 1, stream::kPieceMask, 1u << 29};
      stream::RecordHead h;
      h.piece = ((piece + kLies[r[0] >> 2 & 3]) & stream::kPieceMask) | ((r[0] & 1) ? stream::kMorePieces : 0) |
                ((r[0] & 2) ? stream::kContinuation : 0);
      h.message_len = piece + le16(r + 3);
      h.timestamp_ns = r[5];
      const size_t off = pay.size();
      pay.resize(off + sizeof h + piece);
      stream::write_head(pay.data() + off, h);
      fill_bytes(pay.data() + off + sizeof h, piece, [seed = r[5]](size_t k) { return forged_byte(k, seed); });
      ++held;
    }
    uint32_t count = held;
    if (f[0] & kStreamMoreRecords) ++count;
    if (f[0] & kStreamFewerRecords) --count;

    wire::DataBody b{};
    b.op = (f[0] & kStreamNoStream) ? 2 : kForgedStream;
    b.root = p;
    b.seq = datagram ? 0 : (kind & kStreamSeqAhead) ? fresh + 2 * wire::kSackBits : fresh++;
    b.segment = number;
    b.offset = number;  // the first message's number: the receiver counts for itself
    b.total_len = count;
    b.payload_len = static_cast<uint32_t>(pay.size());
    // With a key the payload's seal stands in for its CRC (0 on the wire).
    b.payload_crc = keyed() ? 0 : engine::crc32c(0, pay.data(), pay.size()) ^ ((kind & kStreamBadCrc) ? 1u : 0u);
    b.segment_bytes = kNodeSegment - ((f[0] & kStreamBadSegment) ? 1 : 0);
    b.lane = kStreamLane;
    const uint16_t flags = wire::kFlagStream | (abandoned ? wire::kFlagAbandoned : 0) | sealed_flag();
    const wire::FrameType type = datagram ? wire::FrameType::Datagram : wire::FrameType::Data;
    const uint32_t seals = keyed() ? wire::seal_bytes(type) : 0;
    Bytes frame(eth::kHeaderBytes + wire::kDataHeaderBytes + seals + pay.size());
    eth::write_header(frame.data(), g_.fabric().address(to), g_.fabric().address(from.rank));
    wire::write_data(frame.data() + eth::kHeaderBytes, {kNodeGroup, kNodeEpoch, from.rank}, b, flags, type);
    std::copy(pay.begin(), pay.end(), frame.begin() + eth::kHeaderBytes + wire::kDataHeaderBytes + seals);
    const bool spoiled = keyed() && (kind & kStreamBadCrc);
    if (keyed()) {
      wire::Seal ps = g_.node(p).frame_auth()->seal_payload(pay.data(), b.payload_len);
      if (spoiled) ps.tag[0] ^= 1;
      wire::write_payload_seal(frame.data() + eth::kHeaderBytes, ps);
      seal_frame(frame, from.rank, type);
    }

    if (b.op == kForgedStream) {
      if (!pay.empty()) s.note_payload(number, b.payload_len);
      if (!(kind & kStreamBadCrc)) s.note_firsts(pay.data(), b.payload_len);
      // Only a batch near the stream's end moves it: one far ahead probes the window.
      if (offset >= 0 && offset < 64 && !(f[3] & kStreamFarBatch)) s.next = std::max(s.next, number + 1);
    }
    send(SentFrame{from.port, from.rank, to, type, spoiled, std::move(frame)});
  }

  void report(uint8_t kind, const uint8_t* f) {
    const uint32_t to = (f[0] & 3) % g_.members(), p = (f[0] >> 2 & 3) % g_.members();
    const bool real = (f[0] & kStreamRealStream) != 0;
    const uint32_t publisher = real ? 0 : p;
    // From the destination's first child in the stream's tree, or (not a
    // child) from the first other member that is not one.
    const algos::StreamTree tree(g_.members(), publisher, to, stream_fanout(scenario_));
    uint32_t src = tree.children() > 0 ? tree.child(0) : (to + 1) % g_.members();
    if (kind & kStreamNotParent)
      for (uint32_t k = 1; k < g_.members(); ++k)
        if (const uint32_t c = (to + k) % g_.members(); tree.child_index(c) == tree.children()) {
          src = c;
          break;
        }
    const uint64_t base = real ? g_.node(0).counters().streams.stream_batches_formed.get() : forged_[p].next;
    wire::DataBody b{};
    b.op = real ? kRealStream : kForgedStream;
    b.root = publisher;
    b.offset = base + static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(f[1])));
    b.segment = f[2] & 15;
    b.total_len = b.offset;  // what it holds (read over multicast)
    b.seq = f[2] >> 4;       // its first gap
    b.segment_bytes = kNodeSegment;
    const uint16_t flags = wire::kFlagStream | ((kind & kStreamNoSignal) ? 0 : wire::kFlagSignal) | sealed_flag();
    Bytes frame(eth::kHeaderBytes + wire::kDataHeaderBytes + (keyed() ? wire::seal_bytes(wire::FrameType::Datagram) : 0));
    eth::write_header(frame.data(), g_.fabric().address(to), g_.fabric().address(src));
    wire::write_data(frame.data() + eth::kHeaderBytes, {kNodeGroup, kNodeEpoch, src}, b, flags,
                     wire::FrameType::Datagram);
    // A report carries no payload: its payload seal is empty, as a member's.
    if (keyed()) seal_frame(frame, src, wire::FrameType::Datagram);
    g_.send(src, kStreamLane, frame);
  }

  void resend(uint8_t kind, uint8_t which) {
    if (sent_.empty()) return;
    SentFrame f = sent_[sent_.size() - 1 - which % sent_.size()];
    if (kind & kStreamFreshSeq) {  // the parent's copy after a lost ack: a new sequence number
      uint32_t& fresh = fresh_[f.src][f.to];
      if (fresh >= kMaxFresh) return;
      uint8_t* lc = f.bytes.data() + eth::kHeaderBytes;
      detail::put32(lc + sizeof(wire::FrameHeader) + offsetof(wire::DataBody, seq), fresh++);
      fix_header_crc(lc, f.bytes.size() - eth::kHeaderBytes);
      if (keyed()) seal_frame(f.bytes, f.src, f.type);  // a new frame: a new counter
    }
    // Else the very frame again: with a key, a replay its receiver refuses.
    if (g_.send(f.port, kStreamLane, f.bytes) && f.spoiled) ++spoiled_sent_;
  }

  void send(SentFrame f) {
    if (g_.send(f.port, kStreamLane, f.bytes) && f.spoiled) ++spoiled_sent_;
    sent_.push_back(std::move(f));
  }

  // --- a group with a key: the input holds it

  bool keyed() const { return (scenario_ & kStreamKeyed) != 0; }
  uint16_t sealed_flag() const { return keyed() ? wire::kFlagSealed : 0; }
  // Seals a frame as member `rank` seals those it sends: its own counter, so
  // every receiver's window takes it as the member's next.
  void seal_frame(Bytes& frame, uint32_t rank, wire::FrameType type) {
    g_.node(rank).frame_auth()->seal_frame(frame.data(), eth::kHeaderBytes, wire::frame_seal_at(type));
  }

  // --- the real stream (rank 0's stream 0)

  void open_publisher() {
    const lanecast::StreamOptions& o = g_.node(0).config().streams;
    auto shared = std::make_unique<stream::PublisherShared>();
    shared->index = kRealStream;
    shared->ring_mem = stream::aligned_bytes(stream::RecordRing::bytes_for(o.window_bytes));
    shared->ring = stream::RecordRing::init(shared->ring_mem.get(), o.window_bytes);
    pub_ = shared.get();
    pub_ring_ = stream::RecordRing(pub_->ring);
    if (!g_.node(0).open_publisher(std::move(shared))) die("rank 0 refused a publisher");
  }

  // As Publisher::publish does, without its window (the core waits for one).
  bool publish(uint32_t len) {
    uint8_t* at = pub_ring_.reserve(8 + len, 0);
    if (at == nullptr) return false;
    const uint64_t seq = lengths_.size(), stamp = stream_stamp(seq);
    std::memcpy(at, &stamp, 8);
    fill_bytes(at + 8, len, [seq](size_t i) { return stream_byte(i, seq); });
    pub_ring_.commit();
    lengths_.push_back(len);
    return true;
  }

  // --- delivery

  void step(uint64_t ns) {
    g_.step(ns);
    for (uint32_t r = 0; r < g_.members(); ++r)
      if (!handler_[r] && taking_[r]) drain(r);
  }

  struct Message {
    uint32_t publisher;
    uint16_t stream;
    uint64_t seq, timestamp_ns;
    std::span<const std::byte> data;
  };
  void drain(uint32_t r) {
    if (!readers_[r].valid()) {
      stream::RecordRingHeader* h = g_.node(r).streams().delivery_ring();
      if (h == nullptr) return;
      readers_[r] = stream::DeliveryReader(h);
    }
    Message m;
    while (readers_[r].next(m))
      take(r, m.publisher, m.stream, m.seq, m.timestamp_ns, reinterpret_cast<const uint8_t*>(m.data.data()),
           static_cast<uint32_t>(m.data.size()));
  }

  void take(uint32_t r, uint32_t publisher, uint16_t index, uint64_t seq, uint64_t stamp, const uint8_t* bytes,
            uint32_t len) {
    const auto who = [&] {
      return "rank " + std::to_string(r) + " delivered message " + std::to_string(seq) + " of rank " +
             std::to_string(publisher) + "'s stream " + std::to_string(index);
    };
    if (publisher >= g_.members() || index >= kStreams) die(who() + ": no such stream");
    uint64_t& next = next_seq_[r][publisher][index];
    if (seq != next) die(who() + ", expected message " + std::to_string(next) + " (out of order or twice)");
    ++next;
    if (index == kRealStream) {
      if (publisher != 0) die(who() + ": that stream never published");
      if (seq >= lengths_.size()) die(who() + ": only " + std::to_string(lengths_.size()) + " were published");
      if (len != lengths_[seq]) die(who() + ": " + std::to_string(len) + " bytes, published " + std::to_string(lengths_[seq]));
      if (stamp != stream_stamp(seq)) die(who() + ": another time stamp");
      if (const size_t i = first_difference(bytes, len, [seq](size_t k) { return stream_byte(k, seq); }); i != len)
        die(who() + ": byte " + std::to_string(i) + " differs");
      return;
    }
    const ForgedStream& s = forged_[publisher];
    if ((forged_bytes_[r][publisher] += len) > s.payload_total)
      die(who() + ": " + std::to_string(forged_bytes_[r][publisher]) + " bytes delivered, only " +
          std::to_string(s.payload_total) + " arrived");
    if (!s.announced(stamp, bytes, len))
      die(who() + ": " + std::to_string(len) + " bytes, time stamp " + std::to_string(stamp) +
          ": no first piece's head announced that message");
  }

  void print(const char* when) {
    g_.print_counters([&](uint32_t r) {
      return std::string(when) + " (" + (handler_[r] ? "handler" : "ring") + ", streams " +
             std::to_string(static_cast<int>(g_.node(r).streams().error())) + ", real delivered " +
             std::to_string(next_seq_[r][0][kRealStream]) + "/" + std::to_string(lengths_.size()) + ")";
    });
  }

  const uint8_t* data_;
  size_t size_;
  uint8_t scenario_;
  FuzzGroup g_;
  uint32_t rounds_ = 0;
  bool handler_[kMaxMembers] = {};
  bool taking_[kMaxMembers] = {true, true, true};
  stream::DeliveryReader readers_[kMaxMembers];
  uint64_t next_seq_[kMaxMembers][kMaxMembers][kStreams] = {};
  uint64_t forged_bytes_[kMaxMembers][kMaxMembers] = {};
  uint32_t fresh_[kMaxMembers][kMaxMembers] = {};  // the next sequence number of each channel (src, to) on lane 1
  ForgedStream forged_[kMaxMembers];
  std::vector<SentFrame> sent_;
  uint64_t spoiled_sent_ = 0;  // frames handed to the fabric with a spoiled payload seal
  stream::PublisherShared* pub_ = nullptr;  // owned by rank 0's node
  stream::RecordRing pub_ring_;
  std::vector<uint32_t> lengths_;  // of the real messages, by sequence number
};

void run(const uint8_t* data, size_t size) {
  auto r = std::make_unique<Run>(data, size);
  r->play();
  r->finish();
  r->group().teardown_clean();
}

}  // namespace
}  // namespace lanecast::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lanecast::fuzz::start_fuzz_process("stream_fuzz", "STREAM_FUZZ_VERBOSE");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size >= 1) lanecast::fuzz::run(data, size);
  return 0;
}
