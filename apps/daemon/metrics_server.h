// /metrics over HTTP for Prometheus to scrape: a listening socket the
// daemon's loop polls (never blocks it), HTTP/1.0, one answer per connection.
// No authentication: whoever can reach --metrics-addr (127.0.0.1 by default)
// reads every counter. Connections are served side by side, each for at
// most kRequestDeadlineNs; when kMaxPending wait already, the oldest is
// closed for the newcomer once it has had kGraceNs to send its request
// (newcomers wait in the listening socket's backlog until then). So idle
// connections, however many, cannot keep a scrape out: a scrape is taken
// from the backlog in its turn and then has kGraceNs, far more than a
// request takes to arrive, before anything can push it out. The bound: an
// attacker that keeps more than kMaxPending + kBacklog connections open at
// once fills the kernel's queue, and new connections wait for its retries.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::daemon {

class MetricsServer {
 public:
  // Throws std::runtime_error when the address cannot be listened on.
  MetricsServer(const std::string& addr, uint16_t port);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  // Accepts and answers what is waiting: GET /metrics gets `text`. Returns
  // the connections handled.
  uint32_t poll(const std::string& text);
  uint64_t served() const { return served_; }
  // Connections closed without an answer: no whole request by the deadline,
  // or pushed out by newer ones.
  uint64_t dropped() const { return dropped_; }

  static constexpr size_t kMaxPending = 64;
  static constexpr uint64_t kRequestDeadlineNs = 2'000'000'000;
  static constexpr uint64_t kGraceNs = 100'000'000;
  static constexpr int kBacklog = 1024;  // the kernel caps it at net.core.somaxconn

 private:
  struct Pending {
    int fd;
    uint64_t deadline_ns;
    std::string request;
  };
  int fd_ = -1;
  std::vector<Pending> pending_;
  uint64_t served_ = 0, dropped_ = 0;
};

}  // namespace lanecast::daemon
