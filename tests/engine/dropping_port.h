// A test port decorator that loses chosen frames on their way in: those a
// predicate picks, from what the engine's parser reads of them (frames it
// cannot parse pass). The frames lost are counted.
#pragma once

#include <rte_mbuf.h>

#include <cstdint>
#include <functional>
#include <utility>

#include "engine/wire/wire.h"
#include "tests/engine/port_decorator.h"

namespace lanecast::engine::test {

class DroppingPort final : public PortDecorator {
 public:
  // Whether to lose this frame; `dropped` is how many were lost before it.
  using Pick = std::function<bool(const wire::Parsed& frame, uint32_t dropped)>;
  DroppingPort(drivers::Port& inner, Pick pick) : PortDecorator(inner), pick_(std::move(pick)) {}

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    const uint16_t n = in_.rx_burst(lane, frames, max);
    uint16_t kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
      wire::Parsed p;
      if (wire::parse(frames[i], in_.link_header_bytes(), &p) == wire::Verdict::Ok && pick_(p, dropped_)) {
        ++dropped_;
        rte_pktmbuf_free(frames[i]);
        continue;
      }
      frames[kept++] = frames[i];
    }
    return kept;
  }
  uint32_t dropped() const { return dropped_; }

 private:
  Pick pick_;
  uint32_t dropped_ = 0;
};

}  // namespace lanecast::engine::test
