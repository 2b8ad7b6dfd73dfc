// What the parts of a member's streams (streams.h) share: the group's
// values, the node's counters, the stream table, and the books a turn keeps
// of them all - the streams' share of the node's channels, the next time
// the core must look again, whether they failed. Streams owns it; its parts
// (Publishing, Receiving, StreamFrames) hold a reference to it, so each
// reads the same values without asking another part.
#pragma once

#include <cstdint>

#include "algos/types.h"
#include "drivers/port.h"
#include "engine/runtime/counter.h"
#include "engine/stream/stream_counters.h"
#include "engine/stream/stream_host.h"
#include "engine/stream/stream_table.h"
#include "engine/wire/wire.h"
#include "lanecast/group_spec.h"

struct rte_mempool;

namespace lanecast::engine::auth {
class FrameAuth;
}

namespace lanecast::engine::stream {

// The group's values the streams work with (the node's configuration).
struct StreamsConfig {
  algos::Rank rank = 0;
  uint32_t nodes = 1;
  uint32_t segment_bytes = 1400;
  uint64_t max_message_bytes = 16u << 20;
  uint64_t peer_timeout_ns = 3'000'000'000;
  lanecast::StreamOptions streams;  // fanout resolved (>= 1)
  wire::Origin origin;              // what every frame this member sends says of it
};

// The node's counters outside the streams' slice that stream work adds to.
struct StreamsSharedCounters {
  Counter& root_copy_bytes;    // a publisher's bytes copied into batches
  Counter& delivered_bytes;    // bytes copied into the delivery ring
  Counter& tx_alloc_failures;  // a payload buffer the pool did not have
  Counter& bad_payload_crc;    // a batch whose CRC does not match
};

// How this member's frames are made, known once the node set up its seals
// and joined its group addresses (Streams::connect).
struct StreamsFraming {
  auth::FrameAuth* auth = nullptr;  // a group with a key: the publisher seals its batches
  uint16_t seal_flag = 0;           // kFlagSealed with a key
  uint32_t hdr_data = wire::kDataHeaderBytes;  // a data frame's headers, with the seals
  uint16_t link_bytes = 0;
  rte_mempool* payload_pool = nullptr;  // batches are cut into its buffers
  const drivers::PeerAddress* addrs = nullptr;  // per rank
  // Lane 0's group address when the port multicasts (null: it does not,
  // and streams over multicast go down the tree like the others).
  const drivers::PeerAddress* group = nullptr;
};

// Repeat a report this often while a stream is busy, for this long after
// its last batch (and a failed member's notice to its parents, likewise).
inline constexpr uint64_t kRefreshNs = 1'000'000;
inline constexpr uint64_t kRefreshForNs = 50'000'000;

struct StreamsCore {
  StreamsConfig cfg;
  StreamHost& host;
  StreamCounters& counters;
  StreamsSharedCounters shared;
  StreamTable table;             // every stream's state by slot, in the order they opened (stream_table.h)
  uint64_t max_message = 0;      // the largest message a stream carries (Streams::max_message)
  // Its streams go to the group address (StreamOptions::multicast, and the
  // port multicasts).
  bool multicast = false;
  uint64_t owed = 0;             // owed items that are streams' batches
  uint64_t unacked = 0;          // frames in flight that are streams' batches
  uint64_t due_ns = UINT64_MAX;  // the next report, refresh or batch
  bool busy = false;             // a stream has work: keep the core polling
  bool failed = false;           // this member's streams stopped (Streams::fail)
};

}  // namespace lanecast::engine::stream
