// What `lanecast daemon` and its local applications share (docs/daemon.md).
//
// The daemon listens on a Unix socket in its directory (by default
// /dev/shm/lanecast-GROUP-rRANK/): an application connects, says what it is
// (a publisher, a subscriber or both) and gets back the name of a file the
// daemon made for it in the same directory. Both map the file:
//
//   | ClientHeader | control ring | publish ring | delivery ring |
//
//   publish ring   the application's messages, for the daemon to publish on
//                  its stream (single producer: the application; single
//                  consumer: the daemon), engine/stream/record_ring.h
//   delivery ring  every message the daemon's member delivered (single
//                  producer: the daemon; single consumer: the application),
//                  each a DeliveredHead and its bytes
//   control ring   the daemon's notices to the application (Boost.Lockfree's
//                  spsc_queue of fixed-size events, laid out in the file)
//
// The socket stays open for the application's life: when it closes (exit,
// crash, kill -9) the daemon drops the client and removes its file. The
// daemon never trusts the mapped bytes: a ring that does not make sense ends
// that client, never the daemon.
#pragma once

#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstdint>

#include "engine/stream/batch_format.h"
#include "ipc/record_ring.h"

namespace lanecast::daemon {

inline constexpr uint64_t kClientMagic = 0x316e6c63636e6c6cULL;  // "llnccln1"
inline constexpr uint32_t kLayoutVersion = 1;

enum class Role : uint8_t { Publisher = 1, Subscriber = 2, Both = 3 };

// An event the daemon tells an application.
struct Notice {
  enum Kind : uint32_t { None = 0, StreamFailed = 1, Evicted = 2, ShuttingDown = 3 } kind = None;
  uint32_t peer = UINT32_MAX;  // StreamFailed: the member it names
  uint64_t at_ns = 0;
};
using ControlRing = boost::lockfree::spsc_queue<Notice, boost::lockfree::capacity<64>>;

struct alignas(64) ClientHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t client_id;
  uint32_t rank;          // the daemon's member
  uint32_t group_size;
  uint8_t role;
  uint8_t reserved[7];
  uint64_t control_offset, publish_offset, delivery_offset;  // from the file's start (0: none)
  uint64_t max_message;   // what the daemon's stream takes
  // Written by the daemon, read by the application.
  alignas(64) std::atomic<uint64_t> published{0};   // its messages the daemon put on the stream
  std::atomic<uint64_t> delivered{0};               // messages the daemon put in its delivery ring
  std::atomic<uint32_t> evicted{0};                 // 1: too slow, dropped (the file stays until it closes)
  std::atomic<uint32_t> daemon_stopping{0};
  std::atomic<uint64_t> heartbeat_ns{0};            // the daemon's loop, CLOCK_MONOTONIC
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);

// The request an application sends on the socket, and the daemon's answer.
struct Hello {
  uint32_t version = kLayoutVersion;
  uint8_t role = 0;
  uint8_t reserved[3] = {};
  uint64_t publish_bytes = 0;   // 0: the daemon's default
  uint64_t delivery_bytes = 0;
  char name[32] = {};           // for counters and messages
};
struct Welcome {
  int32_t status = 0;           // 0 ok, else an errno-style reason
  uint32_t client_id = 0;
  uint64_t file_bytes = 0;
  char file[192] = {};          // path of the mapped file, or the reason when status != 0
};

inline uint64_t align64(uint64_t n) { return (n + 63) & ~uint64_t{63}; }

// Where each part of a client's file goes.
struct ClientFileLayout {
  uint64_t control = 0, publish = 0, delivery = 0, bytes = 0;
  ClientFileLayout(Role role, uint64_t publish_bytes, uint64_t delivery_bytes) {
    uint64_t at = align64(sizeof(ClientHeader));
    control = at;
    at = align64(at + sizeof(ControlRing));
    if (static_cast<uint8_t>(role) & static_cast<uint8_t>(Role::Publisher)) {
      publish = at;
      at = align64(at + engine::stream::RecordRing::bytes_for(publish_bytes));
    }
    if (static_cast<uint8_t>(role) & static_cast<uint8_t>(Role::Subscriber)) {
      delivery = at;
      at = align64(at + engine::stream::RecordRing::bytes_for(delivery_bytes));
    }
    bytes = at;
  }
};

}  // namespace lanecast::daemon
