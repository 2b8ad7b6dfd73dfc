// The client library of `lanecast daemon`: an application publishes to and
// subscribes from the group its host's daemon is a member of, through shared
// memory, without linking DPDK or the engine (link liblanecast_client.a;
// apps/examples/stream_publisher.cc and stream_subscriber.cc).
//
//   auto c = lanecast::daemon::Client::connect({"/dev/shm/lanecast-feed-r0", Role::Both});
//   c->publish(bytes);                       // Ok, or WouldBlock: try again
//   lanecast::daemon::Message m;
//   while (c->next_for(m, 10ms)) use(m.data);
//
// One thread at a time per Client. Every message published by any client of
// any member's daemon reaches every subscriber of every member, in each
// daemon's order, exactly once - unless the subscriber falls so far behind
// that its daemon evicts it (evicted(); the daemon's --evict-after).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "apps/daemon/shm_layout.h"
#include "ipc/delivery_reader.h"

namespace lanecast::daemon {

struct ClientOptions {
  std::string dir;             // the daemon's directory (its --dir)
  Role role = Role::Both;
  uint64_t publish_bytes = 0;  // ring sizes; 0: the daemon's defaults
  uint64_t delivery_bytes = 0;
  std::string name;            // shown by `lanecast stat`
};

struct Message {
  uint32_t publisher = 0;      // the member whose daemon published it
  uint16_t stream = 0;
  uint64_t seq = 0;            // that daemon's stream sequence number
  uint64_t timestamp_ns = 0;   // CLOCK_MONOTONIC when that daemon published it
  std::span<const std::byte> data;  // valid until the next next()
};

enum class Publish : uint8_t { Ok, WouldBlock, TooLarge, Closed };

class Client {
 public:
  // Throws std::runtime_error saying why (no daemon there, refused, ...).
  static std::unique_ptr<Client> connect(const ClientOptions& o);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Publish publish(std::span<const std::byte> message);
  Publish publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout);
  bool next(Message& out);
  bool next_for(Message& out, std::chrono::nanoseconds timeout);
  // The daemon's notices (a failed stream, eviction, shutdown), oldest first.
  std::optional<Notice> notice();

  bool evicted() const;
  bool daemon_stopping() const;
  uint32_t rank() const;        // the daemon's member
  uint32_t client_id() const;
  uint64_t max_message() const;
  uint64_t published() const;   // messages this client's daemon took from it

 private:
  Client() = default;
  int fd_ = -1;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  ClientHeader* header_ = nullptr;
  ControlRing* control_ = nullptr;
  engine::stream::RecordRing publish_;
  engine::stream::DeliveryReader delivery_;  // lends each message until the next next()
  uint64_t written_ = 0;
};

}  // namespace lanecast::daemon
