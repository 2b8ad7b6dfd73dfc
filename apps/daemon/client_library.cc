#include "lanecast/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "apps/daemon/daemon_identity.h"
#include "engine/stream/back_off.h"
#include "ipc/client_file.h"
#include "ipc/fd_passing.h"
#include "ipc/notice_ring.h"
#include "ipc/protocol.h"
#include "ipc/shared_memory.h"

namespace lanecast::daemon {
namespace {

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

// The public header's Role and Notice are the file format's, value for value.
static_assert(static_cast<uint8_t>(Role::Publisher) == static_cast<uint8_t>(ipc::Role::Publisher));
static_assert(static_cast<uint8_t>(Role::Subscriber) == static_cast<uint8_t>(ipc::Role::Subscriber));
static_assert(static_cast<uint8_t>(Role::Both) == static_cast<uint8_t>(ipc::Role::Both));
static_assert(uint32_t{Notice::StreamFailed} == uint32_t{ipc::Notice::StreamFailed} &&
              uint32_t{Notice::Evicted} == uint32_t{ipc::Notice::Evicted} &&
              uint32_t{Notice::ShuttingDown} == uint32_t{ipc::Notice::ShuttingDown});

struct Client::Impl {
  ~Impl() {
    if (fd >= 0) ::close(fd);  // the daemon sees it close and lets the client go
  }
  bool evicted() const { return view.header->evicted.load(std::memory_order_acquire) != 0; }
  bool daemon_stopping() const { return view.header->daemon_stopping.load(std::memory_order_acquire) != 0; }
  bool daemon_hung_up() const;

  int fd = -1;
  std::optional<ipc::SharedMemory> mem;
  ipc::ClientView view;
  Closed gone = Closed::No;  // for good: the socket hung up, or a ring broke
  uint64_t silent_after_ns = 0;
};

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

const char* describe(Closed c) {
  switch (c) {
    case Closed::No: return "open";
    case Closed::Evicted: return "evicted by the daemon (too slow, or its memory made no sense)";
    case Closed::DaemonStopping: return "the daemon is shutting down";
    case Closed::DaemonGone: return "the daemon is gone (its socket hung up)";
    case Closed::DaemonSilent: return "the daemon's heartbeat stands still (hung?)";
    case Closed::Corrupt: return "a ring the daemon writes makes no sense";
  }
  return "?";
}

std::unique_ptr<Client> Client::connect(const ClientOptions& o) {
  const std::string sock = o.dir + "/control.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.size() >= sizeof addr.sun_path) throw std::runtime_error("daemon directory path too long: " + o.dir);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  auto c = std::make_unique<Impl>();
  c->silent_after_ns = static_cast<uint64_t>(std::max<int64_t>(0, o.daemon_silent_after.count()));
  c->fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c->fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(c->fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("no lanecast daemon at " + sock + ": " + std::strerror(errno));
  // Who answers is checked before the hello: an impostor learns nothing,
  // not even the client's name.
  const char* env_user = std::getenv("LANECAST_DAEMON_USER");
  const std::string trusted = !o.daemon_user.empty() ? o.daemon_user : env_user != nullptr ? env_user : "";
  if (const std::string why = untrusted_daemon(c->fd, trusted, sock); !why.empty()) throw std::runtime_error(why);
  ipc::Hello h;
  h.role = static_cast<uint8_t>(o.role);  // the same values (above)
  h.publish_bytes = o.publish_bytes;
  h.delivery_bytes = o.delivery_bytes;
  // As given: the daemon judges the name (and says why it refuses one).
  std::memcpy(h.name, o.name.data(), std::min(o.name.size(), sizeof h.name));
  // A daemon that refused the connection before the hello arrived has its
  // answer waiting even when the hello cannot go: read it either way.
  const bool sent = ::send(c->fd, &h, sizeof h, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof h);
  const int send_errno = errno;
  ipc::Welcome w;
  int fd = -1;
  pollfd p{c->fd, POLLIN, 0};
  ssize_t got = -1;
  if (::poll(&p, 1, 10'000) == 1) {
    got = ipc::recv_with_fd(c->fd, &w, sizeof w, &fd);
    // A daemon that refused before it read the hello reset the connection
    // when it closed; its answer is still there to read.
    if (got < 0 && errno == ECONNRESET) got = ipc::recv_with_fd(c->fd, &w, sizeof w, &fd);
  }
  if (got != static_cast<ssize_t>(sizeof w)) {
    if (fd >= 0) ::close(fd);
    if (!sent) throw std::runtime_error(std::string("daemon: cannot send hello: ") + std::strerror(send_errno));
    throw std::runtime_error("daemon at " + sock + " did not answer" + (got < 0 ? std::string(": ") + std::strerror(errno) : ""));
  }
  w.reason[sizeof w.reason - 1] = '\0';
  if (w.status != 0) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error(std::string("daemon refused (") + ipc::refusal_name(static_cast<ipc::Refusal>(w.status)) +
                             "): " + w.reason);
  }
  if (fd < 0) throw std::runtime_error("daemon at " + sock + " sent no memory with its welcome");
  std::string why;
  c->mem = ipc::SharedMemory::adopt(fd, w.file_bytes, &why);
  if (!c->mem) throw std::runtime_error("the daemon's memory: " + why);
  c->mem->close_fd();
  auto view = ipc::open_client_file(c->mem->data(), c->mem->size(), &why);
  if (!view) throw std::runtime_error("the daemon's memory: " + why);
  if (static_cast<uint8_t>(view->layout.role) != static_cast<uint8_t>(o.role)) throw std::runtime_error("the daemon's memory is laid out for another role");
  c->view = *view;
  return std::unique_ptr<Client>(new Client(std::move(c)));
}

Publish Client::publish(std::span<const std::byte> message) {
  if (!impl_->view.publish.valid() || impl_->gone != Closed::No || evicted() || daemon_stopping()) return Publish::Closed;
  if (message.size() > impl_->view.id.max_message) return Publish::TooLarge;
  uint8_t* at = impl_->view.publish.reserve(message.size(), 0);
  if (at == nullptr) {
    if (impl_->view.publish.corrupt()) {
      impl_->gone = Closed::Corrupt;
      return Publish::Closed;
    }
    return Publish::WouldBlock;
  }
  if (!message.empty()) std::memcpy(at, message.data(), message.size());
  impl_->view.publish.commit();
  return Publish::Ok;
}

Publish Client::publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = mono_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    const Publish r = publish(message);
    if (r != Publish::WouldBlock) return r;
    if (closed() != Closed::No) return Publish::Closed;
    if (mono_ns() >= deadline) return r;
    engine::stream::back_off(tries);
  }
}

bool Client::next(Message& out) {
  if (impl_->view.delivery.next(out)) return true;
  if (impl_->view.delivery.corrupt()) impl_->gone = Closed::Corrupt;
  return false;
}

bool Client::next_for(Message& out, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = mono_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    if (next(out)) return true;
    if (closed() != Closed::No || mono_ns() >= deadline) return false;
    engine::stream::back_off(tries);
  }
}

std::optional<Notice> Client::notice() {
  const std::optional<ipc::Notice> n = impl_->view.notices.pop();
  if (!n) return std::nullopt;
  return Notice{static_cast<Notice::Kind>(n->kind), n->peer, n->at_ns};
}

bool Client::Impl::daemon_hung_up() const {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) != 1) return false;
  if (p.revents & (POLLHUP | POLLERR)) return true;
  // The daemon says nothing after its welcome: readable means its end closed.
  char b;
  const ssize_t n = ::recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
  return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

Closed Client::closed() {
  if (impl_->gone != Closed::No) return impl_->gone;
  if (evicted()) return Closed::Evicted;
  if (daemon_stopping()) return Closed::DaemonStopping;
  if (impl_->daemon_hung_up()) return impl_->gone = Closed::DaemonGone;
  if (impl_->silent_after_ns != 0) {
    const uint64_t beat = impl_->view.header->heartbeat_ns.load(std::memory_order_relaxed);
    const uint64_t now = mono_ns();
    if (beat != 0 && now > beat && now - beat > impl_->silent_after_ns) return Closed::DaemonSilent;
  }
  return Closed::No;
}

bool Client::evicted() const { return impl_->evicted(); }
bool Client::daemon_stopping() const { return impl_->daemon_stopping(); }
uint64_t Client::published() const { return impl_->view.header->published.load(std::memory_order_acquire); }
uint32_t Client::rank() const { return impl_->view.id.rank; }
uint32_t Client::client_id() const { return impl_->view.id.client_id; }
uint64_t Client::max_message() const { return impl_->view.id.max_message; }
uint64_t Client::skipped() const { return impl_->view.delivery.skipped(); }

}  // namespace lanecast::daemon
