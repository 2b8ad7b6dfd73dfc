// When replay sends each packet, relative to the start of its loop: the
// capture's own spacing divided by --speed, a fixed packet rate, a bit rate
// over the packets' bytes, or nothing (--topspeed). Computed packet by
// packet as the file is read, so nothing of the capture is held for it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace lanecast::replay {

struct Timing {
  enum Kind : uint8_t { Speed, TopSpeed, Pps, Mbps } kind = Speed;
  double value = 1;  // the speed factor, packets/s or Mbit/s
  std::string describe() const {
    switch (kind) {
      case Speed: return "--speed " + std::to_string(value) + " (the capture's spacing / " + std::to_string(value) + ")";
      case TopSpeed: return "--topspeed (as fast as the stream takes them)";
      case Pps: return "--pps " + std::to_string(value);
      case Mbps: return "--mbps " + std::to_string(value) + " (over the messages' bytes)";
    }
    return "";
  }
};

// Offsets in ns from the loop's start, one packet at a time (all 0 at top
// speed); restart() at every loop.
class Schedule {
 public:
  explicit Schedule(const Timing& t) : t_(t) {
    if (t.kind != Timing::TopSpeed && !(t.value > 0))
      throw std::invalid_argument("replay: the rate or speed must be positive");
  }
  void restart() {
    index_ = 0;
    bits_ = 0;
    last_ = 0;
  }
  uint64_t next(uint64_t ts_ns, uint32_t len) {
    double ns = 0;
    switch (t_.kind) {
      case Timing::Speed:
        // A capture's time stamps may step back (several interfaces): never
        // schedule a packet before the one ahead of it.
        if (index_ == 0) first_ = ts_ns;
        ns = static_cast<double>(std::max(ts_ns, first_) - first_) / t_.value;
        break;
      case Timing::Pps: ns = static_cast<double>(index_) * 1e9 / t_.value; break;
      case Timing::Mbps:
        ns = bits_ * 1e3 / t_.value;  // bits / (Mbit/s) = us
        bits_ += 8.0 * len;
        break;
      case Timing::TopSpeed: break;
    }
    ++index_;
    // Far-off time stamps at a tiny --speed: held within range, not overflowed.
    last_ = std::max(last_, static_cast<uint64_t>(std::min(ns, 0x1p62)));
    return last_;
  }

 private:
  Timing t_;
  uint64_t index_ = 0, first_ = 0, last_ = 0;
  double bits_ = 0;
};

}  // namespace lanecast::replay
