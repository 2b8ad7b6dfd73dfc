#include "apps/daemon/client.h"

#include "engine/stream/back_off.h"

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
#include <stdexcept>

namespace lanecast::daemon {
namespace {

uint64_t mono_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

std::unique_ptr<Client> Client::connect(const ClientOptions& o) {
  const std::string sock = o.dir + "/control.sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (sock.size() >= sizeof addr.sun_path) throw std::runtime_error("daemon directory path too long: " + o.dir);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  std::unique_ptr<Client> c(new Client());
  c->fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (c->fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(c->fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("no lanecast daemon at " + sock + ": " + std::strerror(errno));
  Hello h;
  h.role = static_cast<uint8_t>(o.role);
  h.publish_bytes = o.publish_bytes;
  h.delivery_bytes = o.delivery_bytes;
  std::strncpy(h.name, o.name.c_str(), sizeof h.name - 1);
  if (::send(c->fd_, &h, sizeof h, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof h))
    throw std::runtime_error(std::string("daemon: cannot send hello: ") + std::strerror(errno));
  Welcome w;
  pollfd p{c->fd_, POLLIN, 0};
  if (::poll(&p, 1, 10'000) != 1 || ::recv(c->fd_, &w, sizeof w, 0) != static_cast<ssize_t>(sizeof w))
    throw std::runtime_error("daemon at " + sock + " did not answer");
  w.file[sizeof w.file - 1] = '\0';
  if (w.status != 0) throw std::runtime_error(std::string("daemon refused: ") + w.file);
  const int f = ::open(w.file, O_RDWR | O_CLOEXEC);
  if (f < 0) throw std::runtime_error(std::string("cannot open ") + w.file + ": " + std::strerror(errno));
  struct stat st{};
  if (::fstat(f, &st) != 0 || static_cast<uint64_t>(st.st_size) != w.file_bytes) {
    ::close(f);
    throw std::runtime_error(std::string(w.file) + " is not the size the daemon said");
  }
  c->map_bytes_ = w.file_bytes;
  c->map_ = ::mmap(nullptr, c->map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  ::close(f);
  if (c->map_ == MAP_FAILED) {
    c->map_ = nullptr;
    throw std::runtime_error(std::string("mmap ") + w.file + ": " + std::strerror(errno));
  }
  auto* base = static_cast<uint8_t*>(c->map_);
  c->header_ = reinterpret_cast<ClientHeader*>(base);
  if (c->header_->magic != kClientMagic || c->header_->version != kLayoutVersion)
    throw std::runtime_error(std::string(w.file) + " is not a lanecast client file of this version");
  c->control_ = reinterpret_cast<ControlRing*>(base + c->header_->control_offset);
  if (c->header_->publish_offset)
    c->publish_ = engine::stream::RecordRing(reinterpret_cast<engine::stream::RecordRingHeader*>(base + c->header_->publish_offset));
  if (c->header_->delivery_offset)
    c->delivery_ = engine::stream::DeliveryReader(reinterpret_cast<engine::stream::RecordRingHeader*>(base + c->header_->delivery_offset));
  return c;
}

Client::~Client() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  if (fd_ >= 0) ::close(fd_);  // the daemon sees it close and lets the client go
}

Publish Client::publish(std::span<const std::byte> message) {
  if (!publish_.valid() || header_->evicted.load(std::memory_order_acquire) ||
      header_->daemon_stopping.load(std::memory_order_acquire))
    return Publish::Closed;
  if (message.size() > header_->max_message || message.size() > publish_.max_record()) return Publish::TooLarge;
  uint8_t* at = publish_.reserve(static_cast<uint32_t>(message.size()), 0);
  if (at == nullptr) return Publish::WouldBlock;
  if (!message.empty()) std::memcpy(at, message.data(), message.size());
  publish_.commit();
  ++written_;
  return Publish::Ok;
}

Publish Client::publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = mono_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    const Publish r = publish(message);
    if (r != Publish::WouldBlock || mono_ns() >= deadline) return r;
    engine::stream::back_off(tries);
  }
}

bool Client::next(Message& out) { return delivery_.next(out); }

bool Client::next_for(Message& out, std::chrono::nanoseconds timeout) {
  const uint64_t deadline = mono_ns() + static_cast<uint64_t>(std::max<int64_t>(0, timeout.count()));
  for (uint32_t tries = 0;; ++tries) {
    if (next(out)) return true;
    if (mono_ns() >= deadline || evicted() || daemon_stopping()) return false;
    engine::stream::back_off(tries);
  }
}

std::optional<Notice> Client::notice() {
  Notice n;
  if (control_->pop(n)) return n;
  return std::nullopt;
}

bool Client::evicted() const { return header_->evicted.load(std::memory_order_acquire) != 0; }
bool Client::daemon_stopping() const { return header_->daemon_stopping.load(std::memory_order_acquire) != 0; }
uint32_t Client::rank() const { return header_->rank; }
uint32_t Client::client_id() const { return header_->client_id; }
uint64_t Client::max_message() const { return header_->max_message; }
uint64_t Client::published() const { return header_->published.load(std::memory_order_acquire); }

}  // namespace lanecast::daemon
