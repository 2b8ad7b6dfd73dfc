// The daemon's local applications (shm_layout.h): the Unix socket they
// connect on, a mapped file each, their publishers' messages onto the
// daemon's stream and every delivered message into each subscriber's ring.
// A subscriber that stays full longer than evict_after is evicted (the
// stream is not held back by one slow application for ever); a client that
// hangs up - exit, crash, kill -9 - is dropped and its file removed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/daemon/shm_layout.h"
#include "engine/lanecast.h"

namespace lanecast::daemon {

struct ClientDefaults {
  uint64_t publish_bytes = 4u << 20;
  uint64_t delivery_bytes = 16u << 20;
  uint64_t evict_after_ns = 2'000'000'000;
  uint32_t max_clients = 64;
};

struct ClientInfo {
  uint32_t id;
  std::string name;
  Role role;
  int pid;
  uint64_t messages_in, bytes_in, messages_out, bytes_out;
  bool evicted;
};

struct ClientTableCounters {
  uint64_t connected = 0, disconnected = 0, refused = 0, evictions = 0, corrupt = 0;
  uint64_t full_waits = 0;  // times a subscriber's full ring held delivery back
};

class ClientTable {
 public:
  // Creates `dir` (0700) and listens on dir/control.sock. Throws
  // std::runtime_error when another daemon listens there already.
  ClientTable(std::string dir, const ClientDefaults& d, uint32_t rank, uint32_t group_size, uint64_t max_message);
  ~ClientTable();  // tells every client, removes every file and the socket

  // New clients, their hellos, and clients that hung up. Returns work done.
  uint32_t poll_control(uint64_t now_ns);
  // Publishers' messages onto `pub`, up to `budget`; stops at WouldBlock.
  uint32_t drain_publishers(Publisher& pub, uint32_t budget);
  // Offers one delivered message to every subscriber that has not taken it
  // yet; true once all have (or were evicted). False: a ring is full - call
  // again with the same message later.
  bool deliver(const StreamMessage& m, uint64_t now_ns);
  void notify_all(const Notice& n);
  void heartbeat(uint64_t now_ns);
  void stopping();  // every client learns that the daemon stops

  std::vector<ClientInfo> clients() const;
  const ClientTableCounters& counters() const { return counters_; }
  const std::string& dir() const { return dir_; }
  size_t size() const { return clients_.size(); }

 private:
  struct Local;
  void accept_new(uint64_t now_ns);
  void answer(Local& c);
  void drop(size_t i);
  void evict(Local& c, uint64_t now_ns);

  std::string dir_;
  ClientDefaults defaults_;
  uint32_t rank_, group_size_;
  uint64_t max_message_;
  int listen_fd_ = -1;
  uint32_t next_id_ = 1;
  size_t next_publisher_ = 0;  // round robin
  uint64_t offers_ = 0;        // messages every subscriber has taken (deliver())
  std::vector<std::unique_ptr<Local>> clients_;
  ClientTableCounters counters_;
};

}  // namespace lanecast::daemon
