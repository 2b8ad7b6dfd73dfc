#include "apps/daemon/metrics_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "lanecast/lanecast.h"

namespace lanecast::daemon {
namespace {

void answer(int fd, const std::string& request, const std::string& text) {
  const bool metrics = request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics\r", 0) == 0;
  std::string r;
  if (metrics) {
    r = "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " + std::to_string(text.size()) +
        "\r\nConnection: close\r\n\r\n" + text;
  } else {
    r = "HTTP/1.0 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nonly /metrics here\n";
  }
  size_t at = 0;
  // The answer is small; a client that does not read it is not waited for long.
  for (int tries = 0; at < r.size() && tries < 100; ++tries) {
    const ssize_t n = ::send(fd, r.data() + at, r.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) at += static_cast<size_t>(n);
    else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) break;
  }
}

}  // namespace

MetricsServer::MetricsServer(const std::string& addr, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, addr.c_str(), &a.sin_addr) != 1)
    throw std::runtime_error("--metrics-addr: '" + addr + "' is not an IPv4 address");
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (fd_ >= 0) ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, kBacklog) != 0) {
    const std::string why = std::strerror(errno);
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("cannot serve /metrics on " + addr + ":" + std::to_string(port) + ": " + why);
  }
}

MetricsServer::~MetricsServer() {
  for (auto& p : pending_) ::close(p.fd);
  if (fd_ >= 0) ::close(fd_);
}

uint32_t MetricsServer::poll(const std::string& text) {
  uint32_t work = 0;
  const uint64_t now = clock_ns();
  // pending_ is oldest first: a newcomer takes the place of the oldest, once
  // that one has had kGraceNs to send its request; until then newcomers
  // wait in the listening socket's backlog.
  for (int i = 0; i < 64; ++i) {
    const bool full = pending_.size() >= kMaxPending;
    if (full && now < pending_.front().deadline_ns - kRequestDeadlineNs + kGraceNs) break;
    const int c = ::accept4(fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c < 0) break;
    if (full) {
      ::close(pending_.front().fd);
      pending_.erase(pending_.begin());
      ++dropped_;
    }
    pending_.push_back(Pending{c, now + kRequestDeadlineNs, {}});
  }
  for (size_t i = 0; i < pending_.size();) {
    Pending& p = pending_[i];
    char buf[1024];
    const ssize_t n = ::recv(p.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0 && p.request.size() < 8192) p.request.append(buf, static_cast<size_t>(n));
    const bool complete = p.request.find("\r\n\r\n") != std::string::npos || p.request.find("\n\n") != std::string::npos;
    const bool gone = n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
    if (complete || gone || now > p.deadline_ns || p.request.size() >= 8192) {
      if (complete) {
        answer(p.fd, p.request, text);
        ++served_;
      } else {
        ++dropped_;
      }
      ::close(p.fd);
      pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
      ++work;
      continue;
    }
    ++i;
  }
  return work;
}

}  // namespace lanecast::daemon
