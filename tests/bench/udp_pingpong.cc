// The kernel's small-message latency on the shaped testbed: a UDP ping-pong
// with a 2-byte payload between two namespaces on the same bridge, so
// lanecast's 2-byte broadcast time has a kernel-stack figure beside it.
//
// usage: udp_pingpong server ADDR PORT [--busy] [--idle S]
//        udp_pingpong client ADDR PORT [--busy] [--count N] [--warmup W]
//
// The server echoes every datagram and ends on a 1-byte "bye" or after S
// seconds with nothing received (default 10). The client prints one line of
// key=value pairs: min/median/p99/max round trip and half of it, in us.
// --busy spins on non-blocking recv (as a polling core would) instead of
// sleeping in poll(); every wait is bounded either way.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  bool server = false;
  std::string addr;
  uint16_t port = 0;
  bool busy = false;
  uint32_t count = 2000, warmup = 200;
  double idle_s = 10;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "udp_pingpong: %s\n", what.c_str());
  std::exit(2);
}

Args parse(int argc, char** argv) {
  if (argc < 4) die("usage: udp_pingpong server|client ADDR PORT [--busy] [--count N] [--warmup W] [--idle S]");
  Args a;
  const std::string role = argv[1];
  if (role != "server" && role != "client") die("first argument must be server or client");
  a.server = role == "server";
  a.addr = argv[2];
  a.port = static_cast<uint16_t>(std::strtoul(argv[3], nullptr, 10));
  for (int i = 4; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--busy") { a.busy = true; continue; }
    if (i + 1 >= argc) die("missing value after " + k);
    const char* v = argv[++i];
    if (k == "--count") a.count = static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    else if (k == "--warmup") a.warmup = static_cast<uint32_t>(std::strtoul(v, nullptr, 10));
    else if (k == "--idle") a.idle_s = std::strtod(v, nullptr);
    else die("unknown option " + k);
  }
  if (a.count == 0 || a.count > 10'000'000) die("--count must be 1..10000000");
  if (!(a.idle_s > 0 && a.idle_s <= 3600)) die("--idle must be in (0, 3600]");
  return a;
}

sockaddr_in address(const Args& a) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(a.port);
  if (inet_pton(AF_INET, a.addr.c_str(), &sa.sin_addr) != 1) die("not an IPv4 address: " + a.addr);
  return sa;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// One datagram into buf, waiting at most `limit_s`; -1 on timeout.
ssize_t receive(int fd, bool busy, double limit_s, void* buf, size_t len, sockaddr_in* from) {
  socklen_t fl = sizeof *from;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < limit_s) {
    if (!busy) {
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
    }
    const ssize_t n = recvfrom(fd, buf, len, MSG_DONTWAIT, reinterpret_cast<sockaddr*>(from), &fl);
    if (n >= 0) return n;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) die(std::string("recv: ") + std::strerror(errno));
  }
  return -1;
}

int serve(const Args& a) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in sa = address(a);
  if (fd < 0 || bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
    die("bind " + a.addr + ":" + std::to_string(a.port) + ": " + std::strerror(errno));
  uint8_t buf[64];
  uint64_t echoed = 0;
  while (true) {
    sockaddr_in from{};
    const ssize_t n = receive(fd, a.busy, a.idle_s, buf, sizeof buf, &from);
    if (n < 0) break;  // idle too long: the client is gone
    if (n == 1) break;  // bye
    sendto(fd, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), sizeof from);
    ++echoed;
  }
  close(fd);
  std::printf("udp_pingpong server echoed=%llu\n", static_cast<unsigned long long>(echoed));
  return 0;
}

double percentile(const std::vector<double>& sorted, double p) {
  const size_t i = static_cast<size_t>(p * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)];
}

int ping(const Args& a) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const sockaddr_in sa = address(a);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0)
    die("connect " + a.addr + ": " + std::strerror(errno));
  std::vector<double> rtt;
  rtt.reserve(a.count);
  uint32_t lost = 0;
  for (uint32_t i = 0; i < a.warmup + a.count && lost <= 10; ++i) {
    const uint16_t seq = static_cast<uint16_t>(i);
    uint8_t out[2], in[64];
    std::memcpy(out, &seq, 2);
    const auto t0 = Clock::now();
    if (send(fd, out, 2, 0) != 2) die(std::string("send: ") + std::strerror(errno));
    // Skip late echoes of earlier (timed-out) pings: only our sequence counts.
    ssize_t n;
    sockaddr_in from{};
    while ((n = receive(fd, a.busy, 1.0, in, sizeof in, &from)) == 2 && std::memcmp(in, out, 2) != 0) {}
    const double us = seconds_since(t0) * 1e6;
    if (n != 2) { ++lost; continue; }
    if (i >= a.warmup) rtt.push_back(us);
  }
  const uint8_t bye = 0;
  send(fd, &bye, 1, 0);
  close(fd);
  if (rtt.empty()) die("no round trip completed (" + std::to_string(lost) + " lost)");
  std::sort(rtt.begin(), rtt.end());
  const double mn = rtt.front(), med = percentile(rtt, 0.5), p99 = percentile(rtt, 0.99), mx = rtt.back();
  std::printf("udp_pingpong mode=%s payload=2 rtts=%zu lost=%u min_us=%.1f median_us=%.1f p99_us=%.1f "
              "max_us=%.1f half_min_us=%.1f half_median_us=%.1f half_p99_us=%.1f\n",
              a.busy ? "busy" : "block", rtt.size(), lost, mn, med, p99, mx, mn / 2, med / 2, p99 / 2);
  return lost == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  return a.server ? serve(a) : ping(a);
}
