// A hostile application of `lanecast daemon`: it connects like any client
// (publisher and subscriber), then rewrites the words of the memory the
// daemon shares with it - ring headers, positions, record heads, its client
// header, any word - with values chosen to hurt: 0, all ones, capacity-1,
// the capacity, just past the end, huge, the file's size, the offsets and
// addresses of other structures (the daemon's mappings as /proc/PID/maps
// lists them: its heap, libraries, other clients' memory), the other ring's
// positions, half-written (torn) words. It also tries to shrink the memory under the daemon
// (ftruncate, which the seals must refuse), punches holes in it, and
// publishes well-formed records in between, so the daemon keeps reading.
// When the daemon cuts it off (its socket hangs up) it connects again.
//
//   hostile_client --dir DIR --rounds 1000000 [--seed S] [--ring BYTES] [--name NAME]
//   hostile_client --dir DIR --oversize N [--ring BYTES]
//
// With --oversize it only writes N well-formed records one byte larger
// than the daemon's stream takes (the client library would refuse them),
// then one that fits, and waits until the daemon took that one: the daemon
// must refuse and count the N.
//
// Prints its seed (a run replays with --seed), the rounds, the sessions and
// how often the daemon cut it off. Exit 0; 2 if a seal did not hold; 3 if
// it could never connect.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ipc/client_file.h"
#include "ipc/fd_passing.h"
#include "ipc/protocol.h"
#include "ipc/shared_memory.h"

namespace {

using lanecast::ipc::ClientHeader;
using lanecast::ipc::RecordRing;
using lanecast::ipc::RecordRingHeader;

struct Session {
  int fd = -1;
  std::optional<lanecast::ipc::SharedMemory> mem;
  lanecast::ipc::ClientView view;
  Session() = default;
  Session(Session&& o) noexcept : fd(std::exchange(o.fd, -1)), mem(std::move(o.mem)), view(o.view) {}
  Session& operator=(Session&&) = delete;
  ~Session() {
    if (fd >= 0) ::close(fd);
  }
};

// One connection as the client library makes it, but keeping the memfd
// (to try to shrink it) and the raw memory.
std::optional<Session> connect_once(const std::string& dir, uint64_t ring, const std::string& name, std::string* why) {
  Session s;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = dir + "/control.sock";
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  s.fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s.fd < 0 || ::connect(s.fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    *why = std::string("connect: ") + std::strerror(errno);
    return std::nullopt;
  }
  lanecast::ipc::Hello h;
  h.role = static_cast<uint8_t>(lanecast::ipc::Role::Both);
  h.publish_bytes = ring;
  h.delivery_bytes = ring;
  std::snprintf(h.name, sizeof h.name, "%s", name.c_str());
  if (::send(s.fd, &h, sizeof h, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof h)) {
    *why = "send";
    return std::nullopt;
  }
  pollfd p{s.fd, POLLIN, 0};
  lanecast::ipc::Welcome w;
  int memfd = -1;
  if (::poll(&p, 1, 10'000) != 1 || lanecast::ipc::recv_with_fd(s.fd, &w, sizeof w, &memfd) != sizeof w) {
    *why = "no answer";
    return std::nullopt;
  }
  if (w.status != 0 || memfd < 0) {
    w.reason[sizeof w.reason - 1] = '\0';
    *why = std::string("refused: ") + w.reason;
    if (memfd >= 0) ::close(memfd);
    return std::nullopt;
  }
  s.mem = lanecast::ipc::SharedMemory::adopt(memfd, w.file_bytes, why);
  if (!s.mem) return std::nullopt;
  auto v = lanecast::ipc::open_client_file(s.mem->data(), s.mem->size(), why);
  if (!v) return std::nullopt;
  s.view = *v;
  return s;
}

bool hung_up(int fd) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) return false;
  char b;
  return (p.revents & (POLLHUP | POLLERR)) || ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
}

// Addresses in the daemon: where its mappings start and end - its heap,
// stacks, libraries and the other clients' memfds (/proc/PID/maps; the
// daemon's pid from the socket's credentials). Values a pointer-following
// daemon would use to reach them. Empty when the maps cannot be read.
std::vector<uint64_t> daemon_addresses(int sock) {
  std::vector<uint64_t> out;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return out;
  FILE* f = std::fopen(("/proc/" + std::to_string(cred.pid) + "/maps").c_str(), "r");
  if (f == nullptr) return out;
  unsigned long lo, hi;
  char line[512];
  while (out.size() < 1024 && std::fgets(line, sizeof line, f) != nullptr)
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
      out.push_back(lo);
      out.push_back(hi);
      out.push_back(lo + 64);
    }
  std::fclose(f);
  return out;
}

struct Scribbler {
  std::mt19937_64 rng;
  uint8_t* base = nullptr;
  size_t bytes = 0;
  lanecast::ipc::ClientLayout lay;
  std::vector<uint64_t> targets;  // addresses in the daemon

  uint64_t pick(uint64_t n) { return n == 0 ? 0 : rng() % n; }

  // The words that matter most: every ring header's words, the record
  // heads at each ring's positions, the client header.
  uint64_t interesting_offset() {
    const uint64_t rings[3] = {lay.notice, lay.publish, lay.delivery};
    const uint64_t caps[3] = {lanecast::ipc::NoticeRing::capacity(), lay.publish_capacity, lay.delivery_capacity};
    const uint64_t r = pick(4);
    if (r == 3) return pick(sizeof(ClientHeader) / 8) * 8;
    const auto* h = reinterpret_cast<RecordRingHeader*>(base + rings[r]);
    switch (pick(6)) {
      case 0: return rings[r] + offsetof(RecordRingHeader, magic);
      case 1: return rings[r] + offsetof(RecordRingHeader, capacity);
      case 2: return rings[r] + offsetof(RecordRingHeader, head);
      case 3: return rings[r] + offsetof(RecordRingHeader, tail);
      case 4: return rings[r] + sizeof(RecordRingHeader) + (h->head.load() % caps[r]) / 8 * 8;
      default: return rings[r] + sizeof(RecordRingHeader) + (h->tail.load() % caps[r]) / 8 * 8;
    }
  }

  uint64_t adversarial_value(uint64_t current) {
    const uint64_t cap = lay.publish_capacity;
    const auto* pub = reinterpret_cast<RecordRingHeader*>(base + lay.publish);
    const uint64_t head = pub->head.load(), tail = pub->tail.load();
    switch (pick(23)) {
      case 22:
        if (!targets.empty()) return targets[pick(targets.size())];  // the daemon's own structures
        return rng();
      case 0: return 0;
      case 1: return ~uint64_t{0};
      case 2: return cap - 1;
      case 3: return cap;
      case 4: return cap + 8;
      case 5: return bytes;
      case 6: return bytes + 8;
      case 7: return uint64_t{1} << 63;
      case 8: return uint64_t{1} << 32;
      case 9: return current + 8;
      case 10: return current - 8;
      case 11: return tail + cap + 8;  // a head just past what fits
      case 12: return head + 8;        // a head past what was written
      case 13: return tail - 8;
      case 14: return reinterpret_cast<uintptr_t>(base);  // an address
      case 15: return lay.delivery;                      // another ring's offset
      case 16: return lay.delivery + sizeof(RecordRingHeader);
      case 17: return uint64_t{0x7fffffff};
      case 18: return (uint64_t{0xFFFFFFFF} << 32) | 0xFFFFFFF0;  // a skip head with a length
      case 19: return (uint64_t{1} << 40) + 8;
      case 20: return static_cast<uint64_t>(-static_cast<int64_t>(cap));
      default: return rng();
    }
  }

  void scribble() {
    const uint64_t off = pick(5) < 2 ? interesting_offset() : pick(bytes / 8) * 8;
    if (off + 8 > bytes) return;
    uint64_t cur;
    std::memcpy(&cur, base + off, 8);
    const uint64_t v = adversarial_value(cur);
    if (pick(8) == 0) {
      // A torn update: half of the word only.
      const uint32_t half = static_cast<uint32_t>(v >> (pick(2) * 32));
      std::memcpy(base + off + pick(2) * 4, &half, 4);
    } else {
      // As the daemon would store it (an atomic word), or plainly.
      __atomic_store_n(reinterpret_cast<uint64_t*>(base + off), v, __ATOMIC_RELEASE);
    }
  }
};

int publish_oversize(const std::string& dir, uint64_t ring, const std::string& name, uint64_t n) {
  std::string why;
  auto s = connect_once(dir, ring, name, &why);
  if (!s) {
    std::fprintf(stderr, "hostile_client: cannot connect: %s\n", why.c_str());
    return 3;
  }
  const uint64_t len = s->view.id.max_message + 1;
  for (uint64_t i = 0; i <= n; ++i) {
    const uint64_t size = i < n ? len : 16;
    uint8_t* at = nullptr;
    for (int tries = 0; tries < 10000 && (at = s->view.publish.reserve(size, 0)) == nullptr; ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (at == nullptr) {
      std::fprintf(stderr, "hostile_client: the daemon takes nothing (ring of %" PRIu64 " bytes)\n", ring);
      return 1;
    }
    std::memset(at, 0x5A, size);
    s->view.publish.commit();
  }
  for (int i = 0; i < 10000 && s->view.header->published.load() < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::printf("hostile_client: %" PRIu64 " records of %" PRIu64 " bytes (the stream takes %" PRIu64
              "), then one that fits: the daemon published %" PRIu64 "\n",
              n, len, len - 1, static_cast<uint64_t>(s->view.header->published.load()));
  return s->view.header->published.load() == 1 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir, name = "hostile";
  uint64_t rounds = 1'000'000, seed = std::random_device{}(), ring = 262144, oversize = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") dir = v;
    else if (k == "--rounds") rounds = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--seed") seed = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--ring") ring = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--name") name = v;
    else if (k == "--oversize") oversize = std::strtoull(v.c_str(), nullptr, 10);
    else {
      std::fprintf(stderr, "usage: hostile_client --dir DIR --rounds N [--seed S] [--ring BYTES] [--name NAME]\n");
      return 64;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "hostile_client: --dir DIR is required\n");
    return 64;
  }
  if (oversize > 0) return publish_oversize(dir, ring, name, oversize);
  std::printf("hostile_client: seed %" PRIu64 " (replay: --seed %" PRIu64 "), %" PRIu64 " rounds\n", seed, seed, rounds);
  std::fflush(stdout);
  Scribbler s;
  s.rng.seed(seed);
  uint64_t done = 0, sessions = 0, cut_off = 0, refused = 0, published = 0, holes = 0, shrinks_refused = 0;
  uint64_t drained = 0;
  constexpr uint64_t kRoundsPerSession = 50'000;  // a session the daemon never noticed ends anyway
  while (done < rounds) {
    std::string why;
    auto session = connect_once(dir, ring, name, &why);
    if (!session) {
      // Refused while the daemon still holds its last session (memory,
      // slots), or the daemon is busy: a little later.
      if (++refused > 20000) {
        std::fprintf(stderr, "hostile_client: cannot connect: %s\n", why.c_str());
        return 3;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      continue;
    }
    ++sessions;
    s.base = static_cast<uint8_t*>(session->mem->data());
    s.bytes = session->mem->size();
    s.lay = session->view.layout;
    if (sessions % 64 == 1) s.targets = daemon_addresses(session->fd);
    RecordRing producer = session->view.publish;
    bool gone = false;
    for (uint64_t k = 0; k < kRoundsPerSession && done < rounds; ++k, ++done) {
      const uint64_t what = s.pick(1000);
      if (what < 900) {
        s.scribble();
      } else if (what < 950) {
        // Take what the daemon delivered (through a view that keeps its own
        // position, so this also puts scribbled tails right again).
        struct Taken {
          uint32_t publisher;
          uint16_t stream;
          uint64_t seq, timestamp_ns;
          std::span<const std::byte> data;
        } m;
        for (int n = 0; n < 4096 && session->view.delivery.next(m); ++n) ++drained;
      } else if (what < 990) {
        // A well-formed record, in a format no honest subscriber takes for its own.
        const uint64_t len = s.pick(300);
        if (uint8_t* at = producer.reserve(len, 0)) {
          std::memset(at, 0xA5, len);
          producer.commit();
          ++published;
        }
      } else if (what < 995) {
        if (::ftruncate(session->mem->fd(), static_cast<off_t>(s.pick(s.bytes))) == 0) {
          std::fprintf(stderr, "hostile_client: the memfd was shrunk: its seal did not hold\n");
          return 2;
        }
        ++shrinks_refused;
      } else {
        // Allowed on a memfd: the daemon must take the pages coming back as zeros.
        const off_t page = static_cast<off_t>(s.pick(s.bytes / 4096) * 4096);
        if (::fallocate(session->mem->fd(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, page, 4096) == 0) ++holes;
      }
      // Let the daemon look now and then, and see whether it hung up.
      if (k % 64 == 63) sched_yield();
      if (k % 512 == 511 && hung_up(session->fd)) {
        gone = true;
        ++done;
        break;
      }
    }
    if (gone || hung_up(session->fd)) ++cut_off;
  }
  std::printf("hostile_client: %" PRIu64 " rounds in %" PRIu64 " sessions, cut off %" PRIu64
              " times; %" PRIu64 " records published, %" PRIu64 " messages taken, %" PRIu64 " holes punched, %" PRIu64
              " shrinks refused by the seals\n",
              done, sessions, cut_off, published, drained, holes, shrinks_refused);
  std::printf("hostile_client: cut_off=%" PRIu64 "\n", cut_off);
  return 0;
}
