// The line rate of shaped links, measured without lanecast: raw Ethernet
// frames blasted from one interface through the bridge (and both tbf qdiscs
// on the way) to another, counted where they arrive. shaped_testbed.sh puts
// this next to lanecast's bandwidth so a ratio says how close the engine gets
// to what the testbed itself can carry.
//
// usage: link_probe --tx IF[,IF...] --rx IF[,IF...] [--frame BYTES] [--seconds S] [--warmup S]
//
// Several pairs (tx[i] -> rx[i]) run at once, one sender thread each, e.g. the
// hops of a chain v0->v1, v1->v2, ...: what the machine's kernel can move
// through all the shaped links together, the ceiling of a pipelined broadcast.
// Prints one line of key=value pairs: rates per pair (the mean over pairs),
// the slowest pair (min_pair_*) and the sum (total_*). Payload counts
// frame - 14 - 72 bytes per frame, the bytes lanecast carries per frame of
// the same size (its segment).
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint16_t kEtherType = 0x88B6;  // lanecast uses 0x88B5; stay apart from it
constexpr uint32_t kLanecastHeaders = 14 + 72;  // Ethernet + lanecast data headers (engine/wire/wire.h)

struct Args {
  std::vector<std::string> tx, rx;
  uint32_t frame = kLanecastHeaders + 1400;
  double seconds = 2.0;
  double warmup = 0.5;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "link_probe: %s\n", what.c_str());
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = std::min(s.find(',', start), s.size());
    if (comma > start) out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (i + 1 >= argc) die("missing value after " + k);
    const char* v = argv[++i];
    if (k == "--tx") a.tx = split(v);
    else if (k == "--rx") a.rx = split(v);
    else if (k == "--frame") a.frame = static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    else if (k == "--seconds") a.seconds = std::strtod(v, nullptr);
    else if (k == "--warmup") a.warmup = std::strtod(v, nullptr);
    else die("unknown option " + k + " (usage: --tx IF[,IF..] --rx IF[,IF..] [--frame B] [--seconds S] [--warmup S])");
  }
  if (a.tx.empty() || a.tx.size() != a.rx.size()) die("--tx and --rx need lists of the same length");
  if (a.tx.size() > 64) die("at most 64 pairs");
  if (a.frame < 60 || a.frame > 65535) die("--frame must be 60..65535 bytes");
  if (!(a.seconds > 0 && a.seconds <= 60) || !(a.warmup >= 0 && a.warmup <= 60))
    die("--seconds must be in (0, 60] and --warmup in [0, 60]");
  return a;
}

// A raw socket bound to one interface; protocol 0 receives nothing, which is
// what a sender wants (it must not read frames back).
int bound_socket(const std::string& iface, uint16_t protocol) {
  const int fd = socket(AF_PACKET, SOCK_RAW, htons(protocol));
  if (fd < 0) die("socket(AF_PACKET): " + std::string(std::strerror(errno)) + " (needs root)");
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(protocol);
  sll.sll_ifindex = static_cast<int>(if_nametoindex(iface.c_str()));
  if (sll.sll_ifindex == 0) die("no interface " + iface);
  if (bind(fd, reinterpret_cast<sockaddr*>(&sll), sizeof sll) != 0)
    die("bind to " + iface + ": " + std::strerror(errno));
  return fd;
}

void mac_of(int fd, const std::string& iface, uint8_t mac[6]) {
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", iface.c_str());
  if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) die("MAC of " + iface + ": " + std::strerror(errno));
  std::memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
}

std::vector<uint8_t> frame_to(const uint8_t dst[6], const uint8_t src[6], uint32_t bytes) {
  std::vector<uint8_t> f(bytes, 0x5A);
  std::memcpy(&f[0], dst, 6);
  std::memcpy(&f[6], src, 6);
  f[12] = kEtherType >> 8;
  f[13] = kEtherType & 0xFF;
  return f;
}

// One sender -> receiver pair and its counts.
struct Pair {
  std::string tx_if, rx_if;
  int tx = -1, rx = -1;
  uint8_t tx_mac[6], rx_mac[6];
  std::atomic<uint64_t> sent{0}, refused{0};
  uint64_t received = 0;  // inside the measured window
  uint64_t socket_drops = 0;  // the receiving socket's, inside the window (its buffer was full)
  uint64_t sent_at_start = 0, refused_at_start = 0, sent_in_window = 0, refused_in_window = 0;
};

void open_pair(Pair& p) {
  p.tx = bound_socket(p.tx_if, 0);
  p.rx = bound_socket(p.rx_if, kEtherType);
  const int one = 1;
  setsockopt(p.rx, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
  const int rcvbuf = 8 << 20;
  setsockopt(p.rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf);
  mac_of(p.tx, p.tx_if, p.tx_mac);
  mac_of(p.rx, p.rx_if, p.rx_mac);
  // The receiver speaks first, so a bridge that does not know its MAC yet
  // learns it instead of flooding the blast through every other downlink.
  const auto hello = frame_to(p.tx_mac, p.rx_mac, 60);
  if (send(p.rx, hello.data(), hello.size(), 0) < 0) die("announce on " + p.rx_if + ": " + std::strerror(errno));
}

// Sends as fast as the socket takes frames until `stop`, kBatch frames per
// system call (as the PMD's mmap ring batches: the probe should cost the
// kernel's path, not syscall entries); a full qdisc refuses with ENOBUFS
// (tbf's limit), which is counted, not retried.
constexpr unsigned kBatch = 32;

void blast(Pair& p, const std::vector<uint8_t>& frame, const std::atomic<bool>& stop) {
  timeval tv{0, 100'000};  // a blocked send wakes up to see `stop`
  setsockopt(p.tx, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  iovec iov[kBatch];
  mmsghdr msgs[kBatch]{};
  for (unsigned i = 0; i < kBatch; ++i) {
    iov[i] = {const_cast<uint8_t*>(frame.data()), frame.size()};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  while (!stop.load(std::memory_order_relaxed)) {
    const int n = sendmmsg(p.tx, msgs, kBatch, 0);
    if (n > 0) {
      p.sent.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
    } else if (errno == ENOBUFS || errno == EAGAIN || errno == EWOULDBLOCK) {
      // The qdisc holds ~5 ms of frames: a short pause keeps it full without
      // spinning a core the links' softirqs need.
      p.refused.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else {
      std::fprintf(stderr, "link_probe: send on %s: %s\n", p.tx_if.c_str(), std::strerror(errno));
      return;
    }
  }
}

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Frames the kernel dropped at a packet socket since the last call (reading
// PACKET_STATISTICS resets it): a receiver too slow for its link.
uint64_t socket_drops(int fd) {
  tpacket_stats st{};
  socklen_t len = sizeof st;
  return getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0 ? st.tp_drops : 0;
}

// Counts one pair's frames while `measuring`, until `stop`; every wait is
// bounded, so a dead link ends the probe instead of hanging it. One receiver
// thread per pair: a single thread draining every socket fell behind its
// fair share of two CPUs and dropped at its sockets.
void receive(Pair& p, uint32_t frame, const std::atomic<bool>& measuring, const std::atomic<bool>& stop) {
  // Buffers a byte longer than a frame, so a longer (foreign) frame shows.
  std::vector<uint8_t> buf(kBatch * (frame + 1));
  iovec iov[kBatch];
  mmsghdr msgs[kBatch]{};
  for (unsigned i = 0; i < kBatch; ++i) {
    iov[i] = {&buf[i * (frame + 1)], frame + 1};
    msgs[i].msg_hdr.msg_iov = &iov[i];
    msgs[i].msg_hdr.msg_iovlen = 1;
  }
  pollfd fd{p.rx, POLLIN, 0};
  while (!stop.load(std::memory_order_relaxed)) {
    if (poll(&fd, 1, 50) <= 0) continue;
    const int n = recvmmsg(p.rx, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0 || !measuring.load(std::memory_order_relaxed)) continue;
    for (int m = 0; m < n; ++m) p.received += msgs[m].msg_len == frame;
  }
}

// Sleeps through the warm-up, then opens the measured window for `seconds`;
// returns its length in seconds.
double measure_window(std::vector<std::unique_ptr<Pair>>& pairs, const Args& a, std::atomic<bool>& measuring) {
  std::this_thread::sleep_for(std::chrono::duration<double>(a.warmup));
  for (auto& p : pairs) {
    p->sent_at_start = p->sent.load();
    p->refused_at_start = p->refused.load();
    socket_drops(p->rx);
  }
  const auto start = Clock::now();
  measuring = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
  measuring = false;
  const double window = since(start);
  for (auto& p : pairs) {
    p->sent_in_window = p->sent.load() - p->sent_at_start;
    p->refused_in_window = p->refused.load() - p->refused_at_start;
    p->socket_drops = socket_drops(p->rx);
  }
  return window;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  std::vector<std::unique_ptr<Pair>> pairs;
  for (size_t i = 0; i < a.tx.size(); ++i) {
    pairs.push_back(std::make_unique<Pair>());
    pairs.back()->tx_if = a.tx[i];
    pairs.back()->rx_if = a.rx[i];
    open_pair(*pairs.back());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));

  std::atomic<bool> stop{false}, measuring{false};
  std::vector<std::thread> threads;
  std::vector<std::vector<uint8_t>> frames;
  for (auto& p : pairs)
    frames.push_back(frame_to(p->rx_mac, p->tx_mac, a.frame));
  for (size_t i = 0; i < pairs.size(); ++i) {
    threads.emplace_back(receive, std::ref(*pairs[i]), a.frame, std::cref(measuring), std::cref(stop));
    threads.emplace_back(blast, std::ref(*pairs[i]), std::cref(frames[i]), std::cref(stop));
  }
  const double window = measure_window(pairs, a, measuring);
  stop = true;
  for (auto& t : threads) t.join();

  uint64_t sent = 0, refused = 0, received = 0, min_received = UINT64_MAX, dropped = 0;
  for (auto& p : pairs) {
    sent += p->sent_in_window;
    refused += p->refused_in_window;
    received += p->received;
    dropped += p->socket_drops;
    min_received = std::min(min_received, p->received);
    close(p->tx);
    close(p->rx);
  }
  const double n = static_cast<double>(pairs.size());
  const double payload = a.frame > kLanecastHeaders ? a.frame - kLanecastHeaders : 0;
  const double fps = received / window / n, min_fps = min_received / window;
  std::printf("link_probe pairs=%zu tx=%s rx=%s frame=%u payload=%.0f seconds=%.3f sent_fps=%.0f "
              "refused_fps=%.0f rx_socket_drop_fps=%.0f delivered_fps=%.0f frame_MBps=%.3f payload_MBps=%.3f "
              "min_pair_fps=%.0f min_pair_payload_MBps=%.3f total_payload_MBps=%.3f\n",
              pairs.size(), a.tx.front().c_str(), a.rx.front().c_str(), a.frame, payload, window,
              sent / window / n, refused / window / n, dropped / window / n, fps, fps * a.frame / 1e6, fps * payload / 1e6, min_fps,
              min_fps * payload / 1e6, fps * n * payload / 1e6);
  return min_received > 0 ? 0 : 1;
}
