#include "drivers/loss/multicast_loss_port.h"

#include <rte_mbuf.h>

#include <cmath>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::drivers {
namespace {

uint64_t threshold_of(double loss) {
  if (!(loss >= 0 && loss < 1)) throw std::invalid_argument("multicast loss must be in [0, 1)");
  return static_cast<uint64_t>(std::ldexp(loss, 64));  // loss x 2^64; < 2^64 since loss < 1
}

}  // namespace

MulticastLossPort::MulticastLossPort(std::unique_ptr<Port> inner, double loss, uint64_t seed)
    : ForwardingPort(std::move(inner)), threshold_(threshold_of(loss)), rng_(seed) {}

MulticastLossPort::MulticastLossPort(Port& inner, double loss, uint64_t seed)
    : ForwardingPort(inner), threshold_(threshold_of(loss)), rng_(seed) {}

uint16_t MulticastLossPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  const uint16_t got = in_.rx_burst(lane, frames, max);
  if (threshold_ == 0) return got;
  uint16_t kept = 0;
  for (uint16_t i = 0; i < got; ++i) {
    const auto* dst = rte_pktmbuf_mtod(frames[i], const uint8_t*);
    const bool multicast = frames[i]->data_len >= 6 && ethernet::is_group(dst) && !ethernet::is_broadcast(dst);
    if (multicast && rng_() < threshold_) {
      rte_pktmbuf_free(frames[i]);
      ++lost_;
      continue;
    }
    frames[kept++] = frames[i];
  }
  return kept;
}

}  // namespace lanecast::drivers
