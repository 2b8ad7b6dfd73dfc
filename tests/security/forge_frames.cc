// forge_frames: a host on a lanecast segment attacking a group, for real.
//
// It holds what such a host can hold - the frames it sees on the segment
// (its own raw socket, and a capture file written by `tcpdump -w`) - and
// never the group's key. From the traffic it learns the group id and
// epoch, which rank speaks from which MAC, the running broadcast (op, root,
// size, algorithm, segment), each channel's sequence numbers and any
// stream's batches. Then it sends, through a raw AF_PACKET socket, frames a
// member would take if nothing but lanecast's CRCs guarded it: every one
// well formed (header and payload CRC-32C right, the wire's own writers),
// from a member's MAC and rank, to a member's MAC:
//
//   data, datagram  segments of the running broadcast and the next seven,
//                   with bytes of its own
//   ack             acknowledgements for frames the receiver may not hold
//   failed          failure notices: "rank N is lost"
//   stream          a stream batch with a message of its own
//   hello           hellos claiming a member's rank, from its MAC or ours
//   replay          genuine frames captured earlier, sent again unchanged
//   replay-altered  the same with payload bits flipped so the CRC holds
//   redirect        a genuine frame just seen, sent again to another member
//
// Forged kinds go out unsealed and sealed under a key of the attacker's
// own (every byte of the seal's layout right, the key wrong). It prints
// what it learned and, when it stops (time, count, SIGINT or SIGTERM),
// what it sent by kind. tests/security/forged_frames_test.sh runs it
// against member processes on a bridge, with a key and without.
//
// The host is little-endian, as every host lanecast runs on: the wire's
// structures are read with memcpy.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <system_error>
#include <vector>

#include "algos/registry.h"
#include "apps/common/options.h"
#include "drivers/ethernet.h"
#include "engine/auth/epoch_keys.h"
#include "engine/auth/sealer.h"
#include "engine/checksum/crc32c.h"
#include "lanecast/group_spec.h"
#include "engine/node/op_types.h"
#include "engine/stream/batch_format.h"
#include "engine/wire/wire.h"

namespace {

using namespace lanecast;
namespace wire = engine::wire;
using apps::UsageError;

constexpr uint16_t kLink = drivers::ethernet::kHeaderBytes;
constexpr size_t kMaxFrame = 9216;
using Mac = std::array<uint8_t, 6>;
constexpr Mac kBroadcastMac = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
uint64_t unix_ms() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}
std::string algo_text(uint8_t id) {
  for (const algos::AlgoInfo& a : algos::algorithms())
    if (static_cast<uint8_t>(a.id) == id) return std::string(a.name);
  return "algorithm " + std::to_string(id);
}
std::string mac_text(const Mac& m) {
  char t[18];
  std::snprintf(t, sizeof t, "%02x:%02x:%02x:%02x:%02x:%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
  return t;
}

// ------------------------------------------------------------------ kinds

enum class Kind : uint8_t { Data, Datagram, Ack, Failed, Stream, Hello, Replay, ReplayAltered, Redirect };
constexpr Kind kAllKinds[] = {Kind::Data,   Kind::Datagram, Kind::Ack,           Kind::Failed,  Kind::Stream,
                              Kind::Hello,  Kind::Replay,   Kind::ReplayAltered, Kind::Redirect};
const char* kind_name(Kind k) {
  switch (k) {
    case Kind::Data: return "data";
    case Kind::Datagram: return "datagram";
    case Kind::Ack: return "ack";
    case Kind::Failed: return "failed";
    case Kind::Stream: return "stream";
    case Kind::Hello: return "hello";
    case Kind::Replay: return "replay";
    case Kind::ReplayAltered: return "replay-altered";
    case Kind::Redirect: return "redirect";
  }
  return "?";
}
bool forged(Kind k) { return k <= Kind::Hello; }

// How a forged frame is sealed; genuine frames (replays) keep what they had.
enum class Seal : uint8_t { None, WrongKey, Genuine };
const char* seal_name(Seal s) {
  switch (s) {
    case Seal::None: return "unsealed";
    case Seal::WrongKey: return "wrong-key";
    case Seal::Genuine: return "genuine";
  }
  return "?";
}

struct Options {
  std::string iface;
  std::string pcap;
  std::optional<uint32_t> group;
  uint64_t duration_ms = 0, count = 0, learn_ms = 0, replay_age_ms = 300;
  double rate = 2000;
  std::vector<Kind> kinds{std::begin(kAllKinds), std::end(kAllKinds)};
  std::vector<Seal> seals{Seal::None, Seal::WrongKey};
  uint64_t seed = 1;
};

const char* kUsage =
    "usage: forge_frames --iface IF [--pcap FILE] [--group ID] [--kinds LIST] [--seals LIST]\n"
    "                    [--rate FPS] [--duration-ms MS] [--count N] [--learn-ms MS]\n"
    "                    [--replay-age-ms MS] [--seed S]\n"
    "\n"
    "A host on a lanecast segment attacking a group without its key (root: a raw\n"
    "AF_PACKET socket). It learns the group from the frames it sees on IF and in\n"
    "FILE (a capture, `tcpdump -w`), then sends well-formed frames of the group -\n"
    "right group id and epoch, right CRCs, a member's MAC and rank as source - to\n"
    "its members, one kind after another, at FPS frames a second, until the time\n"
    "or count is reached or SIGINT/SIGTERM; then prints what it sent by kind.\n"
    "Kinds: data, datagram (segments of the running and next broadcasts, with\n"
    "bytes of its own), ack, failed (\"rank N is lost\"), stream (a batch with a\n"
    "message of its own), hello, replay (genuine frames captured at least\n"
    "--replay-age-ms before, sent again), replay-altered (the same, payload bits\n"
    "flipped so the CRC holds), redirect (a genuine frame just seen, sent to\n"
    "another member). Forged kinds are sent as each of --seals: unsealed, and\n"
    "wrong-key (sealed under a key of its own). Exit status: 0 frames were sent,\n"
    "1 it never learned a group to attack, 2 bad usage, 3 the socket failed.\n"
    "\n";

Kind parse_kind(std::string_view v) {
  for (Kind k : kAllKinds)
    if (v == kind_name(k)) return k;
  throw UsageError("--kinds: '" + std::string(v) +
                   "' is not a kind (allowed: all, data, datagram, ack, failed, stream, hello, replay, "
                   "replay-altered, redirect)");
}

std::vector<std::string_view> split(std::string_view v) {
  std::vector<std::string_view> out;
  while (!v.empty()) {
    const size_t c = v.find(',');
    out.push_back(v.substr(0, c));
    if (c == std::string_view::npos) break;
    v.remove_prefix(c + 1);
  }
  return out;
}

Options parse_options(int argc, char** argv) {
  Options o;
  apps::OptionTable t;
  t.add({"iface", "IF", "", "the interface to listen and send on (required)",
         [&](std::string_view v) { o.iface = std::string(v); }});
  t.add({"pcap", "FILE", "", "a capture of the segment (pcap or pcapng, Ethernet) to learn from and replay",
         [&](std::string_view v) { o.pcap = std::string(v); }});
  t.add({"group", "ID", "the first seen", "the group id to attack",
         [&](std::string_view v) { o.group = static_cast<uint32_t>(apps::parse_uint(v, "--group", UINT32_MAX)); }});
  t.add({"kinds", "LIST", "all", "what to send, comma-separated (see above)", [&](std::string_view v) {
           o.kinds.clear();
           for (std::string_view k : split(v)) {
             if (k == "all") o.kinds.assign(std::begin(kAllKinds), std::end(kAllKinds));
             else o.kinds.push_back(parse_kind(k));
           }
           if (o.kinds.empty()) throw UsageError("--kinds: give at least one kind");
         }});
  t.add({"seals", "LIST", "unsealed,wrong-key", "how forged kinds are sealed: unsealed, wrong-key or both",
         [&](std::string_view v) {
           o.seals.clear();
           for (std::string_view s : split(v)) {
             if (s == "unsealed") o.seals.push_back(Seal::None);
             else if (s == "wrong-key") o.seals.push_back(Seal::WrongKey);
             else throw UsageError("--seals: '" + std::string(s) + "' (allowed: unsealed, wrong-key)");
           }
           if (o.seals.empty()) throw UsageError("--seals: give unsealed, wrong-key or both");
         }});
  t.add({"rate", "FPS", "2000", "frames a second, 1..1000000",
         [&](std::string_view v) { o.rate = apps::parse_double(v, "--rate", 1, 1e6); }});
  t.add({"duration-ms", "MS", "until stopped", "stop after this long (counted from the start)",
         [&](std::string_view v) { o.duration_ms = apps::parse_uint(v, "--duration-ms", 86'400'000); }});
  t.add({"count", "N", "no limit", "stop after sending N frames",
         [&](std::string_view v) { o.count = apps::parse_uint(v, "--count", UINT64_MAX); }});
  t.add({"learn-ms", "MS", "0", "only listen this long before the first frame is sent",
         [&](std::string_view v) { o.learn_ms = apps::parse_uint(v, "--learn-ms", 3'600'000); }});
  t.add({"replay-age-ms", "MS", "300", "replay frames captured at least this long before (a capture file's: any)",
         [&](std::string_view v) { o.replay_age_ms = apps::parse_uint(v, "--replay-age-ms", 3'600'000); }});
  t.add({"seed", "S", "1", "seed of the choices (targets, segments)",
         [&](std::string_view v) { o.seed = apps::parse_uint(v, "--seed", UINT64_MAX); }});
  if (t.parse(argc, argv, 1)) {
    std::fputs(kUsage, stdout);
    std::fputs(t.help().c_str(), stdout);
    std::exit(0);
  }
  if (o.iface.empty()) throw UsageError("--iface IF is required (see --help)");
  return o;
}

// --------------------------------------------------------- a frame as seen

// What the attacker reads of a lanecast frame: everything is in the clear.
struct Seen {
  Mac dst{}, src{};
  wire::FrameType type{};
  uint16_t flags = 0;
  uint32_t group = 0, epoch = 0, rank = 0;
  wire::DataBody data{};
  wire::AckBody ack{};
  wire::HelloBody hello{};
  uint32_t payload_at = 0, payload_len = 0;  // from the frame's start
  wire::Seal seal{};                          // the frame's own, when sealed
  bool sealed() const { return (flags & wire::kFlagSealed) != 0; }
};

std::optional<Seen> decode(const uint8_t* f, size_t len) {
  if (len < kLink + sizeof(wire::FrameHeader)) return std::nullopt;
  if ((uint16_t{f[12]} << 8 | f[13]) != drivers::ethernet::kEtherType) return std::nullopt;
  wire::FrameHeader h;
  std::memcpy(&h, f + kLink, sizeof h);
  if (h.version != wire::kVersion) return std::nullopt;
  Seen s;
  std::memcpy(s.dst.data(), f, 6);
  std::memcpy(s.src.data(), f + 6, 6);
  s.type = static_cast<wire::FrameType>(h.type);
  s.flags = h.flags;
  s.group = h.group;
  s.epoch = h.epoch;
  s.rank = h.src;
  const uint8_t* body = f + kLink + sizeof h;
  const size_t room = len - kLink - sizeof h;
  if (s.sealed() && s.type >= wire::FrameType::Data && s.type <= wire::FrameType::Failed) {
    const size_t at = kLink + wire::frame_seal_at(s.type);
    if (len < at + sizeof s.seal) return std::nullopt;
    std::memcpy(&s.seal, f + at, sizeof s.seal);
  }
  switch (s.type) {
    case wire::FrameType::Data:
    case wire::FrameType::Datagram: {
      if (room < sizeof s.data) return std::nullopt;
      std::memcpy(&s.data, body, sizeof s.data);
      s.payload_at = kLink + wire::kDataHeaderBytes + (s.sealed() ? wire::seal_bytes(s.type) : 0);
      if (len < s.payload_at || s.data.payload_len != len - s.payload_at) return std::nullopt;
      s.payload_len = s.data.payload_len;
      return s;
    }
    case wire::FrameType::Ack:
      if (room < sizeof s.ack) return std::nullopt;
      std::memcpy(&s.ack, body, sizeof s.ack);
      return s;
    case wire::FrameType::Hello:
      if (room < sizeof s.hello) return std::nullopt;
      std::memcpy(&s.hello, body, sizeof s.hello);
      return s;
    case wire::FrameType::Failed:
      if (room < sizeof(wire::FailedBody)) return std::nullopt;
      return s;
  }
  return std::nullopt;
}

// ------------------------------------------------------- what it learned

struct Broadcast {
  uint32_t op = 0, root = 0, segment_bytes = 0;
  uint64_t total = 0;
  uint8_t algo = 0;
  uint16_t lane = 0;
};

struct StreamSeen {
  uint32_t publisher = 0, index = 0, segment_bytes = 0, message_len = 0;
  uint8_t algo = 0;
  uint16_t lane = 0;
  uint64_t next_msg = 0;  // after the last batch seen
  std::map<uint32_t, uint32_t> last_batch_to;  // member -> the last batch it was sent
  std::map<uint32_t, uint32_t> parent_of;      // member -> who sends it batches
};

// The group under attack, as its frames show it.
struct Learned {
  std::optional<uint32_t> group;   // from the first frame (or --group)
  std::optional<uint32_t> epoch;   // from frames past the bootstrap
  bool sealed = false;             // its frames carry seals
  uint32_t nodes = 0;              // from hellos, else the highest rank seen + 1
  uint16_t lanes = 1;
  std::optional<uint64_t> digest;  // of the group settings, from hellos
  std::map<uint32_t, Mac> macs;    // rank -> MAC
  std::map<uint32_t, uint64_t> top_counter;  // rank -> the highest frame-seal counter seen (sealed groups)
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> last_seq;  // (src, dst) -> the last data seq
  std::map<uint32_t, uint32_t> sender_to;                      // dst -> who last sent it a segment
  std::optional<Broadcast> bc;
  std::optional<StreamSeen> stream;

  std::optional<uint32_t> rank_of(const Mac& m) const {
    for (const auto& [r, mac] : macs)
      if (mac == m) return r;
    return std::nullopt;
  }

  // Takes what a frame of the group says; false if it is not the group's.
  bool learn(const Seen& s) {
    if (!group) group = s.group;
    if (s.group != *group) return false;
    if (s.rank < 1024) {
      macs[s.rank] = s.src;
      nodes = std::max(nodes, s.rank + 1);
    }
    if (s.type == wire::FrameType::Hello) {
      digest = s.hello.spec_digest;
      nodes = std::max(nodes, s.hello.nodes);
      lanes = s.hello.lanes;
      sealed = s.sealed();
      return true;
    }
    if (!epoch || *epoch != s.epoch) {  // a group formed (again): what was known of the old one is gone
      epoch = s.epoch;
      last_seq.clear();
      sender_to.clear();
      top_counter.clear();
      bc.reset();
      stream.reset();
    }
    sealed = s.sealed();
    if (sealed) top_counter[s.rank] = std::max(top_counter[s.rank], s.seal.counter);
    const std::optional<uint32_t> to = rank_of(s.dst);
    if (s.type != wire::FrameType::Data && s.type != wire::FrameType::Datagram) return true;
    const wire::DataBody& d = s.data;
    if (s.type == wire::FrameType::Data && to) last_seq[{s.rank, *to}] = d.seq;
    if (s.flags & wire::kFlagStream) {
      const bool report = (s.flags & wire::kFlagSignal) || s.type != wire::FrameType::Data;
      if (report || s.payload_len < sizeof(engine::stream::RecordHead)) return true;
      StreamSeen& st = stream ? *stream : stream.emplace();
      st.publisher = d.root;
      st.index = d.op;
      st.segment_bytes = d.segment_bytes;
      st.algo = d.algo;
      st.lane = d.lane;
      st.next_msg = std::max(st.next_msg, d.offset + d.total_len);
      if (to) {
        st.last_batch_to[*to] = d.segment;
        st.parent_of[*to] = s.rank;
      }
      return true;
    }
    if (s.flags & (wire::kFlagSignal | wire::kFlagAbandoned)) return true;
    if (!bc || d.op >= bc->op || bc->op - d.op > (1u << 30))  // the newest broadcast (op numbers wrap)
      bc = Broadcast{d.op, d.root, d.segment_bytes, d.total_len, d.algo, d.lane};
    if (to) sender_to[*to] = s.rank;
    return true;
  }

  void set_stream_message_len(const uint8_t* payload, uint32_t len) {
    if (!stream || len < sizeof(engine::stream::RecordHead)) return;
    const engine::stream::RecordHead h = engine::stream::read_head(payload);
    if (h.message_len > 0) stream->message_len = h.message_len;
  }

  std::string describe() const {
    std::string t = "group " + std::to_string(group.value_or(0)) + ", epoch " +
                    (epoch ? std::to_string(*epoch) : std::string("not yet seen")) + ", " + std::to_string(nodes) +
                    " members, frames " + (sealed ? "sealed" : "not sealed") + "; MACs:";
    for (const auto& [r, m] : macs) t += " " + std::to_string(r) + "=" + mac_text(m);
    if (bc)
      t += "; broadcast op " + std::to_string(bc->op) + " from rank " + std::to_string(bc->root) + ", " +
           std::to_string(bc->total) + " B in segments of " + std::to_string(bc->segment_bytes) + ", " +
           algo_text(bc->algo);
    if (stream)
      t += "; stream " + std::to_string(stream->index) + " of rank " + std::to_string(stream->publisher) +
           ", next message " + std::to_string(stream->next_msg) + ", messages of " +
           std::to_string(stream->message_len) + " B";
    return t;
  }
};

// A genuine frame as captured, for replays and redirects.
struct Captured {
  std::vector<uint8_t> bytes;
  uint64_t at_ns;  // 0: from the capture file (captured before this run)
};

// ------------------------------------------------ changes a CRC cannot see

// Bit positions in `len` bytes whose flipping, all together, leaves their
// CRC-32C as it was. The CRC is affine over GF(2): the changes single-bit
// flips make are vectors of 32 bits, so among 33 of them some subset sums to
// zero - Gaussian elimination finds it. What a forger does to keep a frame's
// CRC while changing its payload.
std::vector<uint32_t> crc_neutral_flips(uint32_t len) {
  std::vector<uint8_t> buf(len, 0);
  const uint32_t base = engine::crc32c(0, buf.data(), len);
  struct Row {
    uint32_t delta;
    uint64_t which;  // candidate flips making it, one bit each
  };
  std::vector<Row> rows;  // reduced, distinct leading bits, largest first
  std::vector<uint32_t> candidates;
  const uint32_t step = 8 * len / 48 + 1;
  for (uint32_t bit = 0; bit < 8 * len && candidates.size() < 64; bit += step) {
    buf[bit / 8] = static_cast<uint8_t>(1u << (bit % 8));
    Row r{engine::crc32c(0, buf.data(), len) ^ base, uint64_t{1} << candidates.size()};
    buf[bit / 8] = 0;
    candidates.push_back(bit);
    for (const Row& b : rows)
      if ((r.delta ^ b.delta) < r.delta) {
        r.delta ^= b.delta;
        r.which ^= b.which;
      }
    if (r.delta == 0) {
      std::vector<uint32_t> flips;
      for (size_t i = 0; i < candidates.size(); ++i)
        if (r.which >> i & 1) flips.push_back(candidates[i]);
      return flips;
    }
    rows.push_back(r);
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.delta > b.delta; });
  }
  return {};
}

// ----------------------------------------------------------- the socket

class RawLink {
 public:
  explicit RawLink(const std::string& iface) {
    fd_ = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(drivers::ethernet::kEtherType));
    if (fd_ < 0) fail("socket(AF_PACKET)");
    try {
      bind_to(iface);
    } catch (...) {
      ::close(fd_);
      throw;
    }
  }
  ~RawLink() { ::close(fd_); }
  RawLink(const RawLink&) = delete;
  RawLink& operator=(const RawLink&) = delete;

  int fd() const { return fd_; }
  const Mac& own() const { return own_; }

  // One frame another host sent, or 0 bytes when none waits.
  size_t receive(uint8_t* buf, size_t room) {
    for (;;) {
      sockaddr_ll from{};
      socklen_t fl = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf, room, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(&from), &fl);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        fail("recvfrom");
      }
      if (from.sll_pkttype == PACKET_OUTGOING) continue;  // our own
      return static_cast<size_t>(n);
    }
  }
  // False when the kernel had no room this time (the next turn sends).
  bool send(const uint8_t* frame, size_t len) {
    const ssize_t n = ::send(fd_, frame, len, 0);
    if (n == static_cast<ssize_t>(len)) return true;
    if (n < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)) return false;
    fail("send");
  }

 private:
  // Bound to `iface`, promiscuous (frames to the members' MACs too: a
  // mirror port, a hub), its MAC read.
  void bind_to(const std::string& iface) {
    const unsigned index = if_nametoindex(iface.c_str());
    if (index == 0) fail("interface " + iface);
    sockaddr_ll a{};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(drivers::ethernet::kEtherType);
    a.sll_ifindex = static_cast<int>(index);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) fail("bind to " + iface);
    packet_mreq mr{};
    mr.mr_ifindex = static_cast<int>(index);
    mr.mr_type = PACKET_MR_PROMISC;
    if (::setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0) fail("promiscuous mode");
    const int buf = 8 << 20;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);  // best effort: a frame missed is a frame not learned
    ifreq r{};
    std::snprintf(r.ifr_name, sizeof r.ifr_name, "%s", iface.c_str());
    if (::ioctl(fd_, SIOCGIFHWADDR, &r) != 0) fail("the MAC of " + iface);
    std::memcpy(own_.data(), r.ifr_hwaddr.sa_data, 6);
  }
  [[noreturn]] static void fail(const std::string& what) {
    throw std::system_error(errno, std::generic_category(), "forge_frames: " + what);
  }

  int fd_ = -1;
  Mac own_{};
};

// --------------------------------------------------------- the forger

class Forger {
 public:
  Forger(const Options& o, Learned& g, const Mac& own)
      : o_(o), g_(g), own_(own), rng_(o.seed), wrong_(AuthKey::generate()) {}

  // Writes the next frame of (kind, seal) into `f`; its length, or 0 when
  // nothing is known yet to forge it from.
  size_t make(Kind k, Seal s, uint8_t* f, const std::deque<Captured>& pool, std::deque<Captured>& fresh,
              uint64_t now) {
    if (!g_.group || (k != Kind::Hello && !g_.epoch)) return 0;
    switch (k) {
      case Kind::Data: return data(s, f, wire::FrameType::Data);
      case Kind::Datagram: return data(s, f, wire::FrameType::Datagram);
      case Kind::Ack: return ack(s, f);
      case Kind::Failed: return failed(s, f);
      case Kind::Stream: return stream(s, f);
      case Kind::Hello: return hello(s, f);
      case Kind::Replay: return replay(f, pool, now, false);
      case Kind::ReplayAltered: return replay(f, pool, now, true);
      case Kind::Redirect: return redirect(f, fresh, now);
    }
    return 0;
  }

 private:
  // The members it knows, in rank order; `not_a`/`not_b` left out.
  std::vector<uint32_t> members(uint32_t not_a = UINT32_MAX, uint32_t not_b = UINT32_MAX) const {
    std::vector<uint32_t> out;
    for (const auto& [r, m] : g_.macs)
      if (r != not_a && r != not_b && r < g_.nodes) out.push_back(r);
    return out;
  }
  uint32_t pick(const std::vector<uint32_t>& from) { return from[turn_++ % from.size()]; }

  uint8_t* link_header(uint8_t* f, const Mac& to, const Mac& from) const {
    std::memcpy(f, to.data(), 6);
    std::memcpy(f + 6, from.data(), 6);
    f[12] = static_cast<uint8_t>(drivers::ethernet::kEtherType >> 8);
    f[13] = static_cast<uint8_t>(drivers::ethernet::kEtherType & 0xff);
    return f + kLink;
  }
  uint16_t flags(Seal s) const { return s == Seal::WrongKey ? wire::kFlagSealed : 0; }

  // The attacker's seals: the layout of the group's, the tags of the
  // engine's own sealer, a key of its own (derived for the group and epoch
  // as the members derive theirs) - and counters well ahead of the last
  // each member was seen to use (a million: seconds of its frames), so that
  // a receiver's window lets every such frame through to the tag (a counter
  // it has seen or left behind would be refused before, as a replay).
  const engine::auth::EpochKeys& wrong_keys() {
    if (keys_epoch_ != g_.epoch) {
      frame_sealer_.reset();
      payload_sealer_.reset();
      keys_ = std::make_unique<engine::auth::EpochKeys>(engine::auth::derive_formation_keys(*wrong_, *g_.group, *g_.epoch, {}));
      keys_epoch_ = g_.epoch;
    }
    return *keys_;
  }
  uint64_t counter_as(uint32_t rank) {
    uint64_t& next = next_counter_[rank];
    const auto seen = g_.top_counter.find(rank);
    if (seen != g_.top_counter.end()) next = std::max(next, seen->second + (uint64_t{1} << 20));
    return next++;
  }
  wire::Seal seal_payload(const uint8_t* bytes, uint32_t len, uint32_t as) {
    if (!payload_sealer_) payload_sealer_ = std::make_unique<engine::auth::Sealer>(wrong_keys().payload);
    wire::Seal seal{};
    seal.counter = counter_as(as);
    payload_sealer_->tag(bytes, len, as, seal.counter, seal.tag);
    return seal;
  }
  // The frame's length; sealed under the wrong key first if asked.
  size_t seal(Seal s, uint8_t* f, wire::FrameType t, uint32_t as, uint32_t payload_len) {
    if (s != Seal::WrongKey) return kLink + headers(t) + payload_len;
    if (!frame_sealer_) frame_sealer_ = std::make_unique<engine::auth::Sealer>(wrong_keys().frame);
    const uint16_t tagged = static_cast<uint16_t>(kLink + wire::frame_seal_at(t));
    wire::Seal seal{};
    seal.counter = counter_as(as);
    frame_sealer_->tag(f, tagged, as, seal.counter, seal.tag);
    std::memcpy(f + tagged, &seal, sizeof seal);
    return kLink + headers(t) + wire::seal_bytes(t) + payload_len;
  }
  static uint32_t headers(wire::FrameType t) {
    switch (t) {
      case wire::FrameType::Data:
      case wire::FrameType::Datagram: return wire::kDataHeaderBytes;
      case wire::FrameType::Ack: return wire::kAckHeaderBytes;
      case wire::FrameType::Hello: return wire::kHelloBytes;
      case wire::FrameType::Failed: return wire::kFailedBytes;
    }
    return 0;
  }

  // Bytes of its own: "forged N" over and over.
  void own_bytes(uint8_t* at, uint32_t len) {
    char text[32];
    const int n = std::snprintf(text, sizeof text, "forged %llu ", static_cast<unsigned long long>(++made_));
    for (uint32_t i = 0; i < len; ++i) at[i] = static_cast<uint8_t>(text[i % static_cast<uint32_t>(n)]);
  }

  // A segment of the running broadcast or one of the next seven (a member
  // keeps those that come before it posts them), from the
  // member that sends the target its segments, on the sequence numbers that
  // channel uses next.
  size_t data(Seal s, uint8_t* f, wire::FrameType t) {
    if (!g_.bc || g_.bc->segment_bytes == 0 || g_.bc->total == 0) return 0;
    const Broadcast& b = *g_.bc;
    const std::vector<uint32_t> targets = members(b.root);
    if (targets.empty()) return 0;
    const uint32_t to = pick(targets);
    const auto sender = g_.sender_to.find(to);
    const uint32_t from = sender != g_.sender_to.end() ? sender->second : b.root;
    if (from == to || !g_.macs.count(from)) return 0;
    const uint64_t segments = (b.total + b.segment_bytes - 1) / b.segment_bytes;
    wire::DataBody d{};
    d.op = b.op + static_cast<uint32_t>(turn_ % 8);
    d.root = b.root;
    const auto seq = g_.last_seq.find({from, to});
    d.seq = t == wire::FrameType::Data ? (seq != g_.last_seq.end() ? seq->second : 0) + 1 + turn_ % 3 : 0;
    d.segment = static_cast<uint32_t>(rng_() % segments);
    d.offset = uint64_t{d.segment} * b.segment_bytes;
    d.total_len = b.total;
    d.payload_len = static_cast<uint32_t>(std::min<uint64_t>(b.segment_bytes, b.total - d.offset));
    d.segment_bytes = b.segment_bytes;
    d.algo = b.algo;
    d.lane = b.lane;
    uint8_t* lc = link_header(f, g_.macs.at(to), g_.macs.at(from));
    uint8_t* payload = lc + wire::kDataHeaderBytes + (s == Seal::WrongKey ? wire::seal_bytes(t) : 0);
    if (payload + d.payload_len > f + kMaxFrame) return 0;
    own_bytes(payload, d.payload_len);
    d.payload_crc = engine::crc32c(0, payload, d.payload_len);
    const uint16_t fl = static_cast<uint16_t>(flags(s) | (t == wire::FrameType::Data ? wire::kFlagAckNow : 0));
    wire::write_data(lc, {*g_.group, *g_.epoch, from}, d, fl, t);
    if (s == Seal::WrongKey) wire::write_payload_seal(lc, seal_payload(payload, d.payload_len, b.root));
    return seal(s, f, t, from, d.payload_len);
  }

  // An acknowledgement from a member for a channel into it: everything sent
  // so far, or more than was sent, with every selective bit set.
  size_t ack(Seal s, uint8_t* f) {
    if (g_.last_seq.empty()) return 0;
    auto it = g_.last_seq.begin();
    std::advance(it, static_cast<long>(turn_++ % g_.last_seq.size()));
    const auto [sender, receiver] = it->first;
    if (!g_.macs.count(sender) || !g_.macs.count(receiver)) return 0;
    wire::AckBody a{};
    a.cum_ack = it->second + 1 + (turn_ % 2 ? 0 : 16);
    a.lane = g_.bc ? g_.bc->lane : 0;
    a.sack[0] = a.sack[1] = ~uint64_t{0};
    uint8_t* lc = link_header(f, g_.macs.at(sender), g_.macs.at(receiver));
    wire::write_ack(lc, {*g_.group, *g_.epoch, receiver}, a, flags(s));
    return seal(s, f, wire::FrameType::Ack, receiver, 0);
  }

  // "Rank N is lost (seen by rank M during the running broadcast)", to a
  // member from another.
  size_t failed(Seal s, uint8_t* f) {
    const std::vector<uint32_t> all = members();
    if (all.size() < 2) return 0;
    const uint32_t to = pick(all);
    const std::vector<uint32_t> others = members(to);
    const uint32_t from = others[rng_() % others.size()];
    const std::vector<uint32_t> lost = members(to, from);
    wire::FailedBody b{};
    b.op = g_.bc ? g_.bc->op : 1;
    b.culprit = lost.empty() ? from : lost[rng_() % lost.size()];
    b.reporter = from;
    b.error = static_cast<uint8_t>(engine::OpError::PeerSilent);
    uint8_t* lc = link_header(f, g_.macs.at(to), g_.macs.at(from));
    wire::write_failed(lc, {*g_.group, *g_.epoch, from}, b, flags(s));
    return seal(s, f, wire::FrameType::Failed, from, 0);
  }

  // The next batch of a stream seen (else of stream 0 of rank 0), from the
  // member that sends the target its batches, holding one message of its own.
  size_t stream(Seal s, uint8_t* f) {
    const uint32_t publisher = g_.stream ? g_.stream->publisher : 0;
    const uint32_t segment_bytes = g_.stream ? g_.stream->segment_bytes : (g_.bc ? g_.bc->segment_bytes : 0);
    if (segment_bytes <= sizeof(engine::stream::RecordHead)) return 0;
    const std::vector<uint32_t> targets = members(publisher);
    if (targets.empty()) return 0;
    const uint32_t to = pick(targets);
    uint32_t from = publisher, batch = 0;
    if (g_.stream) {
      const auto last = g_.stream->last_batch_to.find(to);
      if (last != g_.stream->last_batch_to.end()) batch = last->second + 1;
      const auto parent = g_.stream->parent_of.find(to);  // its parent in the stream's tree
      if (parent != g_.stream->parent_of.end()) from = parent->second;
    }
    if (from == to || !g_.macs.count(from)) return 0;
    const uint32_t want = g_.stream && g_.stream->message_len > 0 ? g_.stream->message_len : 64;
    const uint32_t len = std::min<uint32_t>(want, segment_bytes - sizeof(engine::stream::RecordHead));
    wire::DataBody d{};
    d.op = g_.stream ? g_.stream->index : 0;
    d.root = publisher;
    const auto seq = g_.last_seq.find({from, to});
    d.seq = (seq != g_.last_seq.end() ? seq->second : 0) + 1;
    d.segment = batch;
    d.offset = g_.stream ? g_.stream->next_msg : 0;
    d.total_len = 1;  // records
    d.payload_len = static_cast<uint32_t>(sizeof(engine::stream::RecordHead)) + len;
    d.segment_bytes = segment_bytes;
    d.algo = g_.stream ? g_.stream->algo : (g_.bc ? g_.bc->algo : 0);
    d.lane = g_.stream ? g_.stream->lane : 0;
    uint8_t* lc = link_header(f, g_.macs.at(to), g_.macs.at(from));
    uint8_t* payload =
        lc + wire::kDataHeaderBytes + (s == Seal::WrongKey ? wire::seal_bytes(wire::FrameType::Data) : 0);
    engine::stream::write_head(payload, {len, len, static_cast<uint64_t>(now_ns())});
    own_bytes(payload + sizeof(engine::stream::RecordHead), len);
    d.payload_crc = engine::crc32c(0, payload, d.payload_len);
    wire::write_data(lc, {*g_.group, *g_.epoch, from}, d, static_cast<uint16_t>(flags(s) | wire::kFlagStream));
    if (s == Seal::WrongKey) wire::write_payload_seal(lc, seal_payload(payload, d.payload_len, publisher));
    return seal(s, f, wire::FrameType::Data, from, d.payload_len);
  }

  // A hello claiming a member's rank in a new life, from that member's MAC
  // or from ours, saying it heard everyone.
  size_t hello(Seal s, uint8_t* f) {
    if (!g_.digest) return 0;
    const std::vector<uint32_t> all = members();
    if (all.empty()) return 0;
    const uint32_t as = pick(all);
    wire::HelloBody h{};
    getrandom(&h.incarnation, sizeof h.incarnation, 0);
    h.spec_digest = *g_.digest;
    h.sent_unix_ms = unix_ms();
    h.nodes = g_.nodes;
    h.lanes = g_.lanes;
    h.heard_all = 1;
    uint8_t* lc = link_header(f, kBroadcastMac, turn_ % 2 ? g_.macs.at(as) : own_);
    wire::write_hello(lc, {*g_.group, 0, as}, h, flags(s));
    const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Hello);
    if (s != Seal::WrongKey) return kLink + wire::kHelloBytes;
    if (!hello_sealer_)
      hello_sealer_ = std::make_unique<engine::auth::Sealer>(engine::auth::derive_hello_key(*wrong_, *g_.group).key);
    wire::Seal seal{};
    seal.counter = ++hello_counter_;
    hello_sealer_->tag(f, kLink + seal_at, as, seal.counter, seal.tag);
    std::memcpy(lc + seal_at, &seal, sizeof seal);
    return kLink + seal_at + wire::kSealBytes;
  }

  // A genuine frame of the group captured at least --replay-age-ms ago,
  // unchanged - or with its payload changed where the CRC cannot see.
  size_t replay(uint8_t* f, const std::deque<Captured>& pool, uint64_t now, bool altered) {
    const uint64_t age = o_.replay_age_ms * 1'000'000;
    for (size_t tries = 0; tries < pool.size(); ++tries) {
      const Captured& c = pool[replay_at_++ % pool.size()];
      if (c.at_ns != 0 && now - c.at_ns < age) continue;
      const std::optional<Seen> s = decode(c.bytes.data(), c.bytes.size());
      if (!s || s->group != *g_.group) continue;
      if (altered && s->payload_len < 16) continue;
      std::memcpy(f, c.bytes.data(), c.bytes.size());
      if (altered) {
        std::vector<uint32_t>& flips = flips_[s->payload_len];
        if (flips.empty()) flips = crc_neutral_flips(s->payload_len);
        for (uint32_t bit : flips) f[s->payload_at + bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
      }
      return c.bytes.size();
    }
    return 0;
  }

  // A genuine frame from one member to another, seen a moment ago, sent to
  // a third member: the same bytes, another destination.
  size_t redirect(uint8_t* f, std::deque<Captured>& fresh, uint64_t now) {
    while (!fresh.empty()) {
      Captured c = std::move(fresh.front());
      fresh.pop_front();
      if (now - c.at_ns > 50'000'000) continue;  // the window moved on
      const std::optional<Seen> s = decode(c.bytes.data(), c.bytes.size());
      if (!s) continue;
      const std::optional<uint32_t> to = g_.rank_of(s->dst), from = g_.rank_of(s->src);
      if (!to || !from) continue;
      const std::vector<uint32_t> third = members(*to, *from);
      if (third.empty()) continue;
      std::memcpy(f, c.bytes.data(), c.bytes.size());
      const Mac& dst = g_.macs.at(third[rng_() % third.size()]);
      std::memcpy(f, dst.data(), 6);
      return c.bytes.size();
    }
    return 0;
  }

  const Options& o_;
  Learned& g_;
  Mac own_;
  std::mt19937_64 rng_;
  uint64_t turn_ = 0, made_ = 0, hello_counter_ = 0;
  size_t replay_at_ = 0;
  std::shared_ptr<const AuthKey> wrong_;
  std::unique_ptr<engine::auth::EpochKeys> keys_;
  std::optional<uint32_t> keys_epoch_;
  std::unique_ptr<engine::auth::Sealer> frame_sealer_, payload_sealer_;
  std::map<uint32_t, uint64_t> next_counter_;  // rank -> the next it seals under
  std::unique_ptr<engine::auth::Sealer> hello_sealer_;
  std::map<uint32_t, std::vector<uint32_t>> flips_;
};

// ------------------------------------------------------------- the run

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

constexpr size_t kPoolFrames = 4096, kFreshFrames = 256;

void keep(std::deque<Captured>& q, size_t cap, Captured c) {
  if (q.size() == cap) q.pop_front();
  q.push_back(std::move(c));
}

// Learns from a capture file and keeps its frames for replays (not those
// from its own address: an earlier run's forgeries).
void read_capture(const std::string& path, const Mac& own, Learned& g, std::deque<Captured>& pool) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (p == nullptr) throw UsageError("--pcap " + path + ": " + err);
  if (const int type = pcap_datalink(p); type != DLT_EN10MB) {
    pcap_close(p);
    throw UsageError("--pcap " + path + ": not an Ethernet capture (link type " + std::to_string(type) + ")");
  }
  pcap_pkthdr* h;
  const u_char* bytes;
  uint64_t seen = 0;
  while (pcap_next_ex(p, &h, &bytes) == 1) {
    if (h->caplen != h->len) continue;  // cut short: not a frame to send again
    const std::optional<Seen> s = decode(bytes, h->caplen);
    if (!s || s->src == own || !g.learn(*s)) continue;
    if (s->flags & wire::kFlagStream) g.set_stream_message_len(bytes + s->payload_at, s->payload_len);
    keep(pool, kPoolFrames, Captured{std::vector<uint8_t>(bytes, bytes + h->caplen), 0});
    ++seen;
  }
  pcap_close(p);
  std::printf("# forge_frames: %llu frames of the group in %s\n", static_cast<unsigned long long>(seen), path.c_str());
}

int attack(const Options& o) {
  Learned g;
  if (o.group) g.group = *o.group;
  std::deque<Captured> pool, fresh;
  RawLink link(o.iface);
  if (!o.pcap.empty()) read_capture(o.pcap, link.own(), g, pool);
  Forger forger(o, g, link.own());
  struct Slot {
    Kind kind;
    Seal seal;
  };
  std::vector<Slot> slots;
  for (Kind k : o.kinds)
    if (forged(k))
      for (Seal s : o.seals) slots.push_back({k, s});
    else
      slots.push_back({k, Seal::Genuine});
  std::map<std::pair<Kind, Seal>, uint64_t> sent;
  uint64_t total = 0, rx = 0;
  std::vector<uint8_t> in(kMaxFrame), out(kMaxFrame);
  const uint64_t start = now_ns(), interval = static_cast<uint64_t>(1e9 / o.rate);
  uint64_t due = start + o.learn_ms * 1'000'000;
  size_t next_slot = 0;
  bool announced = false;
  const bool redirecting =
      std::any_of(slots.begin(), slots.end(), [](const Slot& s) { return s.kind == Kind::Redirect; });
  while (!g_stop.load()) {
    uint64_t now = now_ns();
    if ((o.duration_ms != 0 && now - start >= o.duration_ms * 1'000'000) || (o.count != 0 && total >= o.count)) break;
    // Everything the segment brought since the last turn.
    for (int i = 0; i < 256; ++i) {
      const size_t n = link.receive(in.data(), in.size());
      if (n == 0) break;
      ++rx;
      const std::optional<Seen> s = decode(in.data(), n);
      if (!s || s->src == link.own() || !g.learn(*s)) continue;
      if (s->flags & wire::kFlagStream) g.set_stream_message_len(in.data() + s->payload_at, s->payload_len);
      Captured c{std::vector<uint8_t>(in.begin(), in.begin() + static_cast<long>(n)), now};
      if (redirecting && !drivers::ethernet::is_group(s->dst.data())) keep(fresh, kFreshFrames, c);
      keep(pool, kPoolFrames, std::move(c));
    }
    now = now_ns();
    if (now >= due) {
      if (!announced && g.epoch) {
        std::printf("# forge_frames: learned %s\n", g.describe().c_str());
        std::fflush(stdout);
        announced = true;
      }
      for (size_t tries = 0; tries < slots.size(); ++tries) {
        const Slot& sl = slots[next_slot];
        next_slot = (next_slot + 1) % slots.size();
        const size_t len = forger.make(sl.kind, sl.seal, out.data(), pool, fresh, now);
        if (len == 0) continue;
        if (link.send(out.data(), len)) {
          ++sent[{sl.kind, sl.seal}];
          ++total;
        }
        break;
      }
      due = std::max(due + interval, now - 10'000'000);  // no burst to catch up after a stall
    }
    pollfd p{link.fd(), POLLIN, 0};
    const uint64_t wait = due > now ? std::min<uint64_t>(due - now, 20'000'000) : 0;
    const timespec ts{0, static_cast<long>(wait)};
    ppoll(&p, 1, &ts, nullptr);
  }
  const double secs = static_cast<double>(now_ns() - start) / 1e9;
  std::printf("# forge_frames: learned %s\n", g.describe().c_str());
  std::printf("# forge_frames: %llu frames sent in %.1f s on %s (%llu received)\n",
              static_cast<unsigned long long>(total), secs, o.iface.c_str(), static_cast<unsigned long long>(rx));
  std::printf("%-16s %-10s %10s\n", "kind", "seal", "frames");
  for (const Slot& sl : slots)
    std::printf("%-16s %-10s %10llu\n", kind_name(sl.kind), seal_name(sl.seal),
                static_cast<unsigned long long>(sent[{sl.kind, sl.seal}]));
  std::printf("%-16s %-10s %10llu\n", "total", "", static_cast<unsigned long long>(total));
  std::fflush(stdout);
  if (total == 0) {
    std::fprintf(stderr, "forge_frames: sent nothing: %s\n",
                 g.group ? "what it saw was not enough to forge from" : "never saw a lanecast frame");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse_options(argc, argv);
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    return attack(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "forge_frames: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 3;
  }
}
