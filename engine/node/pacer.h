// Pacing one lane to its link's rate: a token bucket in bytes.
//
// On a kernel-backed port behind a rate-limited link (af_packet over a veth
// shaped by tbf), sending faster than the link fills the qdisc, then the
// PMD's transmit ring, and DPDK's af_packet PMD then waits in poll() for a
// free slot: the polling core stops for every other member it serves (30% of
// one core's samples in linear at 8 nodes). Frames beyond the qdisc's queue
// are dropped and must be sent again. Sending at the link's rate keeps both
// queues short. The bucket holds at most `burst` bytes, so a core that was
// busy elsewhere catches up by at most that much at once.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lanecast::engine {

class Pacer {
 public:
  Pacer() = default;
  // rate_bps = 0: no pacing.
  Pacer(uint64_t rate_bps, uint64_t burst_bytes)
      : ps_per_byte_(rate_bps ? 8'000'000'000'000 / rate_bps : 0), burst_ps_(burst_bytes * ps_per_byte_) {}

  bool on() const { return ps_per_byte_ != 0; }

  // A new rate (a rate controller's), the bytes saved kept as bytes.
  void set_rate(uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns) {
    refill(now_ns);
    const uint64_t saved = ps_per_byte_ ? tokens_ps_ / ps_per_byte_ : 0;
    ps_per_byte_ = rate_bps ? 8'000'000'000'000 / rate_bps : 0;
    burst_ps_ = burst_bytes * ps_per_byte_;
    tokens_ps_ = std::min(burst_ps_, saved * ps_per_byte_);
    last_ns_ = std::max(last_ns_, now_ns);
  }

  // Whether a frame of `bytes` may go at now_ns; if so, it is charged.
  bool take(uint64_t now_ns, uint32_t bytes) {
    if (!on()) return true;
    refill(now_ns);
    const uint64_t cost = bytes * ps_per_byte_;
    // A frame larger than what is saved may go once the bucket is full:
    // otherwise a burst below one frame would block forever.
    if (tokens_ps_ < cost && tokens_ps_ < burst_ps_) return false;
    tokens_ps_ = tokens_ps_ > cost ? tokens_ps_ - cost : 0;
    return true;
  }
  // When a frame of `bytes` may go (now_ns if it may already).
  uint64_t ready_at(uint64_t now_ns, uint32_t bytes) const {
    if (!on()) return now_ns;
    const uint64_t need = std::min<uint64_t>(uint64_t{bytes} * ps_per_byte_, burst_ps_);
    const uint64_t since = now_ns > last_ns_ ? now_ns - last_ns_ : 0;
    const uint64_t have = std::min(burst_ps_, tokens_ps_ + since * 1000);
    return have >= need ? now_ns : now_ns + (need - have + 999) / 1000;
  }

 private:
  void refill(uint64_t now_ns) {
    if (now_ns > last_ns_) {
      tokens_ps_ = std::min(burst_ps_, tokens_ps_ + (now_ns - last_ns_) * 1000);
      last_ns_ = now_ns;
    }
  }
  // Time in picoseconds: a byte at 100 Gbit/s is 80 ps.
  uint64_t ps_per_byte_ = 0;
  uint64_t burst_ps_ = 0;
  uint64_t tokens_ps_ = 0;
  uint64_t last_ns_ = 0;
};

}  // namespace lanecast::engine
