// /metrics over HTTP for Prometheus to scrape: a listening socket the
// daemon's loop polls (never blocks it), HTTP/1.0, one answer per connection.
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

 private:
  struct Pending {
    int fd;
    uint64_t deadline_ns;
    std::string request;
  };
  int fd_ = -1;
  std::vector<Pending> pending_;
  uint64_t served_ = 0;
};

}  // namespace lanecast::daemon
