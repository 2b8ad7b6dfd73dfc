// The daemon's local applications: the Unix socket they connect on, a
// sealed memfd each (ipc/client_file.h), their publishers' messages onto
// the daemon's stream and every delivered message into each subscriber's
// ring.
//
// Every application is a possible attacker. Who may connect is the user
// model's (access_policy.h); what one may hold is bounded (ClientLimits:
// ring sizes, all clients' memory together, the time to say hello); and of
// its memory the daemon reads only the rings' positions and records,
// through views that keep every size and the daemon's own positions in the
// daemon's memory (ipc/record_ring.h). A client whose memory makes no
// sense is cut off - its socket shut, its memory unmapped - and counted.
// A subscriber that stays full longer than evict_after, or that takes
// nothing from its ring for that long while something waits there, is
// evicted (the stream is not held back by one slow application for ever)
// and its slot and memory reclaimed at once: it learns why from its own
// mapping and its socket's hang-up. A client that hangs up - exit, crash,
// kill -9 - is dropped once what it had committed is published. Every
// refusal is counted under its reason.
#pragma once

#include <poll.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/daemon/access_policy.h"
#include "lanecast/lanecast.h"
#include "ipc/client_file.h"
#include "ipc/delivered_head.h"
#include "ipc/notice_ring.h"
#include "ipc/protocol.h"

namespace lanecast::daemon {

struct ClientLimits {
  uint64_t publish_bytes = 4u << 20;    // a publisher's ring, unless it asks for another size
  uint64_t delivery_bytes = 16u << 20;  // a subscriber's ring, likewise
  uint64_t max_ring = 64u << 20;        // the most a client may ask for, per ring
  uint64_t max_memory = 1u << 30;       // all clients' memory together
  uint64_t hello_timeout_ns = 2'000'000'000;
  uint64_t evict_after_ns = 2'000'000'000;
  uint32_t max_clients = 64;            // connections, answered or not
  uint32_t max_clients_per_user = 16;   // of those, one uid's: no user holds every slot
};

// The smallest delivery ring that holds a message of `max_message` bytes
// wherever its position is (twice the record: RecordRing::max_record()).
inline uint64_t min_delivery_ring(uint64_t max_message) {
  return std::max<uint64_t>(ipc::kMinRing, 2 * ipc::RecordRing::footprint(sizeof(ipc::DeliveredHead) + max_message));
}

// Why a subscriber was evicted: its ring stayed full, or it took nothing
// from it while something waited there.
enum class Eviction : uint8_t { RingFull, NotReading, kCount };
inline constexpr std::array<const char*, static_cast<size_t>(Eviction::kCount)> kEvictionNames = {"ring_full",
                                                                                                  "not_reading"};

// Why a connected client was cut off: which of its rings made no sense.
enum class CutOff : uint8_t { PublishRing, DeliveryRing, NoticeRing, kCount };
inline constexpr std::array<const char*, static_cast<size_t>(CutOff::kCount)> kCutOffNames = {
    "publish_ring", "delivery_ring", "notice_ring"};

struct ClientInfo {
  uint32_t id;
  std::string name;
  ipc::Role role;
  int pid;
  uint32_t uid;
  uint64_t messages_in, bytes_in, messages_out, bytes_out;
  uint64_t too_large, publish_failed;  // its messages the stream refused
  bool evicted;
};

struct ClientTableCounters {
  uint64_t connected = 0, disconnected = 0, evictions = 0;
  std::array<uint64_t, static_cast<size_t>(Eviction::kCount)> evicted{};  // evictions by reason
  uint64_t full_waits = 0;      // times a subscriber's full ring held delivery back
  std::array<uint64_t, static_cast<size_t>(ipc::Refusal::kCount)> refused{};
  std::array<uint64_t, static_cast<size_t>(CutOff::kCount)> cut_off{};
  uint64_t publish_too_large = 0, publish_failed = 0;  // all clients' refused messages
  uint64_t notices_lost = 0;    // a notice ring was full
  uint64_t refused_total() const;
};

class ClientTable {
 public:
  // Serves the listening socket `listen_fd` (DaemonDir::listen(); the table
  // closes it).
  ClientTable(int listen_fd, const AccessPolicy& access, const ClientLimits& limits, uint32_t rank,
              uint32_t group_size, uint64_t max_message);
  ~ClientTable();  // tells every client, drops them all
  ClientTable(const ClientTable&) = delete;
  ClientTable& operator=(const ClientTable&) = delete;

  // New clients, their hellos, clients that hung up or were cut off, the
  // heartbeat. Returns work done.
  uint32_t poll_control(uint64_t now_ns);
  // True while a connection waits for its hello to be answered: poll soon.
  bool hello_pending() const { return unanswered_ > 0; }
  // Publishers' messages onto `pub`, up to `budget`; stops at WouldBlock.
  uint32_t drain_publishers(Publisher& pub, uint32_t budget);
  // Offers one delivered message to every subscriber that has not taken it
  // yet; true once all have (or were evicted or cut off). False: a ring is
  // full - call again with the same message later.
  bool deliver(const StreamMessage& m, uint64_t now_ns);
  void notify_all(const ipc::Notice& n);
  void stopping();  // every client learns that the daemon stops

  std::vector<ClientInfo> clients() const;
  const ClientTableCounters& counters() const { return counters_; }
  size_t size() const;          // clients welcomed and not gone
  uint64_t memory() const { return memory_; }  // bytes of all clients' files

 private:
  struct Local;
  void accept_new(uint64_t now_ns);
  void answer(Local& c);
  void refuse(Local& c, ipc::Refusal why, const std::string& text);
  void hung_up(Local& c);
  void cut_off(Local& c, CutOff why);
  void evict(Local& c, uint64_t now_ns, Eviction why);
  void watch_reading(Local& c, uint64_t now_ns);
  void notify(Local& c, const ipc::Notice& n);
  void drop(size_t i);

  int listen_fd_;
  const AccessPolicy& access_;
  ClientLimits limits_;
  uint32_t rank_, group_size_;
  uint64_t max_message_;
  uint32_t next_id_ = 1;
  size_t next_publisher_ = 0;  // round robin
  uint64_t offers_ = 0;        // messages every subscriber has taken (deliver())
  uint64_t memory_ = 0;
  uint32_t unanswered_ = 0;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Local>> clients_;
  std::vector<pollfd> pollfds_;
  ClientTableCounters counters_;
};

}  // namespace lanecast::daemon
