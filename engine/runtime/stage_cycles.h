// TSC cycles spent in each stage of the polling core's path, for profiling
// builds (meson -Dstage_cycles=true): forward_bench prints them per forwarded
// frame (docs/engine.md, "One core's cycles"). perf cannot split one thread
// that runs several members; these marks can, per member.
//
// A mark charges the cycles since the previous mark to its stage, so the
// stages of one poll() add up to its time, and a stage is wherever its marks
// are, across files. In a normal build kStageCycles is false and every mark
// compiles to nothing.
#pragma once

#include <cstdint>

#ifndef LANECAST_STAGE_CYCLES
#define LANECAST_STAGE_CYCLES 0
#endif

#if LANECAST_STAGE_CYCLES
#include <x86intrin.h>
#endif

namespace lanecast::engine {

inline constexpr bool kStageCycles = LANECAST_STAGE_CYCLES != 0;

enum class Stage : uint8_t {
  kRxBurst,     // the port's receive burst
  kChecks,      // link and lanecast headers: address, parse, header CRC, group, source
  kAcksIn,      // an ack: the send channel's books, flight entries freed
  kChannel,     // data: the receive channel's window, dedup, ack scheduling
  kPayload,     // the payload checked (CRC or seal) while copied into the buffer
  kMachine,     // the segment kept, the machine's step, its sends owed
  kTimers,      // the broadcast's timer, the resend scan
  kAcksOut,     // acks built and queued
  kTxBuild,     // owed sends made frames: header, chained payload, send books
  kTxBurst,     // the port's transmit burst
  kEndTurn,     // the broadcast's end of turn (completion)
  kCount
};

inline const char* stage_name(Stage s) {
  static const char* const names[] = {"rx_burst", "checks", "acks_in", "channel", "payload", "machine",
                                      "timers",   "acks_out", "tx_build", "tx_burst", "end_turn"};
  return names[static_cast<unsigned>(s)];
}

// Empty in a normal build: a member carries no bytes for it.
struct StageCycles {
#if LANECAST_STAGE_CYCLES
  uint64_t cycles[static_cast<unsigned>(Stage::kCount)] = {};
  uint64_t last = 0;
#endif
};

// The cycles charged to `stage` (0 in a normal build).
inline uint64_t stage_cycles([[maybe_unused]] const StageCycles& s, [[maybe_unused]] Stage stage) {
#if LANECAST_STAGE_CYCLES
  return s.cycles[static_cast<unsigned>(stage)];
#else
  return 0;
#endif
}

// The member whose poll() runs on this thread now (Node::poll sets it).
inline thread_local StageCycles* t_stages = nullptr;

inline void stage_begin([[maybe_unused]] StageCycles* s) {
#if LANECAST_STAGE_CYCLES
  t_stages = s;
  s->last = __rdtsc();
#endif
}

inline void stage_mark([[maybe_unused]] Stage stage) {
#if LANECAST_STAGE_CYCLES
  StageCycles* s = t_stages;
  if (s == nullptr) return;
  const uint64_t t = __rdtsc();
  s->cycles[static_cast<unsigned>(stage)] += t - s->last;
  s->last = t;
#endif
}

inline void stage_end() {
#if LANECAST_STAGE_CYCLES
  t_stages = nullptr;
#endif
}

}  // namespace lanecast::engine
