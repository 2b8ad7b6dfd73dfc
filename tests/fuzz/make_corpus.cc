// Writes the seed corpus of the fuzz targets: real frames, built by the
// engine's own writers (wire::write_data, wire::write_ack) with right
// checksums, in the input formats of fuzz_input.h - data frames, datagrams,
// signals, acks, abandoned frames, frames of the next and of a far operation,
// and truncated, corrupt, foreign and forged ones; for a group with a key,
// frames without seals and sealed with garbage, and replays of the members'
// own frames; for streams, well-formed batches and messages in pieces, each
// malformed shape the stream code refuses, batches past the window, given
// up or sent twice, reports and real publishes. Deterministic: run.sh
// checks that tests/fuzz/corpus is exactly what this program writes.
//
// group_file_fuzz's seeds are the shipped group files and broken ones. And
// for shm_fuzz, a client's shared memory of the daemon (shm_input.h):
// honest traffic both ways, then each kind of scribble the rings must
// survive, placed on the words the layout (ipc/client_file.h) puts them at.
//
// usage: make_fuzz_corpus DIR   (writes DIR/<target>/* for each target)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/checksum/crc32c.h"
#include "engine/wire/wire.h"
#include "ipc/client_file.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/shm_input.h"

namespace lanecast::fuzz {
namespace {

namespace eth = drivers::ethernet;
using Bytes = std::vector<uint8_t>;

// A data frame, by default one of node_fuzz's first broadcast (chain from
// rank 0, kNodeSizes[0] bytes) with the root's real bytes.
struct Data {
  uint32_t group = kNodeGroup, src = 0, op = 1, root = 0, seq = 0, segment = 0;
  uint64_t total = kNodeSizes[0];
  algos::Algo algo = algos::Algo::Chain;
  uint8_t lane = 0;
  uint16_t flags = 0;
  wire::FrameType type = wire::FrameType::Data;
  bool payload = true;  // false: none, as in signals and abandoned frames
  uint32_t crc_xor = 0; // a corrupt payload checksum
};

Bytes data_frame(const Data& d) {
  const uint64_t offset = uint64_t{d.segment} * kNodeSegment;
  const uint32_t len = d.payload && offset < d.total ? static_cast<uint32_t>(std::min<uint64_t>(kNodeSegment, d.total - offset)) : 0;
  Bytes f(wire::kDataHeaderBytes + len);
  for (uint32_t i = 0; i < len; ++i) f[wire::kDataHeaderBytes + i] = node_byte(offset + i, d.op);
  wire::DataBody b{};
  b.op = d.op;
  b.root = d.root;
  b.seq = d.seq;
  b.segment = d.segment;
  b.offset = offset;
  b.total_len = d.total;
  b.payload_len = len;
  b.payload_crc = engine::crc32c(0, f.data() + wire::kDataHeaderBytes, len) ^ d.crc_xor;
  b.segment_bytes = kNodeSegment;
  b.algo = static_cast<uint8_t>(d.algo);
  b.lane = d.lane;
  wire::write_data(f.data(), {d.group, kNodeEpoch, d.src}, b, d.flags, d.type);
  return f;
}

Bytes ack_frame(uint32_t src, uint32_t cum_ack, uint16_t lane = 0, uint64_t sack0 = 0) {
  Bytes f(wire::kAckHeaderBytes);
  wire::AckBody a{};
  a.cum_ack = cum_ack;
  a.lane = lane;
  a.sack[0] = sack0;
  wire::write_ack(f.data(), {kNodeGroup, kNodeEpoch, src}, a);
  return f;
}

// A member still looking for its group (epoch 0), or one of another life.
Bytes hello_frame(uint32_t src, uint32_t epoch = 0) {
  Bytes f(wire::kHelloBytes);
  wire::HelloBody h{};
  h.incarnation = 0x1234'5678'9abc'def0ULL + src;
  h.spec_digest = 42;
  h.nodes = 2;
  h.lanes = 1;
  h.heard_all = 1;
  wire::write_hello(f.data(), {kNodeGroup, epoch, src}, h);
  return f;
}

// "Rank `culprit` is lost", as a fail-stop member tells its group.
Bytes failed_frame(uint32_t src, uint32_t culprit) {
  Bytes f(wire::kFailedBytes);
  wire::FailedBody b{};
  b.op = 1;
  b.culprit = culprit;
  b.reporter = src;
  b.error = 1;
  wire::write_failed(f.data(), {kNodeGroup, kNodeEpoch, src}, b);
  return f;
}

Bytes cut(Bytes f, size_t n) {
  f.resize(std::min(n, f.size()));
  return f;
}

Bytes with_link(uint32_t to, uint32_t from, const Bytes& f, bool to_all = false) {
  Bytes out(eth::kHeaderBytes);
  eth::write_header(out.data(), to_all ? eth::broadcast() : eth::node_mac(to, 0), eth::node_mac(from, 0));
  out.insert(out.end(), f.begin(), f.end());
  return out;
}

// --- node_fuzz inputs --------------------------------------------------------

struct Record {
  uint8_t how;
  uint8_t then;
  Bytes bytes;          // the frame, or a replay's XOR bytes
  bool replay = false;
  uint16_t index = 0;   // a replay's frame
};

// Sent from `port` to `to` (see fuzz_input.h), then `rounds` switch rounds.
Record rec(uint32_t port, uint32_t to, const Bytes& f, uint8_t rounds = 8, uint8_t extra = 0) {
  return Record{static_cast<uint8_t>(node_record_from(port) | node_record_to(to) | extra), rounds, f};
}
// Frame `index` of those the members sent, again from `port`: to `to` with
// its sender's MAC, or (kNodeRaw in extra) to whom it went; `xor_bytes`
// change it from its lanecast header on.
Record replay(uint32_t port, uint32_t to, uint16_t index, uint8_t rounds = 8, uint8_t extra = 0, const Bytes& xor_bytes = {}) {
  return Record{static_cast<uint8_t>(node_record_from(port) | node_record_to(to) | extra), rounds, xor_bytes, true, index};
}

Bytes node_input(uint8_t scenario, const std::vector<Record>& records, uint8_t group = 0) {
  Bytes in{scenario, group};
  for (const Record& r : records) {
    in.push_back(r.how);
    in.push_back(r.then);
    const uint16_t field = static_cast<uint16_t>(r.bytes.size() | (r.replay ? kNodeReplay : 0));
    in.push_back(static_cast<uint8_t>(field));
    in.push_back(static_cast<uint8_t>(field >> 8));
    if (r.replay) {
      in.push_back(static_cast<uint8_t>(r.index));
      in.push_back(static_cast<uint8_t>(r.index >> 8));
    }
    in.insert(in.end(), r.bytes.begin(), r.bytes.end());
  }
  return in;
}

// A frame as a member of a group with a key would send it - kFlagSealed,
// room for its seals after the body - but sealed with garbage.
Bytes garbage_sealed(Bytes f, uint8_t fill = 0x5e) {
  const auto type = static_cast<wire::FrameType>(f[1]);
  const uint16_t flags = static_cast<uint16_t>((f[2] | f[3] << 8) | wire::kFlagSealed);
  f[2] = static_cast<uint8_t>(flags);
  f[3] = static_cast<uint8_t>(flags >> 8);
  const size_t body = wire::frame_seal_at(type) - (wire::carries_payload(type) ? wire::kSealBytes : 0);
  f.insert(f.begin() + static_cast<std::ptrdiff_t>(body), wire::seal_bytes(type), fill);
  fix_header_crc(f.data(), f.size());
  return f;
}

// Scenario bytes (fuzz_input.h): members, algorithm index, size index, flags.
constexpr uint8_t scenario(uint32_t members, uint8_t algo, uint8_t size, uint8_t flags = 0) {
  return static_cast<uint8_t>((members - 2) | algo << 1 | size << 4 | flags);
}
constexpr uint8_t kChain = 0, kLinear = 1, kMcast = 3, kScatter = 5, kMultilane = 6;
constexpr uint32_t kAttacker = 3;  // a port number no group of 2-3 members has

std::vector<std::pair<std::string, Bytes>> node_seeds() {
  const uint8_t chain2 = scenario(2, kChain, 0), chain3 = scenario(3, kChain, 0);
  std::vector<std::pair<std::string, Bytes>> s;
  // Valid frames of the running broadcast, forged from the root's own port.
  s.push_back({"data_running_duplicate", node_input(chain2, {rec(0, 1, data_frame({}))})});
  {
    std::vector<Record> all;
    for (uint32_t i = 0; i < 4; ++i) all.push_back(rec(0, 1, data_frame({.seq = i, .segment = i}), 2));
    s.push_back({"data_whole_message_stashed", node_input(scenario(2, kChain, 0, kNodePostAfter), all)});
    s.push_back({"data_whole_message_running", node_input(chain2, all)});
  }
  s.push_back({"data_ack_now", node_input(chain3, {rec(0, 1, data_frame({.seq = 1, .segment = 1, .flags = wire::kFlagAckNow}))})});
  // The next broadcast (node_fuzz's first healing one: chain from the last
  // rank, 20 segments), a far one, and seqs out of the window.
  s.push_back({"data_next_op", node_input(chain2, {rec(1, 0, data_frame({.src = 1, .op = 2, .root = 1, .seq = 4,
                                                                         .total = 20 * kNodeSegment}))})});
  s.push_back({"data_far_op", node_input(chain2, {rec(0, 1, data_frame({.op = 40, .seq = 2}))})});
  s.push_back({"data_out_of_window", node_input(chain2, {rec(0, 1, data_frame({.seq = 100}))})});
  {
    std::vector<Record> many;  // more frames of the next broadcast than the stash holds
    for (uint32_t i = 0; i < 20; ++i)
      many.push_back(rec(0, 1, data_frame({.op = 2, .seq = 4 + i, .segment = i, .total = 20 * kNodeSegment}), 1));
    s.push_back({"data_stash_overflow", node_input(chain2, many)});
  }
  // Frames the plan refuses: a segment past the end, another message size.
  s.push_back({"data_bad_segment", node_input(chain2, {rec(0, 1, data_frame({.segment = 9}))})});
  s.push_back({"data_plan_mismatch", node_input(chain3, {rec(0, 1, data_frame({.total = 999}))})});
  s.push_back({"data_bad_payload_crc", node_input(chain2, {rec(0, 1, data_frame({.crc_xor = 1}))})});
  s.push_back({"data_other_lane", node_input(scenario(2, kChain, 0, kNodeTwoLanes),
                                             {rec(0, 1, data_frame({.lane = 1}), 8, kNodeLane1)})});
  s.push_back({"data_multilane", node_input(scenario(3, kMultilane, 3, kNodeTwoLanes),
                                            {rec(0, 2, data_frame({.seq = 0, .segment = 1, .total = 8 * kNodeSegment,
                                                                   .algo = algos::Algo::Multilane, .lane = 1}),
                                                 8, kNodeLane1)})});
  // Datagrams and signals (mcast_chain), abandoned frames.
  s.push_back({"datagram", node_input(scenario(3, kMcast, 0),
                                      {rec(0, 2, data_frame({.segment = 1, .algo = algos::Algo::McastChain,
                                                             .type = wire::FrameType::Datagram}))})});
  s.push_back({"signal", node_input(scenario(3, kMcast, 0),
                                    {rec(1, 0, data_frame({.src = 1, .algo = algos::Algo::McastChain,
                                                           .flags = wire::kFlagSignal, .payload = false}))})});
  s.push_back({"abandoned", node_input(chain2, {rec(0, 1, data_frame({.flags = wire::kFlagAbandoned, .payload = false}))})});
  // Acks: plausible, far ahead, on a lane the group lacks, forged by the attacker.
  s.push_back({"ack_plausible", node_input(chain3, {rec(1, 0, ack_frame(1, 2, 0, 0b101))})});
  s.push_back({"ack_far_ahead", node_input(chain2, {rec(1, 0, ack_frame(1, 1000))})});
  s.push_back({"ack_bad_lane", node_input(chain2, {rec(1, 0, ack_frame(1, 1, 3))})});
  s.push_back({"ack_from_attacker", node_input(chain2, {rec(kAttacker, 0, ack_frame(1, 4))})});
  // Broken and foreign frames.
  const Bytes good = data_frame({});
  s.push_back({"truncated", node_input(chain2, {rec(0, 1, cut(good, 10)), rec(0, 1, cut(good, 30)),
                                                rec(0, 1, cut(good, wire::kDataHeaderBytes + 7)),
                                                rec(1, 0, cut(ack_frame(1, 1), 20))})});
  {
    Bytes v = good, t = good;
    v[0] = 1;   // version
    t[1] = 9;   // type
    Bytes h = good;
    h[20] ^= 4; // header bit flip
    s.push_back({"bad_headers", node_input(chain2, {rec(0, 1, v), rec(0, 1, t), rec(0, 1, h)})});
  }
  s.push_back({"foreign", node_input(chain3, {rec(0, 1, data_frame({.group = 8})), rec(0, 1, data_frame({.src = 5})),
                                              rec(0, 1, data_frame({.src = 1}))})});
  s.push_back({"failure_notice", node_input(chain3, {rec(2, 1, failed_frame(2, 0)), rec(0, 1, data_frame({}))})});
  s.push_back({"hellos", node_input(chain2, {rec(0, 1, hello_frame(0)), rec(0, 1, hello_frame(0, kNodeEpoch))})});
  s.push_back({"spoofed_by_attacker", node_input(chain2, {rec(kAttacker, 1, data_frame({}))})});
  {
    Bytes ip = with_link(1, 0, good);
    ip[12] = 0x08;
    ip[13] = 0x00;
    s.push_back({"raw_not_lanecast", node_input(chain2, {rec(0, 1, ip, 8, kNodeRaw)})});
    s.push_back({"raw_to_everyone", node_input(chain3, {rec(0, 0, with_link(0, 0, good, true), 8, kNodeRaw)})});
  }
  // Fix-ups: a frame whose checksums and length the target makes right.
  {
    Bytes f = data_frame({.segment = 2});
    f.resize(f.size() - 100);
    s.push_back({"fixed_up", node_input(chain2, {rec(0, 1, f, 8, kNodeFixHeader | kNodeFixPayload)})});
  }
  // The root posts between the frames: forged acks meet its running broadcast.
  s.push_back({"root_posts_midway", node_input(chain3, {rec(0, 1, data_frame({}), kNodePost | 2), rec(1, 0, ack_frame(1, 1)),
                                                        rec(2, 1, ack_frame(2, 3, 0, 1)), rec(1, 0, ack_frame(1, 4, 0, 3))})});
  // Time passes unpolled mid-broadcast, then more frames come.
  s.push_back({"stall_then_frames", node_input(scenario(3, kLinear, 0),
                                               {Record{static_cast<uint8_t>(node_record_from(0) | node_record_to(1)), kNodeWait | 4,
                                                       data_frame({.seq = 1, .segment = 1, .algo = algos::Algo::Linear})},
                                                rec(2, 0, ack_frame(2, 1))})});
  s.push_back({"empty_message", node_input(scenario(2, kChain, 2), {rec(0, 1, data_frame({.total = 0, .payload = false}))})});
  s.push_back({"scatter_allgather", node_input(scenario(3, kScatter, 3),
                                               {rec(1, 2, data_frame({.src = 1, .segment = 3, .total = 8 * kNodeSegment,
                                                                      .algo = algos::Algo::ScatterAllgather}))})});
  // Fail-stop groups: a forged notice, and frames after it.
  s.push_back({"fail_stop_notice", node_input(chain3, {rec(2, 1, failed_frame(2, 0)), rec(0, 1, data_frame({}))}, kNodeFailStop)});
  s.push_back({"fail_stop_stall", node_input(scenario(3, kLinear, 0),
                                             {Record{static_cast<uint8_t>(node_record_from(0) | node_record_to(1)), kNodeWait | 4,
                                                     data_frame({.seq = 1, .segment = 1, .algo = algos::Algo::Linear})}},
                                             kNodeFailStop)});
  // Replays of what the members sent, without a key: they speak for the
  // members, and may spoil a broadcast.
  s.push_back({"replays_unkeyed", node_input(chain3, {rec(kAttacker, 1, ack_frame(1, 0), kNodePost | 20), replay(kAttacker, 1, 0, 4, kNodeRaw),
                                                      replay(kAttacker, 2, 3, 4), replay(kAttacker, 0, 7, 4)})});
  // A group with a key: what the attacker sends never opens. Frames without
  // seals from a member's own port and with its MAC, frames sealed with
  // garbage, replays as they went, to another member, changed.
  const uint8_t keyed = kNodeKeyed;
  s.push_back({"keyed_running", node_input(chain3, {rec(kAttacker, 1, ack_frame(1, 1), kNodePost | 30)}, keyed)});
  s.push_back({"keyed_unsealed", node_input(chain3, {rec(0, 1, data_frame({})), rec(0, 1, data_frame({.seq = 1, .segment = 1})),
                                                     rec(1, 0, ack_frame(1, 4)), rec(2, 1, failed_frame(2, 0))}, keyed)});
  s.push_back({"keyed_garbage_seals", node_input(chain3, {rec(0, 1, garbage_sealed(data_frame({}))),
                                                          rec(0, 1, garbage_sealed(data_frame({.seq = 1, .segment = 1}), 0)),
                                                          rec(1, 0, garbage_sealed(ack_frame(1, 4))),
                                                          rec(2, 1, garbage_sealed(failed_frame(2, 0)))}, keyed | kNodeFailStop)});
  s.push_back({"keyed_member_mac", node_input(chain2, {rec(0, 1, with_link(1, 0, garbage_sealed(data_frame({}))), 8, kNodeRaw),
                                                       rec(0, 1, with_link(0, 1, garbage_sealed(ack_frame(1, 3))), 8, kNodeRaw)}, keyed)});
  {
    std::vector<Record> replays{rec(kAttacker, 1, ack_frame(1, 0), kNodePost | 10)};
    for (uint16_t i = 0; i < 12; ++i) replays.push_back(replay(kAttacker, 0, i, 2, kNodeRaw));
    s.push_back({"keyed_replays", node_input(chain3, replays, keyed)});
    s.push_back({"keyed_replays_stashed", node_input(scenario(3, kChain, 0, kNodePostAfter), replays, keyed)});
  }
  {
    // Frames a member sent to one member, sent to another (its MAC kept).
    std::vector<Record> elsewhere{rec(kAttacker, 1, ack_frame(1, 0), kNodePost | 6)};
    for (uint16_t i = 0; i < 8; ++i) elsewhere.push_back(replay(kAttacker, i % 3, i, 2));
    s.push_back({"keyed_replays_elsewhere", node_input(scenario(3, kScatter, 3), elsewhere, keyed)});
    s.push_back({"keyed_replays_elsewhere_linear", node_input(scenario(3, kLinear, 0), elsewhere, keyed)});
  }
  {
    // A captured data frame with its payload changed, CRCs made right.
    Bytes flip(wire::kDataHeaderBytes + 2 * wire::kSealBytes + 8, 0);
    flip.back() = 0x40;
    s.push_back({"keyed_replay_changed", node_input(chain2, {rec(kAttacker, 1, ack_frame(1, 0), kNodePost | 3),
                                                             replay(kAttacker, 1, 0, 8, kNodeRaw | kNodeFixPayload | kNodeFixHeader, flip)},
                                                    keyed)});
  }
  return s;
}

// --- stream_fuzz inputs ------------------------------------------------------

// One record of a forged batch (fuzz_input.h): flags (kMorePieces 1,
// kContinuation 2, the head's piece length lying in bits 2-3), the piece's
// bytes, the message's bytes beyond this piece, and a content seed.
struct SRec {
  uint8_t flags = 0;
  uint16_t piece = 10;
  uint16_t beyond = 0;
  uint8_t seed = 1;
};
constexpr uint8_t kMore = 1, kCont = 2, kLiesLonger = 1 << 2, kLiesShorter = 2 << 2, kLiesHuge = 3 << 2;

// A forged batch of publisher `from`'s stream 1 to rank `to`, `offset`
// batches past the stream's next (0: the next one).
struct SBatch {
  uint32_t to = 1, publisher = 0;
  int16_t offset = 0;
  uint8_t flags = 0;        // kStreamNotParent, kStreamBadCrc, kStreamAbandoned, kStreamSeqAhead, kStreamDatagram
  uint8_t where_flags = 0;  // kStreamNoStream, kStreamBadSegment, kStreamMoreRecords, kStreamFewerRecords
  bool far = false;
  uint8_t then = 4;
};

void put16(Bytes& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}

Bytes sbatch(const SBatch& o, const std::vector<SRec>& recs) {
  Bytes b{static_cast<uint8_t>(kStreamBatch | o.flags), o.then,
          static_cast<uint8_t>(o.to | o.publisher << 2 | o.where_flags)};
  put16(b, static_cast<uint16_t>(o.offset));
  b.push_back(static_cast<uint8_t>((recs.size() - 1) | (o.far ? kStreamFarBatch : 0)));
  for (const SRec& r : recs) {
    b.push_back(r.flags);
    put16(b, r.piece);
    put16(b, r.beyond);
    b.push_back(r.seed);
  }
  return b;
}
Bytes sreport(uint32_t to, uint32_t publisher, bool real, int8_t mark, uint8_t slowest, uint8_t flags = 0,
              uint8_t then = 4) {
  return {static_cast<uint8_t>(kStreamReport | flags), then,
          static_cast<uint8_t>(to | publisher << 2 | (real ? kStreamRealStream : 0)), static_cast<uint8_t>(mark), slowest};
}
Bytes sresend(uint8_t which, bool fresh_seq, uint8_t then = 4) {
  return {static_cast<uint8_t>(kStreamResend | (fresh_seq ? kStreamFreshSeq : 0)), then, which};
}
Bytes spublish(uint16_t len, uint8_t then = 4) {
  Bytes b{kStreamPublish, then};
  put16(b, len);
  return b;
}
Bytes sdrain(uint32_t member, bool stop, uint8_t then = 1) {
  return {kStreamDrain, then, static_cast<uint8_t>(member | (stop ? kStreamStopTaking : 0))};
}
Bytes sstep(uint8_t then) { return {7, then}; }  // a kind with no fields: rounds only

Bytes stream_input(uint8_t scenario, const std::vector<Bytes>& records) {
  Bytes in{scenario};
  for (const Bytes& r : records) in.insert(in.end(), r.begin(), r.end());
  return in;
}

// Scenario bytes: members, tree, who takes messages in a handler, fail-stop,
// streams over multicast.
constexpr uint8_t sscenario(uint32_t members, bool tree, uint8_t handlers = 0, bool fail_stop = false,
                            bool multicast = false) {
  return static_cast<uint8_t>((members - 2) | (tree ? kStreamBinaryTree : 0) | handlers * kStreamHandler0 |
                              (fail_stop ? kStreamFailStop : 0) | (multicast ? kStreamMulticast : 0));
}

std::vector<std::pair<std::string, Bytes>> stream_seeds() {
  const uint8_t chain2 = sscenario(2, false), chain3 = sscenario(3, false), tree3 = sscenario(3, true);
  const uint8_t handler1 = sscenario(2, false, 2), handlers3 = sscenario(3, false, 7);
  // A 600-byte message in three pieces: the first ends its batch, the
  // others start theirs (each piece's `beyond` = the message's bytes
  // minus this piece's).
  const std::vector<Bytes> pieces = {sbatch({}, {{kMore, 200, 400, 3}}),
                                     sbatch({}, {{kMore | kCont, 240, 360, 3}}),
                                     sbatch({}, {{kCont, 160, 440, 3}, {0, 20, 0, 4}})};
  std::vector<std::pair<std::string, Bytes>> s;
  // Well-formed batches.
  s.push_back({"one_message", stream_input(chain2, {sbatch({}, {{}})})});
  s.push_back({"three_records", stream_input(chain3, {sbatch({}, {{0, 1, 0, 1}, {0, 100, 0, 2}, {0, 60, 0, 3}}),
                                                      sbatch({}, {{0, 0, 0, 4}})})});
  s.push_back({"pieces", stream_input(chain3, pieces)});
  s.push_back({"pieces_handler", stream_input(handler1, pieces)});
  s.push_back({"pieces_out_of_order", stream_input(chain2, {pieces[0], sbatch({.offset = 1}, {{kCont, 160, 440, 3}}),
                                                            sbatch({.offset = -2}, {{kMore | kCont, 240, 360, 3}})})});
  s.push_back({"tree", stream_input(tree3, {sbatch({.to = 1}, {{}}), sbatch({.to = 2, .offset = -1}, {{}}),
                                            sbatch({.to = 2}, {{0, 30, 0, 5}})})});
  s.push_back({"chain_past_rank1", stream_input(chain3, {sbatch({.to = 2}, {{}}), sbatch({.to = 1, .offset = -1}, {{}})})});
  s.push_back({"other_publisher", stream_input(chain3, {sbatch({.to = 2, .publisher = 1}, {{}}),
                                                        sbatch({.to = 0, .publisher = 1}, {{}})})});
  // Each shape the stream code refuses.
  s.push_back({"head_longer", stream_input(chain2, {sbatch({}, {{kLiesLonger, 10, 0, 1}, {0, 10, 0, 2}})})});
  s.push_back({"head_shorter", stream_input(chain2, {sbatch({}, {{kLiesShorter, 10, 0, 1}})})});
  s.push_back({"head_huge", stream_input(chain2, {sbatch({}, {{kLiesHuge, 10, 0, 1}})})});
  s.push_back({"count_more", stream_input(chain2, {sbatch({.where_flags = kStreamMoreRecords}, {{}})})});
  s.push_back({"count_fewer", stream_input(chain2, {sbatch({.where_flags = kStreamFewerRecords}, {{}, {}})})});
  s.push_back({"more_not_last", stream_input(chain2, {sbatch({}, {{kMore, 50, 50, 1}, {0, 10, 0, 2}})})});
  s.push_back({"continuation_not_first", stream_input(chain2, {sbatch({}, {{0, 10, 0, 1}, {kCont, 50, 50, 2}})})});
  s.push_back({"empty_piece", stream_input(chain2, {sbatch({}, {{kMore, 0, 10, 1}})})});
  s.push_back({"single_shorter_than_message", stream_input(chain2, {sbatch({}, {{0, 10, 5, 1}})})});
  s.push_back({"pieces_overrun", stream_input(chain2, {sbatch({}, {{kMore, 200, 100, 1}}), sbatch({}, {{kCont, 200, 100, 1}})})});
  s.push_back({"pieces_short", stream_input(chain2, {sbatch({}, {{kMore, 100, 200, 1}}), sbatch({}, {{kCont, 100, 200, 1}})})});
  s.push_back({"pieces_more_after_length", stream_input(chain2, {sbatch({}, {{kMore, 200, 100, 1}}),
                                                                 sbatch({}, {{kMore | kCont, 100, 200, 1}})})});
  s.push_back({"orphan_continuation", stream_input(chain2, {sbatch({}, {{kCont, 10, 10, 1}, {0, 5, 0, 2}})})});
  s.push_back({"message_too_large", stream_input(handler1, {sbatch({}, {{kMore, 200, 60000, 1}}),
                                                            sbatch({}, {{kMore | kCont, 240, 60000, 1}})})});
  s.push_back({"bad_crc", stream_input(chain2, {sbatch({.flags = kStreamBadCrc}, {{}}), sbatch({.offset = -1}, {{}})})});
  s.push_back({"bad_segment", stream_input(chain2, {sbatch({.where_flags = kStreamBadSegment}, {{}})})});
  s.push_back({"payload_past_segment", stream_input(chain2, {sbatch({}, {{0, 200, 0, 1}, {0, 60, 0, 2}})})});
  s.push_back({"not_from_parent", stream_input(chain3, {sbatch({.to = 2, .flags = kStreamNotParent}, {{}}),
                                                        sbatch({.to = 1, .flags = kStreamNotParent}, {{}})})});
  s.push_back({"to_its_publisher", stream_input(chain2, {sbatch({.to = 0}, {{}})})});
  s.push_back({"no_such_stream", stream_input(chain2, {sbatch({.where_flags = kStreamNoStream}, {{}})})});
  // The window: batches past it, half the number space away, behind it.
  s.push_back({"past_the_window", stream_input(chain2, {sbatch({.offset = 40}, {{}}), sbatch({.offset = 15}, {{}})})});
  s.push_back({"far_batch", stream_input(chain2, {sbatch({.far = true}, {{}})})});
  s.push_back({"behind", stream_input(chain2, {sbatch({}, {{}}), sbatch({}, {{}}), sbatch({.offset = -2}, {{0, 3, 0, 9}})})});
  s.push_back({"window_full", stream_input(chain3, [] {
                 std::vector<Bytes> all;
                 for (int i = 0; i < 20; ++i) all.push_back(sbatch({.then = 1}, {{0, 10, 0, static_cast<uint8_t>(i)}}));
                 return all;
               }())});
  s.push_back({"gap_filled", stream_input(chain2, {sbatch({.offset = 1}, {{}}), sbatch({.offset = -2}, {{}})})});
  s.push_back({"gap_times_out", stream_input(chain3, {sbatch({.offset = 1}, {{}}), sstep(kStreamWait | 2),
                                                      sstep(kStreamWait | 2), sstep(kStreamWait | 2),
                                                      sstep(kStreamWait | 2), sstep(kStreamWait | 2)})});
  s.push_back({"piece_waits", stream_input(chain2, {sbatch({}, {{kMore, 200, 400, 1}}), sstep(kStreamWait | 7)})});
  // Batches given up, duplicates, sequence numbers past the channel's window.
  s.push_back({"given_up_lacking", stream_input(chain3, {sbatch({.flags = kStreamAbandoned}, {{}})})});
  s.push_back({"given_up_held", stream_input(chain2, {sbatch({}, {{}}), sbatch({.offset = -1, .flags = kStreamAbandoned}, {{}})})});
  s.push_back({"given_up_fail_stop", stream_input(sscenario(3, true, 0, true), {sbatch({.to = 2, .flags = kStreamAbandoned}, {{}})})});
  s.push_back({"resend_same", stream_input(chain2, {sbatch({}, {{}}), sresend(0, false), sresend(0, false)})});
  s.push_back({"resend_fresh_seq", stream_input(chain3, {sbatch({}, {{}}), sresend(0, true)})});
  s.push_back({"seq_ahead", stream_input(chain2, {sbatch({.flags = kStreamSeqAhead}, {{}}), sbatch({.offset = -1}, {{}})})});
  // Reports: from the child, from a member that is not one, a mark past
  // what is held, a stream datagram that is no report, and one about the
  // real stream that lets the publisher go early.
  s.push_back({"report_from_child", stream_input(chain3, {sbatch({}, {{}}), sreport(1, 0, false, 0, 2)})});
  s.push_back({"report_not_child", stream_input(chain3, {sbatch({}, {{}}), sreport(1, 0, false, 0, 2, kStreamNotParent)})});
  s.push_back({"report_past_end", stream_input(chain3, {sbatch({}, {{}}), sreport(1, 0, false, 9, 2)})});
  s.push_back({"report_no_signal", stream_input(chain3, {sreport(0, 0, true, 0, 1, kStreamNoSignal)})});
  s.push_back({"report_real_early", stream_input(chain3, {spublish(3000, 1), sreport(0, 0, true, 0, 1, 0, 7)})});
  // The real stream meanwhile: messages large and small, a member that
  // stops taking them (its ring fills), and one that takes them again.
  s.push_back({"publish_between", stream_input(tree3, {spublish(1), sbatch({}, {{}}), spublish(700), sbatch({}, {{}})})});
  s.push_back({"ring_full", stream_input(chain3, {sdrain(2, true), spublish(3000), spublish(3000), spublish(3000),
                                                  sbatch({}, {{0, 200, 0, 1}}), sdrain(2, false)})});
  s.push_back({"handlers_and_pieces", stream_input(handlers3, {spublish(3360), pieces[0], pieces[1], pieces[2]})});
  s.push_back({"stall", stream_input(chain3, {spublish(500, kStreamWait | 1), sbatch({}, {{}})})});
  // Streams over multicast: batches as from the group address (in order,
  // out of order, twice, from a member that is not the publisher, past the
  // window, to a group whose streams are not over multicast), reports with
  // a gap to repair, and the real stream's multicasts with a member that
  // stops taking them.
  const uint8_t mcast3 = sscenario(3, false, 0, false, true), mcast2 = sscenario(2, false, 2, false, true);
  s.push_back({"mcast_batches", stream_input(mcast3, {sbatch({.flags = kStreamDatagram}, {{}}),
                                                      sbatch({.to = 2, .flags = kStreamDatagram}, {{0, 60, 0, 2}}),
                                                      sbatch({.offset = 1, .flags = kStreamDatagram}, {{}}),
                                                      sbatch({.offset = -2, .flags = kStreamDatagram}, {{}}),
                                                      sbatch({.offset = -2, .flags = kStreamDatagram}, {{}})})});
  s.push_back({"mcast_not_publisher", stream_input(mcast3, {sbatch({.to = 2, .flags = kStreamDatagram | kStreamNotParent}, {{}})})});
  s.push_back({"mcast_past_window", stream_input(mcast2, {sbatch({.offset = 40, .flags = kStreamDatagram}, {{}})})});
  s.push_back({"mcast_pieces", stream_input(mcast2, {sbatch({.flags = kStreamDatagram}, {{kMore, 200, 400, 3}}),
                                                     sbatch({.flags = kStreamDatagram}, {{kMore | kCont, 240, 360, 3}}),
                                                     sbatch({}, {{kCont, 160, 440, 3}, {0, 20, 0, 4}})})});
  s.push_back({"datagram_without_mcast", stream_input(chain2, {sbatch({.flags = kStreamDatagram}, {{}})})});
  s.push_back({"mcast_report_gap", stream_input(mcast3, {spublish(300, 2), spublish(300, 2), spublish(300, 2),
                                                         sreport(0, 0, true, -2, 0x31), sstep(kStreamWait | 3)})});
  s.push_back({"mcast_real_ring_full", stream_input(mcast3, {sdrain(2, true), spublish(3000), spublish(3000),
                                                             spublish(3000), sstep(kStreamWait | 2), sdrain(2, false)})});
  // A group with a key, the input a member that holds it: batches and
  // pieces through the keyed receive path, a spoiled payload seal, the very
  // frame again (a replay) and a fresh copy, reports, and over multicast.
  s.push_back({"keyed_pieces", stream_input(chain3 | kStreamKeyed, pieces)});
  s.push_back({"keyed_bad_seal", stream_input(chain2 | kStreamKeyed, {sbatch({.flags = kStreamBadCrc}, {{}}),
                                                                     sbatch({.offset = -1}, {{}})})});
  s.push_back({"keyed_replay", stream_input(chain2 | kStreamKeyed, {sbatch({}, {{}}), sresend(0, false), spublish(300)})});
  s.push_back({"keyed_resend_fresh", stream_input(chain3 | kStreamKeyed, {sbatch({}, {{}}), sresend(0, true)})});
  s.push_back({"keyed_reports", stream_input(chain3 | kStreamKeyed, {sbatch({}, {{}}), sreport(1, 0, false, 0, 2),
                                                                      sreport(0, 0, true, 0, 1, 0, 7)})});
  s.push_back({"keyed_mcast", stream_input(mcast3 | kStreamKeyed, {sbatch({.flags = kStreamDatagram}, {{}}),
                                                                    sbatch({.offset = 1, .flags = kStreamDatagram | kStreamBadCrc}, {{}}),
                                                                    spublish(300, 2), sreport(0, 0, true, -1, 0x31)})});
  return s;
}

// --- wire_fuzz inputs --------------------------------------------------------

Bytes wire_input(uint8_t mode, uint8_t split, const Bytes& frame) {
  Bytes in{mode, split};
  in.insert(in.end(), frame.begin(), frame.end());
  return in;
}

std::vector<std::pair<std::string, Bytes>> wire_seeds() {
  const Bytes data = with_link(1, 0, data_frame({}));
  const Bytes ack = with_link(0, 1, ack_frame(1, 3, 0, 0xf0));
  std::vector<std::pair<std::string, Bytes>> s;
  s.push_back({"data", wire_input(0, 0, data)});
  s.push_back({"data_no_link", wire_input(1, 0, data_frame({.segment = 3}))});
  {
    Bytes tagged = data;  // 18 bytes of link header: 4 more, as a VLAN tag would add
    tagged.insert(tagged.begin() + eth::kHeaderBytes, {0x81, 0x00, 0x00, 0x07});
    s.push_back({"data_link18", wire_input(2, 0, tagged)});
  }
  s.push_back({"data_split_in_headers", wire_input(kWireChained, 40, data)});
  s.push_back({"data_split_in_payload", wire_input(kWireChained, 200, data)});
  s.push_back({"datagram", wire_input(0, 0, with_link(2, 0, data_frame({.type = wire::FrameType::Datagram})))});
  s.push_back({"signal", wire_input(0, 0, with_link(0, 1, data_frame({.src = 1, .flags = wire::kFlagSignal, .payload = false})))});
  s.push_back({"abandoned", wire_input(0, 0, with_link(1, 0, data_frame({.flags = wire::kFlagAbandoned, .payload = false})))});
  s.push_back({"ack", wire_input(0, 0, ack)});
  s.push_back({"ack_split", wire_input(kWireChained, 30, ack)});
  s.push_back({"truncated_header", wire_input(0, 0, cut(data, 20))});
  s.push_back({"truncated_body", wire_input(0, 0, cut(data, 50))});
  s.push_back({"truncated_payload", wire_input(0, 0, cut(data, data.size() - 9))});
  s.push_back({"bad_payload_crc", wire_input(0, 0, with_link(1, 0, data_frame({.crc_xor = 0x80})))});
  {
    // Sealed: the seals (payload's, frame's) between the body and the payload.
    Bytes sealed = data_frame({.flags = wire::kFlagSealed});
    sealed.insert(sealed.begin() + wire::kDataHeaderBytes, 2 * wire::kSealBytes, 0x5e);
    s.push_back({"data_sealed", wire_input(0, 0, with_link(1, 0, sealed))});
    Bytes ack_sealed(wire::kAckHeaderBytes + wire::kSealBytes, 0x5e);
    wire::write_ack(ack_sealed.data(), {kNodeGroup, kNodeEpoch, 1}, wire::AckBody{}, wire::kFlagSealed);
    s.push_back({"ack_sealed", wire_input(0, 0, with_link(0, 1, ack_sealed))});
  }
  {
    Bytes v = data, t = data, h = data;
    v[14] = 3;
    t[15] = 0;
    h[40] ^= 1;
    s.push_back({"bad_version", wire_input(0, 0, v)});
    s.push_back({"bad_type", wire_input(0, 0, t)});
    s.push_back({"bad_header_crc", wire_input(0, 0, h)});
    s.push_back({"fixed_up", wire_input(kWireFixHeader | kWireFixPayload, 0, cut(data, data.size() - 50))});
  }
  return s;
}

// --- group_file_fuzz inputs ---------------------------------------------------

Bytes text(const std::string& t) { return Bytes(t.begin(), t.end()); }

// The shipped group files (config/groups/*.toml, by name), and broken ones:
// each kind of mistake the reader names, and TOML it must survive.
std::vector<std::pair<std::string, Bytes>> group_file_seeds() {
  std::vector<std::pair<std::string, Bytes>> s;
  std::vector<std::filesystem::path> shipped;
  for (const auto& e : std::filesystem::directory_iterator(std::string(LANECAST_SOURCE_DIR) + "/config/groups"))
    if (e.path().extension() == ".toml") shipped.push_back(e.path());
  std::sort(shipped.begin(), shipped.end());
  for (const auto& path : shipped) {
    std::ifstream in(path, std::ios::binary);
    s.push_back({"shipped_" + path.stem().string(), Bytes(std::istreambuf_iterator<char>(in), {})});
  }
  const std::string member = "[[member]]\nrank = 0\nlanes = [\"net_af_packet0,iface=v0\"]\n";
  const std::string two = member + "[[member]]\nrank = 1\nlanes = [\"net_af_packet1,iface=v1\"]\n";
  const std::string group = "[group]\nname = \"g\"\nbootstrap = \"discovery\"\n";
  s.push_back({"broken_empty", {}});
  s.push_back({"broken_syntax", text(group + "lanes = = 2\n" + member)});
  s.push_back({"broken_no_group", text(member)});
  s.push_back({"broken_unknown_key", text(group + "colour = \"red\"\n" + member)});
  s.push_back({"broken_wrong_type", text(group + "window = \"64\"\n" + member)});
  s.push_back({"broken_out_of_range", text(group + "lanes = 9\nwindow = 0\n" + member)});
  s.push_back({"broken_big_integer", text(group + "port_rate_mbit = 9007199254740993\n" + member)});
  s.push_back({"broken_timeouts", text(group + "peer_timeout_ms = 1e30\nbootstrap_timeout_ms = 0.5\n" + member)});
  s.push_back({"broken_sizes", text(group + "max_message = \"99999999999G\"\nstream_window_bytes = \"1K\"\n" + member)});
  s.push_back({"broken_algo", text(group + "algo = \"quicksort\"\n" + member)});
  s.push_back({"broken_mcast", text(group + "algo = \"chain\"\nmcast_root_delay_us = 5000\nmcast_loss = 1\n" + member)});
  s.push_back({"broken_duplicate_rank", text(group + member + member)});
  s.push_back({"broken_rank_gap", text(group + member + "[[member]]\nrank = 5\nlanes = [\"x\"]\n")});
  s.push_back({"broken_lanes", text(group + "lanes = 2\n" + member)});
  s.push_back({"broken_macs", text("[group]\nname = \"g\"\nepoch = 1\n" + member +
                                   "macs = [\"01:00:5e:00:00:01\"]\n[[member]]\nrank = 1\nlanes = [\"y\"]\n"
                                   "macs = [\"zz:00:00:00:00:01\"]\n")});
  s.push_back({"broken_static_no_epoch", text("[group]\nname = \"g\"\n" + member + "macs = [\"02:00:00:00:00:01\"]\n")});
  s.push_back({"broken_sites", text(group + "site_latency_us = [[0, 5], [5]]\n" + two)});
  s.push_back({"broken_site_index", text(group + "site_latency_us = [[0, 5], [5, 0]]\n" + member + "site = 7\n")});
  s.push_back({"broken_member_not_table", text(group + "member = 3\n")});
  s.push_back({"broken_streams", text(group + "stream_window = 8\nstream_report_us = 2e6\nmax_streams = 4096\n" + member)});
  s.push_back({"broken_nul_and_utf8", text(group + "name2 = \"\xC3\x28\"\n" + std::string(1, '\0') + member)});
  return s;
}

// --- shm_fuzz: a file of both rings, publish ring kShmRings[0], delivery kShmRings[4].
constexpr uint8_t kShmShape = 3 | (0 << 2) | (4 << 5);

std::vector<std::pair<std::string, Bytes>> shm_seeds() {
  const auto lay = ipc::client_layout(ipc::Role::Both, kShmRings[0], kShmRings[4]);
  if (!lay) throw std::runtime_error("shm seeds: no layout");
  auto word = [](uint64_t ring, size_t field) { return static_cast<uint16_t>((ring + field) / 8); };
  const uint16_t pub_head = word(lay->publish, offsetof(ipc::RecordRingHeader, head));
  const uint16_t pub_cap = word(lay->publish, offsetof(ipc::RecordRingHeader, capacity));
  const uint16_t pub_data = word(lay->publish, sizeof(ipc::RecordRingHeader));
  const uint16_t del_head = word(lay->delivery, offsetof(ipc::RecordRingHeader, head));
  const uint16_t del_tail = word(lay->delivery, offsetof(ipc::RecordRingHeader, tail));
  const uint16_t del_data = word(lay->delivery, sizeof(ipc::RecordRingHeader));
  const uint16_t note_tail = word(lay->notice, offsetof(ipc::RecordRingHeader, tail));
  const uint16_t version = 1;  // the header's version and client id share word 1
  auto start = [] { return Bytes{kShmShape, 100}; };
  auto step = [](Bytes& b, ShmStep s, uint8_t n = 0) { b.push_back(shm_step(s, n)); };
  auto put = [&](Bytes& b, uint16_t len) {
    step(b, ShmStep::ClientPut);
    put16(b, len);
  };
  auto give = [&](Bytes& b, uint16_t len) {
    step(b, ShmStep::DaemonGive);
    put16(b, len);
  };
  auto scribble = [&](Bytes& b, uint16_t w, uint8_t kind) {
    step(b, ShmStep::Word);
    put16(b, w);
    b.push_back(kind);
  };
  auto honest = [&](Bytes& b) {
    step(b, ShmStep::ClientOpen);
    for (uint16_t len : {0, 17, 800}) put(b, len);
    step(b, ShmStep::DaemonTake, 7);
    for (uint16_t len : {0, 5, 1000, 4000}) give(b, len);
    step(b, ShmStep::DaemonTell);
    step(b, ShmStep::ClientTake, 7);
  };
  std::vector<std::pair<std::string, Bytes>> s;
  {
    Bytes b = start();
    honest(b);
    honest(b);
    s.push_back({"honest", b});
  }
  {
    Bytes b = start();
    honest(b);
    scribble(b, pub_cap, kWordHuge);  // the daemon's view never reads it again
    put(b, 300);
    step(b, ShmStep::DaemonTake, 3);
    step(b, ShmStep::ClientOpen);     // the application's check refuses the file now
    s.push_back({"publish_capacity_huge", b});
  }
  {
    Bytes b = start();
    honest(b);
    scribble(b, pub_head, kWordHeadPlusCap);
    step(b, ShmStep::DaemonTake, 3);
    s.push_back({"publish_head_past_end", b});
  }
  {
    Bytes b = start();
    honest(b);
    scribble(b, pub_head, kWordLow32);
    step(b, ShmStep::DaemonTake, 3);
    s.push_back({"publish_head_torn", b});
  }
  {
    Bytes b = start();
    step(b, ShmStep::ClientOpen);
    put(b, 40);
    scribble(b, pub_data, kWordSkip);
    step(b, ShmStep::DaemonTake, 3);
    s.push_back({"publish_skip_head", b});
  }
  {
    Bytes b = start();
    honest(b);
    scribble(b, del_tail, kWordOnes);
    give(b, 10);
    s.push_back({"delivery_tail_ones", b});
  }
  {
    Bytes b = start();
    step(b, ShmStep::ClientOpen);
    // A message (40 bytes of ring), then a record of 3 bytes the daemon
    // never wrote - too short for a message's head - and the head moved past it.
    give(b, 8);
    step(b, ShmStep::Bytes, 7);
    put16(b, static_cast<uint16_t>(del_data * 8 + 40));
    for (uint8_t x : {3, 0, 0, 0, 0, 0, 0, 0}) b.push_back(x);
    scribble(b, del_head, kWordRaw);
    for (int i = 0; i < 8; ++i) b.push_back(i == 0 ? 56 : 0);
    step(b, ShmStep::ClientTake, 3);
    give(b, 8);  // the daemon's own head is 40, the application's tail 56: the daemon cuts it off
    s.push_back({"delivery_short_record", b});
  }
  {
    Bytes b = start();
    honest(b);
    scribble(b, note_tail, kWordTailMinus8);
    step(b, ShmStep::DaemonTell);
    step(b, ShmStep::ClientTake, 3);
    s.push_back({"notice_tail_behind", b});
  }
  {
    Bytes b = start();
    scribble(b, version, kWordPlus8);
    step(b, ShmStep::ClientOpen);
    step(b, ShmStep::ClientTake, 3);
    s.push_back({"header_version", b});
  }
  return s;
}

void write_all(const std::filesystem::path& dir, const std::vector<std::pair<std::string, Bytes>>& seeds) {
  std::filesystem::create_directories(dir);
  for (const auto& [name, bytes] : seeds) {
    std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
  }
}

}  // namespace
}  // namespace lanecast::fuzz

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  lanecast::fuzz::write_all(dir / "wire_fuzz", lanecast::fuzz::wire_seeds());
  lanecast::fuzz::write_all(dir / "node_fuzz", lanecast::fuzz::node_seeds());
  lanecast::fuzz::write_all(dir / "stream_fuzz", lanecast::fuzz::stream_seeds());
  lanecast::fuzz::write_all(dir / "group_file_fuzz", lanecast::fuzz::group_file_seeds());
  lanecast::fuzz::write_all(dir / "shm_fuzz", lanecast::fuzz::shm_seeds());
  return 0;
}
