// When replay sends each packet, relative to the start of its loop: the
// capture's own spacing divided by --speed, a fixed packet rate, a bit rate
// over the packets' bytes, or nothing (--topspeed). Computed once, before
// the clock starts.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/replay/pcap_source.h"

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

// Offsets in ns from the loop's start, one per packet (all 0 at top speed).
inline std::vector<uint64_t> offsets_of(const PcapSource& s, const Timing& t) {
  std::vector<uint64_t> out(s.packets.size(), 0);
  if (s.packets.empty() || t.kind == Timing::TopSpeed) return out;
  if (!(t.value > 0)) throw std::invalid_argument("replay: the rate or speed must be positive");
  const uint64_t first = s.packets[0].ts_ns;
  double bits = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    double ns = 0;
    switch (t.kind) {
      case Timing::Speed: {
        // A capture's time stamps may step back (several interfaces): never
        // schedule a packet before the one ahead of it.
        const uint64_t ts = std::max(s.packets[i].ts_ns, first);
        ns = static_cast<double>(ts - first) / t.value;
        break;
      }
      case Timing::Pps: ns = static_cast<double>(i) * 1e9 / t.value; break;
      case Timing::Mbps:
        ns = bits * 1e3 / t.value;  // bits / (Mbit/s) = us
        bits += 8.0 * s.packets[i].len;
        break;
      case Timing::TopSpeed: break;
    }
    out[i] = static_cast<uint64_t>(ns);
    if (i > 0 && out[i] < out[i - 1]) out[i] = out[i - 1];
  }
  return out;
}

}  // namespace lanecast::replay
