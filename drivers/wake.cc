#include "drivers/wake.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lanecast::drivers {

Waker::Waker() {
  event_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (event_fd_ < 0) throw std::runtime_error(std::string("waker: eventfd: ") + std::strerror(errno));
  fds_.push_back(pollfd{event_fd_, POLLIN, 0});
}

Waker::~Waker() {
  if (event_fd_ >= 0) close(event_fd_);
}

void Waker::kick() {
  const uint64_t one = 1;
  // EAGAIN only when the counter is saturated: the core is being woken anyway.
  [[maybe_unused]] const ssize_t n = write(event_fd_, &one, sizeof one);
  kicks_.store(kicks_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

bool Waker::sleep(uint64_t timeout_ns) {
  // ppoll, not epoll_wait: nanosecond timeouts (naps until a timer are often
  // tens of microseconds) and a handful of descriptors.
  for (pollfd& p : fds_) p.revents = 0;
  timespec ts{static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
  const int rc = ppoll(fds_.data(), fds_.size(), timeout_ns == UINT64_MAX ? nullptr : &ts, nullptr);
  return rc > 0;
}

void Waker::end_sleep() {
  sleeping_.store(false, std::memory_order_relaxed);
  uint64_t v;
  while (read(event_fd_, &v, sizeof v) > 0) {
  }
}

void Waker::add_fd(int fd) {
  for (const pollfd& p : fds_)
    if (p.fd == fd) return;
  fds_.push_back(pollfd{fd, POLLIN, 0});
}

void Waker::remove_fd(int fd) {
  if (fd == event_fd_) return;
  fds_.erase(std::remove_if(fds_.begin(), fds_.end(), [fd](const pollfd& p) { return p.fd == fd; }), fds_.end());
}

}  // namespace lanecast::drivers
