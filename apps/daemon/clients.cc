#include "apps/daemon/clients.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

namespace lanecast::daemon {

using engine::stream::RecordRing;

struct ClientTable::Local {
  uint32_t id = 0;
  int fd = -1;
  bool ready = false;  // the hello was answered
  std::string name;
  Role role = Role::Both;
  int pid = 0;
  std::string file;
  void* map = nullptr;
  size_t bytes = 0;
  ClientHeader* h = nullptr;
  ControlRing* control = nullptr;
  RecordRing publish, delivery;
  uint64_t last_offer = 0;     // the last delivery it took
  uint64_t blocked_since = 0;  // its ring has been full since (0: not full)
  bool evicted = false;
  bool closing = false;        // hung up: its committed messages are still published, then it goes
  uint64_t messages_in = 0, bytes_in = 0, messages_out = 0, bytes_out = 0;
  bool publishes() const { return static_cast<uint8_t>(role) & static_cast<uint8_t>(Role::Publisher); }
  bool subscribes() const { return static_cast<uint8_t>(role) & static_cast<uint8_t>(Role::Subscriber); }
};

namespace {

std::runtime_error sys_error(const std::string& what) { return std::runtime_error(what + ": " + std::strerror(errno)); }

}  // namespace

ClientTable::ClientTable(std::string dir, const ClientDefaults& d, uint32_t rank, uint32_t group_size,
                         uint64_t max_message)
    : dir_(std::move(dir)), defaults_(d), rank_(rank), group_size_(group_size), max_message_(max_message) {
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) throw sys_error("cannot make " + dir_);
  const std::string sock = dir_ + "/control.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.size() >= sizeof addr.sun_path) throw std::runtime_error("--dir path too long for a socket: " + dir_);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (listen_fd_ < 0) throw sys_error("socket");
  // A socket file left by a daemon that died: taken over only if nobody answers on it.
  if (::access(sock.c_str(), F_OK) == 0) {
    const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const bool alive = probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (alive) {
      ::close(listen_fd_);
      throw std::runtime_error("another daemon serves " + dir_ + " (its control.sock answers)");
    }
    ::unlink(sock.c_str());
  }
  if (::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0) {
    const auto e = sys_error("cannot listen on " + sock);
    ::close(listen_fd_);
    throw e;
  }
}

ClientTable::~ClientTable() {
  stopping();
  while (!clients_.empty()) drop(clients_.size() - 1);
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    ::unlink((dir_ + "/control.sock").c_str());
  }
}

void ClientTable::accept_new(uint64_t now_ns) {
  (void)now_ns;
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    if (clients_.size() >= defaults_.max_clients) {
      Welcome w;
      w.status = EBUSY;
      std::snprintf(w.file, sizeof w.file, "the daemon serves %u clients already (--max-clients)", defaults_.max_clients);
      ::send(fd, &w, sizeof w, MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      ++counters_.refused;
      continue;
    }
    auto c = std::make_unique<Local>();
    c->fd = fd;
    c->id = next_id_++;
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) c->pid = cred.pid;
    clients_.push_back(std::move(c));
  }
}

// The hello of a new client: its file, laid out and mapped, and the answer.
void ClientTable::answer(Local& c) {
  Hello h;
  const ssize_t n = ::recv(c.fd, &h, sizeof h, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
  Welcome w;
  auto refuse = [&](const std::string& why) {
    w.status = EINVAL;
    std::snprintf(w.file, sizeof w.file, "%s", why.c_str());
    ::send(c.fd, &w, sizeof w, MSG_NOSIGNAL | MSG_DONTWAIT);
    ++counters_.refused;
    ::shutdown(c.fd, SHUT_RDWR);  // dropped at the next poll
    c.ready = true;
  };
  if (n != static_cast<ssize_t>(sizeof h)) return refuse("malformed hello");
  if (h.version != kLayoutVersion) return refuse("client library of another version");
  if (h.role < 1 || h.role > 3) return refuse("unknown role");
  const uint64_t pub = h.publish_bytes ? h.publish_bytes : defaults_.publish_bytes;
  const uint64_t del = h.delivery_bytes ? h.delivery_bytes : defaults_.delivery_bytes;
  if (pub < 4096 || del < 4096 || pub > (uint64_t{1} << 32) || del > (uint64_t{1} << 32))
    return refuse("ring sizes must be 4 KiB .. 4 GiB");
  h.name[sizeof h.name - 1] = '\0';
  c.name = h.name;
  c.role = static_cast<Role>(h.role);
  const ClientFileLayout lay(c.role, pub, del);
  c.file = dir_ + "/client-" + std::to_string(c.id);
  const int f = ::open(c.file.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  // Every page is made real now (posix_fallocate): if the shared-memory
  // mount has no room, this is a refusal, not a SIGBUS in the daemon's loop.
  const int why = f < 0 ? errno : ::posix_fallocate(f, 0, static_cast<off_t>(lay.bytes));
  if (why != 0) {
    if (f >= 0) ::close(f);
    ::unlink(c.file.c_str());
    return refuse(std::string("cannot make its file: ") + std::strerror(why));
  }
  void* map = ::mmap(nullptr, lay.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  ::close(f);
  if (map == MAP_FAILED) {
    ::unlink(c.file.c_str());
    return refuse(std::string("cannot map its file: ") + std::strerror(errno));
  }
  c.map = map;
  c.bytes = lay.bytes;
  auto* base = static_cast<uint8_t*>(map);
  c.h = new (base) ClientHeader{};
  c.h->magic = kClientMagic;
  c.h->version = kLayoutVersion;
  c.h->client_id = c.id;
  c.h->rank = rank_;
  c.h->group_size = group_size_;
  c.h->role = h.role;
  c.h->control_offset = lay.control;
  c.h->publish_offset = lay.publish;
  c.h->delivery_offset = lay.delivery;
  c.h->max_message = std::min<uint64_t>(max_message_, pub / 2 - 64);
  c.control = new (base + lay.control) ControlRing();
  if (lay.publish) c.publish = RecordRing(RecordRing::init(base + lay.publish, pub));
  if (lay.delivery) c.delivery = RecordRing(RecordRing::init(base + lay.delivery, del));
  c.last_offer = offers_;  // it takes messages from the next one on
  w.client_id = c.id;
  w.file_bytes = lay.bytes;
  std::snprintf(w.file, sizeof w.file, "%s", c.file.c_str());
  if (::send(c.fd, &w, sizeof w, MSG_NOSIGNAL | MSG_DONTWAIT) != static_cast<ssize_t>(sizeof w)) {
    ::shutdown(c.fd, SHUT_RDWR);
    return;
  }
  c.ready = true;
  ++counters_.connected;
}

void ClientTable::drop(size_t i) {
  Local& c = *clients_[i];
  if (c.map != nullptr) ::munmap(c.map, c.bytes);
  if (!c.file.empty()) ::unlink(c.file.c_str());
  if (c.fd >= 0) ::close(c.fd);
  if (c.h != nullptr) ++counters_.disconnected;
  clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));
  if (next_publisher_ > clients_.size()) next_publisher_ = 0;
}

uint32_t ClientTable::poll_control(uint64_t now_ns) {
  std::vector<pollfd> fds;
  fds.reserve(clients_.size() + 1);
  fds.push_back(pollfd{listen_fd_, POLLIN, 0});
  for (const auto& c : clients_) fds.push_back(pollfd{c->closing ? -1 : c->fd, POLLIN, 0});
  uint32_t work = 0;
  // Clients that hung up go once what they committed is published.
  for (size_t k = clients_.size(); k-- > 0;) {
    Local& c = *clients_[k];
    if (c.closing && (c.h == nullptr || !c.publishes() || c.evicted || c.publish.empty())) {
      drop(k);
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(k) + 1);
      ++work;
    }
  }
  if (::poll(fds.data(), fds.size(), 0) <= 0) return work;
  // Walk backwards: drop() moves the ones after.
  for (size_t k = clients_.size(); k-- > 0;) {
    const short ev = fds[k + 1].revents;
    if (ev == 0) continue;
    ++work;
    Local& c = *clients_[k];
    if (!c.ready && (ev & POLLIN)) {
      answer(c);
      continue;
    }
    char b[64];
    const ssize_t n = ::recv(c.fd, b, sizeof b, MSG_DONTWAIT);
    if (n == 0 || (ev & (POLLHUP | POLLERR)) || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      if (c.h != nullptr && c.publishes() && !c.evicted && !c.publish.empty()) c.closing = true;
      else drop(k);
    }
  }
  if (fds[0].revents & POLLIN) {
    accept_new(now_ns);
    ++work;
  }
  return work;
}

uint32_t ClientTable::drain_publishers(Publisher& pub, uint32_t budget) {
  uint32_t done = 0;
  const size_t n = clients_.size();
  for (size_t step = 0; step < n && done < budget; ++step) {
    const size_t i = (next_publisher_ + step) % n;
    Local& c = *clients_[i];
    if (!c.ready || c.h == nullptr || !c.publishes() || c.evicted) continue;
    uint32_t mine = 0;
    while (done < budget && mine < 64) {
      const engine::stream::RecordView r = c.publish.peek();
      if (r.data == nullptr) {
        if (c.publish.corrupt()) {
          ++counters_.corrupt;
          c.evicted = true;  // never read again; dropped when it hangs up
          c.h->evicted.store(1, std::memory_order_release);
        }
        break;
      }
      const PublishResult res = pub.publish(std::span(reinterpret_cast<const std::byte*>(r.data), r.len));
      if (res == PublishResult::WouldBlock) {
        next_publisher_ = i;  // it goes first next time
        return done;
      }
      c.publish.pop();
      if (res == PublishResult::Ok) {
        ++c.messages_in;
        c.bytes_in += r.len;
        c.h->published.store(c.messages_in, std::memory_order_release);
      }
      ++done;
      ++mine;
      if (res == PublishResult::Failed) return done;
    }
  }
  if (n > 0) next_publisher_ = (next_publisher_ + 1) % n;
  return done;
}

void ClientTable::evict(Local& c, uint64_t now_ns) {
  c.evicted = true;
  c.h->evicted.store(1, std::memory_order_release);
  c.control->push(Notice{Notice::Evicted, UINT32_MAX, now_ns});
  ++counters_.evictions;
}

bool ClientTable::deliver(const StreamMessage& m, uint64_t now_ns) {
  const uint64_t offer = offers_ + 1;
  bool all = true;
  const uint32_t len = static_cast<uint32_t>(sizeof(engine::stream::DeliveredHead) + m.data.size());
  for (auto& cp : clients_) {
    Local& c = *cp;
    if (!c.ready || c.h == nullptr || !c.subscribes() || c.evicted || c.last_offer >= offer) continue;
    uint8_t* at = c.delivery.reserve(len, 0);
    if (at == nullptr) {
      if (c.blocked_since == 0) {
        c.blocked_since = now_ns;
        ++counters_.full_waits;
      } else if (now_ns - c.blocked_since > defaults_.evict_after_ns) {
        evict(c, now_ns);
        continue;
      }
      all = false;
      continue;
    }
    const engine::stream::DeliveredHead dh{m.seq, m.timestamp_ns, m.publisher, m.stream, 0};
    std::memcpy(at, &dh, sizeof dh);
    if (!m.data.empty()) std::memcpy(at + sizeof dh, m.data.data(), m.data.size());
    c.delivery.commit();
    c.blocked_since = 0;
    c.last_offer = offer;
    ++c.messages_out;
    c.bytes_out += m.data.size();
    c.h->delivered.store(c.messages_out, std::memory_order_release);
  }
  if (all) offers_ = offer;
  return all;
}

void ClientTable::notify_all(const Notice& n) {
  for (auto& c : clients_)
    if (c->control != nullptr) c->control->push(n);
}

void ClientTable::heartbeat(uint64_t now_ns) {
  for (auto& c : clients_)
    if (c->h != nullptr) c->h->heartbeat_ns.store(now_ns, std::memory_order_relaxed);
}

void ClientTable::stopping() {
  const uint64_t now = clock_ns();
  for (auto& c : clients_)
    if (c->h != nullptr) {
      c->h->daemon_stopping.store(1, std::memory_order_release);
      c->control->push(Notice{Notice::ShuttingDown, UINT32_MAX, now});
    }
}

std::vector<ClientInfo> ClientTable::clients() const {
  std::vector<ClientInfo> out;
  for (const auto& c : clients_)
    if (c->h != nullptr)
      out.push_back(ClientInfo{c->id, c->name, c->role, c->pid, c->messages_in, c->bytes_in, c->messages_out,
                               c->bytes_out, c->evicted});
  return out;
}

}  // namespace lanecast::daemon
