// Writes the seed corpus of the fuzz targets: real frames, built by the
// engine's own writers (wire::write_data, wire::write_ack) with right
// checksums, in the input formats of fuzz_input.h - data frames, datagrams,
// signals, acks, abandoned frames, frames of the next and of a far operation,
// and truncated, corrupt, foreign and forged ones. Deterministic: run.sh
// checks that tests/fuzz/corpus is exactly what this program writes.
//
// group_file_fuzz's seeds are the shipped group files and broken ones. And
// for shm_fuzz, a client's shared memory of the daemon (shm_input.h):
// honest traffic both ways, then each kind of scribble the rings must
// survive, placed on the words the layout (ipc/client_file.h) puts them at.
//
// usage: make_fuzz_corpus DIR   (writes DIR/wire_fuzz/*, DIR/node_fuzz/*, DIR/group_file_fuzz/*, DIR/shm_fuzz/*)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/crc32c.h"
#include "engine/wire.h"
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
  Bytes bytes;
};

// Sent from `port` to `to` (see fuzz_input.h), then `rounds` switch rounds.
Record rec(uint32_t port, uint32_t to, const Bytes& f, uint8_t rounds = 8, uint8_t extra = 0) {
  return Record{static_cast<uint8_t>(node_record_from(port) | node_record_to(to) | extra), rounds, f};
}

Bytes node_input(uint8_t scenario, const std::vector<Record>& records) {
  Bytes in{scenario};
  for (const Record& r : records) {
    in.push_back(r.how);
    in.push_back(r.then);
    in.push_back(static_cast<uint8_t>(r.bytes.size()));
    in.push_back(static_cast<uint8_t>(r.bytes.size() >> 8));
    in.insert(in.end(), r.bytes.begin(), r.bytes.end());
  }
  return in;
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
  // The next broadcast (node_fuzz's first healing one: chain, root 0, 20
  // segments), a far one, and seqs out of the window.
  s.push_back({"data_next_op", node_input(chain2, {rec(0, 1, data_frame({.op = 2, .seq = 4, .total = 20 * kNodeSegment}))})});
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
  lanecast::fuzz::write_all(dir / "group_file_fuzz", lanecast::fuzz::group_file_seeds());
  lanecast::fuzz::write_all(dir / "shm_fuzz", lanecast::fuzz::shm_seeds());
  return 0;
}
