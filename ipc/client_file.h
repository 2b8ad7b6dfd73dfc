// The memory `lanecast daemon` shares with one local application
// (docs/daemon.md): a sealed memfd the daemon makes, sizes and maps, and
// hands over on the application's Unix socket (protocol.h). Both map it:
//
//   | ClientHeader | notice ring | publish ring | delivery ring |
//
//   notice ring    the daemon's notices (notice_ring.h); producer: daemon
//   publish ring   the application's messages for the daemon to publish on
//                  its stream (record_ring.h); producer: the application
//   delivery ring  every message the daemon's member delivered, each a
//                  DeliveredHead and its bytes; producer: the daemon
//
// Where each part lies is a function of the role and the two ring
// capacities alone (client_layout()). The daemon keeps its layout in its
// own memory and never reads the header back; the application recomputes
// the layout from the header's role and capacities and accepts the file
// only if every offset and size agrees and fits the mapping. Neither side
// follows an offset the other wrote.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ipc/delivery_reader.h"
#include "ipc/notice_ring.h"
#include "ipc/record_ring.h"

namespace lanecast::ipc {

// The version of everything in ipc/: the files' layout, the rings' format,
// the socket's messages. Both sides must agree exactly.
inline constexpr uint32_t kFormatVersion = 2;
inline constexpr uint64_t kClientMagic = 0x326e6c63636e6c6cULL;  // "llnccln2"

enum class Role : uint8_t { Publisher = 1, Subscriber = 2, Both = 3 };
inline bool publishes(Role r) { return static_cast<uint8_t>(r) & static_cast<uint8_t>(Role::Publisher); }
inline bool subscribes(Role r) { return static_cast<uint8_t>(r) & static_cast<uint8_t>(Role::Subscriber); }
inline bool valid_role(uint8_t r) { return r >= 1 && r <= 3; }

struct alignas(64) ClientHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t client_id;
  uint32_t rank;          // the daemon's member
  uint32_t group_size;
  uint8_t role;
  uint8_t reserved[7];
  uint64_t file_bytes;
  uint64_t notice_offset, publish_offset, delivery_offset;  // from the file's start (0: none)
  uint64_t publish_capacity, delivery_capacity;             // the rings' record bytes (0: none)
  uint64_t max_message;   // what the daemon's stream takes from this client
  // Written by the daemon, read by the application.
  alignas(64) std::atomic<uint64_t> published{0};   // its messages the daemon put on the stream
  std::atomic<uint64_t> delivered{0};               // messages the daemon put in its delivery ring
  std::atomic<uint32_t> evicted{0};                 // 1: too slow, or its memory made no sense
  std::atomic<uint32_t> daemon_stopping{0};
  std::atomic<uint64_t> heartbeat_ns{0};            // the daemon's loop, CLOCK_MONOTONIC
};
static_assert(std::atomic<uint32_t>::is_always_lock_free);
static_assert(sizeof(ClientHeader) % 64 == 0);

// Ring sizes a client may have: a ring holds at least a few records, and
// the daemon's --max-ring bounds it from above (at most kMaxRing).
inline constexpr uint64_t kMinRing = 4096;
inline constexpr uint64_t kMaxRing = RecordRing::kMaxCapacity;

struct ClientLayout {
  Role role = Role::Both;
  uint64_t publish_capacity = 0, delivery_capacity = 0;  // rounded up to 8; 0: no such ring
  uint64_t notice = 0, publish = 0, delivery = 0;        // offsets (0: no such ring)
  uint64_t bytes = 0;                                    // the whole file
};
// The file for `role` with rings of these sizes (each kMinRing..kMaxRing
// when the role has the ring, ignored otherwise); nullopt outside.
std::optional<ClientLayout> client_layout(Role role, uint64_t publish_bytes, uint64_t delivery_bytes);

// What the daemon tells a client in its header besides the layout.
struct ClientIdentity {
  uint32_t client_id = 0, rank = 0, group_size = 0;
  uint64_t max_message = 0;
};

// The daemon's side of a client's file: views made from the layout the
// daemon holds, never from the file.
struct DaemonView {
  ClientHeader* header = nullptr;  // the daemon writes its fields, never reads them
  NoticeRing notices;              // producer
  RecordRing publish;              // consumer (invalid unless the role publishes)
  RecordRing delivery;             // producer (invalid unless the role subscribes)
};
// Lays a fresh client file out in `map` (layout.bytes bytes, zeroed, 64-aligned).
DaemonView make_client_file(void* map, const ClientLayout& layout, const ClientIdentity& id);

// The application's side of a file the daemon made.
struct ClientView {
  ClientHeader* header = nullptr;  // for its atomics; the rest was read once, here
  ClientLayout layout;
  ClientIdentity id;
  NoticeRing notices;              // consumer
  RecordRing publish;              // producer
  DeliveryReader delivery;         // consumer
};
// Checks the file the daemon sent (`bytes`: the mapping's size) against the
// layout its header's role and capacities imply; nullopt and `why` when
// anything disagrees or does not fit.
std::optional<ClientView> open_client_file(void* map, size_t bytes, std::string* why);

}  // namespace lanecast::ipc
