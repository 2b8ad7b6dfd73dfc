// How an application thread waits for a stream (a full window, an empty
// delivery ring) without a polling core's help: yield while the wait is
// young, then nap 20 us at a time. Header-only: the daemon's client library
// waits the same way without linking the engine.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

namespace lanecast::engine::stream {

inline void back_off(uint32_t tries) {
  if (tries < 64) std::this_thread::yield();
  else std::this_thread::sleep_for(std::chrono::microseconds(20));
}

}  // namespace lanecast::engine::stream
