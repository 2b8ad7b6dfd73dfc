// A stream's messages on the simulator's linear model: what `lanecast plan
// --stream` predicts - the message rate a publisher sustains to every member
// and each message's latency to each of them - for the engine's streams
// (docs/streams.md): batches down a k-ary tree (algos/topology/stream_tree.h)
// or one multicast per batch.
//
// The model (docs/algorithms.md, "Streams"):
//   - the publisher publishes `messages` messages of `message_bytes`, at
//     `rate` per second (0: all at once - the most the tree carries), each
//     with the 16-byte record head the engine puts before it;
//   - batching: the publisher cuts a batch whenever its port is free, from
//     every message published by then, up to a frame's payload (`segment`);
//     a message larger than that goes in pieces over consecutive batches.
//     (The engine's polling core cuts what its ring holds at each turn, and
//     a turn that sent frames took their time: under load batches fill.)
//   - a port sends each batch it holds to the node's children in turn, one
//     batch after the other, a copy taking d = (bytes + frame_overhead) / bw
//     + frame_time; a child holds the batch t0 + d after its copy started
//     (the broadcast simulator's uncontended frame) and forwards it at once;
//   - multicast: the publisher's port sends each batch once, and every
//     member holds it t0 + d after;
//   - a message is delivered where the batch holding its last piece is held.
// Not modelled: acks, reports and their port time; windows (the engine's
// 1024 batches rarely close); loss and repair; a shared switch. Each node's
// downlink carries only its parent's frames, so no two senders contend.
//
// Cost: one pass per member over the batches, and one histogram entry per
// message and member. Pure: the standard library only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algos/sim/latency_map.h"

namespace lanecast::algos::sim {

struct StreamModel {
  uint32_t nodes = 2;          // members, the publisher included
  uint32_t fanout = 2;         // k of the tree (1 = chain; nodes - 1 = linear)
  bool multicast = false;      // one copy per batch from the publisher
  uint32_t message_bytes = 64;
  double rate = 0;             // messages per second offered; 0 = all at once
  uint64_t messages = 100'000;
  uint32_t segment = 1428;     // batch payload bytes (record heads included)
  Picos t0 = 10 * kPicosPerMicro;
  double bytes_per_second = 1.25e9;
  uint32_t frame_overhead_bytes = 0;
  Picos frame_time = 0;        // fixed port time per frame
};

inline constexpr uint32_t kStreamRecordHead = 16;  // engine/stream/batch_format.h RecordHead
// The most work a model may ask for: members x batches at most (a batch per
// piece of every message), about 20 s per 10^9 on one core. Batches take
// 32 bytes each, so messages are bounded too.
inline constexpr uint64_t kStreamMaxWork = 10'000'000'000;
inline constexpr uint64_t kStreamMaxMessages = 10'000'000;

struct StreamPrediction {
  double msgs_per_second = 0;  // messages / (last delivery anywhere - first publish)
  Picos last_delivery = 0;
  uint64_t batches = 0;        // formed by the publisher
  uint64_t copies = 0;         // batches sent, every member's port (a multicast counts once)
  double messages_per_batch = 0;
  uint32_t depth = 0;          // the deepest member's hops from the publisher
  // Latency from publish to delivery over every (message, member) pair; the
  // percentiles within 1% (a log-linear histogram).
  Picos p50 = 0, p99 = 0, p999 = 0, max = 0;
  double mean = 0;
  uint64_t deliveries = 0;     // (message, member) pairs: messages x (nodes - 1)
};

// Throws std::invalid_argument when the model is out of range (no members,
// no messages, fanout 0, a segment that cannot hold a head and a byte).
StreamPrediction simulate_stream(const StreamModel& m);

// A model's problem, or "" (what simulate_stream throws).
std::string stream_model_problem(const StreamModel& m);

}  // namespace lanecast::algos::sim
