// LaneRates: each lane's controller told what its acks and timeouts say,
// and its pacer set to the controller's rate when that changes.
#include "engine/node/lane_rates.h"

namespace lanecast::engine {

void LaneRates::start(uint16_t lanes, const reliable::RateControl::Params& p) {
  rates_.assign(lanes, reliable::RateControl(p));
  lanes_.pace(rates_[0].rate_bps());  // every lane starts alike
  counters_.rate_mbit.set(rates_[0].rate_bps() / 1'000'000);
}

// The lane's pacer follows its controller's rate.
void LaneRates::adapt(uint16_t lane, const reliable::SendChannel::AckResult& r, uint64_t now) {
  reliable::RateControl& rc = rates_[lane];
  const uint64_t before = rc.rate_bps();
  uint64_t datagram_bytes = 0;
  const uint64_t sent = lanes_.take_sent_bytes(lane, &datagram_bytes);
  rc.on_sent(sent, datagram_bytes);
  rc.on_acked(r.newly_bytes);
  // First: a timeout this ack shows spurious gives its cut back before the
  // ack's delay sample is judged.
  if (r.spurious_timeout && rc.on_spurious_timeout()) counters_.rate_cut_undone.add();
  const uint64_t judged = rc.rate_bps();
  if (r.path_rtt_ns != 0 && rc.on_rtt(r.path_rtt_ns, now, r.forward_queue_ns)) {
    if (rc.rate_bps() > judged) counters_.rate_raised.add();
    else if (rc.followed_acks()) counters_.rate_cut_window.add();
    else counters_.rate_cut_delay.add();
  }
  if (r.new_holes && rc.on_loss(now)) counters_.rate_cut_loss.add();
  if (rc.rate_bps() != before) changed(lane, now);
  if (lane == 0) counters_.rate_target_us.set(rc.target_delay_ns() / 1000);
}

void LaneRates::timed_out(uint16_t lane, uint64_t now) {
  if (!rates_[lane].on_timeout(now)) return;
  counters_.rate_cut_loss.add();
  changed(lane, now);
}

void LaneRates::changed(uint16_t lane, uint64_t now) {
  lanes_.set_rate(lane, rates_[lane].rate_bps(), now);
  if (lane == 0) counters_.rate_mbit.set(rates_[0].rate_bps() / 1'000'000);
}

}  // namespace lanecast::engine
