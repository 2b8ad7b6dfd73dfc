// Per-node counters: every frame a node drops is counted under its reason,
// every copy of payload bytes is counted, and every counter here is
// incremented somewhere (a counter nothing increments would prove nothing).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "engine/node/channels.h"
#include "engine/node/fail_stop.h"
#include "engine/node/stash.h"
#include "engine/node/tx_lanes.h"
#include "engine/runtime/counter.h"
#include "engine/runtime/stage_cycles.h"
#include "engine/stream/stream_counters.h"
#include "engine/wire/wire.h"

namespace lanecast::engine {

struct NodeCounters {
  Counter rx_frames;          // everything rx_burst returned
  Counter rx_data;            // data frames accepted by the channel
  Counter rx_acks;
  Counter rx_not_for_us;      // link header addressed elsewhere / foreign EtherType
  std::array<Counter, static_cast<size_t>(wire::Verdict::kCount)> rx_malformed;  // by verdict
  Counter rx_foreign_group;
  Counter rx_hello;           // bootstrap announcements, after this member's group formed
  FailStop::Counters fail_stop;  // fail-stop groups' notices (fail_stop.h)
  Counter rx_wrong_epoch;     // this group's frames of another incarnation (a member's earlier life)
  Counter rx_bad_source;      // source rank outside the group, or ourselves
  Counter rx_spoofed;         // source rank not sent from that rank's link address
  // A group with a key (engine/auth/): frames refused by their seals.
  Counter rx_unsealed;        // no seal at all
  Counter rx_bad_tag;         // a frame seal that does not verify: forged, damaged, or another key or epoch
  Counter rx_replayed;        // a sealed frame whose counter its sender's window has seen: a replay
  Counter rx_stale_counter;   // a counter older than the window (a replay, or reordered very far)
  Counter rx_bad_payload_seal;  // a payload whose seal does not verify (bytes not the root's or publisher's)
  Counter rx_bad_ack;         // acks for frames never sent
  Counter rx_duplicate;       // channel-level duplicates (re-acked)
  Counter rx_out_of_window;
  Counter rx_stale_op;        // data of an operation already finished here
  Counter rx_early_dropped;   // data of an operation too far ahead; sender retries
  Stash::Counters stash;      // frames of a later operation kept for it, and those it never used (stash.h)
  Counter rx_bad_segment;     // header disagrees with the operation's plan
  Counter rx_abandoned;       // frames of a broadcast that failed at its sender
  Counter rx_signals;         // machine signals accepted (mcast_chain's synchronisation)
  Counter rx_datagrams;       // multicast copies used by the running broadcast
  Counter rx_datagram_stale;  // multicast copies of a finished broadcast, dropped
  Counter rx_datagram_early;  // multicast copies of a broadcast not started here and not stashed (full), dropped
  Counter tx_data;
  std::array<Counter, 4> tx_data_lane;  // first transmissions per lane
  Counter tx_retransmits;     // data and signals sent again
  // Rate control (rate_control.h), every lane's moves and lane 0's rate now.
  Counter rate_raised;        // rounds whose delay stayed under the target: rate up
  Counter rate_cut_delay;     // rounds whose least delay was over the target: rate down
  Counter rate_cut_loss;      // losses (holes, timeouts) that cut the rate, at most one per round
  Counter rate_cut_undone;    // timeouts' cuts undone: the timeout proved spurious
  Counter rate_cut_window;    // rounds whose full windows sent less than the rate: rate down to what acks let go
  Counter rate_mbit;          // lane 0's rate, Mbit/s (a level, not a count)
  Counter rate_target_us;     // lane 0's tolerated queueing delay, us (a level: over the default = competing)
  Channels::Counters channels;  // runs exhausted, fast retransmits, RTO timeouts (channels.h)
  Counter timers_deferred;    // turns due timers waited: arrivals unread, or the core stalled
  Counter tx_acks;
  Counter tx_abandoned;       // in-flight frames of a failed broadcast, re-sent empty
  Counter tx_fillers;         // numbers the receiver lacks though an ack (forged) covered them, sent empty
  Counter tx_signals;         // machine signals, first transmissions
  Counter tx_datagrams;       // multicast frames (one per member when emulated)
  Counter tx_datagrams_dropped;  // multicasts beyond one per segment, not sent
  Counter tx_mcast_emulated;  // multicasts sent as one datagram per member (no multicast on the port)
  Counter timers_fired;       // machine timers (mcast_chain's root delay)
  Counter tx_alloc_failures;  // header mbuf pool empty: retried next iteration
  TxLanes::Counters tx_lanes;  // its pacers' waits, frames a full port left (tx_lanes.h)
  Counter tx_flatten_bytes;   // payload bytes copied to flatten frames for a port without chains
  Counter root_copy_bytes;    // root: user buffer -> frames (the one copy a send needs)
  Counter delivered_bytes;    // bytes made part of the result (copied once, on arrival)
  Counter ops_completed;
  Counter ops_failed;
  stream::StreamCounters streams;  // the streams' slice (engine/stream/stream_counters.h)

  uint64_t rx_malformed_total() const {
    uint64_t t = 0;
    for (const auto& c : rx_malformed) t += c.get();
    return t;
  }

  [[no_unique_address]] StageCycles stages;  // cycles per stage, profiling builds only (stage_cycles.h)

  // Visits every counter by name (for printing and JSON).
  template <typename F>
  void for_each(F&& f) const {
    f("rx_frames", rx_frames.get());
    f("rx_data", rx_data.get());
    f("rx_acks", rx_acks.get());
    f("rx_not_for_us", rx_not_for_us.get());
    for (size_t i = 1; i < rx_malformed.size(); ++i)
      f(std::string_view(wire::verdict_name(static_cast<wire::Verdict>(i))), rx_malformed[i].get());
    f("rx_foreign_group", rx_foreign_group.get());
    f("rx_hello", rx_hello.get());
    f("rx_failure_notices", fail_stop.rx_notices.get());
    f("rx_after_broken", fail_stop.rx_after_broken.get());
    f("tx_failure_notices", fail_stop.tx_notices.get());
    f("rx_wrong_epoch", rx_wrong_epoch.get());
    f("rx_bad_source", rx_bad_source.get());
    f("rx_spoofed", rx_spoofed.get());
    f("rx_unsealed", rx_unsealed.get());
    f("rx_bad_tag", rx_bad_tag.get());
    f("rx_replayed", rx_replayed.get());
    f("rx_stale_counter", rx_stale_counter.get());
    f("rx_bad_payload_seal", rx_bad_payload_seal.get());
    f("rx_bad_ack", rx_bad_ack.get());
    f("rx_duplicate", rx_duplicate.get());
    f("rx_out_of_window", rx_out_of_window.get());
    f("rx_stale_op", rx_stale_op.get() + stash.stale.get());
    f("rx_early_dropped", rx_early_dropped.get());
    f("rx_stashed", stash.kept.get());
    f("rx_bad_segment", rx_bad_segment.get());
    f("rx_abandoned", rx_abandoned.get());
    f("rx_signals", rx_signals.get());
    f("rx_datagrams", rx_datagrams.get());
    f("rx_datagram_stale", rx_datagram_stale.get());
    f("rx_datagram_early", rx_datagram_early.get());
    f("tx_data", tx_data.get());
    static constexpr std::string_view kLaneNames[] = {"tx_data_lane0", "tx_data_lane1",
                                                      "tx_data_lane2", "tx_data_lane3"};
    for (size_t l = 0; l < tx_data_lane.size(); ++l) f(kLaneNames[l], tx_data_lane[l].get());
    f("tx_retransmits", tx_retransmits.get());
    f("rate_raised", rate_raised.get());
    f("rate_cut_delay", rate_cut_delay.get());
    f("rate_cut_loss", rate_cut_loss.get());
    f("rate_cut_undone", rate_cut_undone.get());
    f("rate_cut_window", rate_cut_window.get());
    f("rate_mbit", rate_mbit.get());
    f("rate_target_us", rate_target_us.get());
    f("fast_retransmits", channels.fast_retransmits.get());
    f("rto_timeouts", channels.rto_timeouts.get());
    f("rto_spurious", channels.rto_spurious.get());
    f("timers_deferred", timers_deferred.get());
    f("tx_acks", tx_acks.get());
    f("tx_abandoned", tx_abandoned.get());
    f("tx_fillers", tx_fillers.get());
    f("tx_signals", tx_signals.get());
    f("tx_datagrams", tx_datagrams.get());
    f("tx_datagrams_dropped", tx_datagrams_dropped.get());
    f("tx_mcast_emulated", tx_mcast_emulated.get());
    f("timers_fired", timers_fired.get());
    f("tx_alloc_failures", tx_alloc_failures.get());
    f("tx_paced", tx_lanes.paced.get());
    f("tx_ring_full", tx_lanes.ring_full.get());
    f("tx_flatten_bytes", tx_flatten_bytes.get());
    f("owed_runs_exhausted", channels.owed_runs_exhausted.get());
    f("root_copy_bytes", root_copy_bytes.get());
    f("delivered_bytes", delivered_bytes.get());
    f("ops_completed", ops_completed.get());
    f("ops_failed", ops_failed.get());
    f("stream_msgs_published", streams.stream_msgs_published.get());
    f("stream_batches_formed", streams.stream_batches_formed.get());
    f("stream_batches_tx", streams.stream_batches_tx.get());
    f("stream_batches_rx", streams.stream_batches_rx.get());
    f("stream_msgs_delivered", streams.stream_msgs_delivered.get());
    f("stream_delivery_full", streams.stream_delivery.full.get());
    f("stream_reports_tx", streams.stream_reports_tx.get());
    f("stream_reports_rx", streams.stream_reports_rx.get());
    f("stream_multicasts_tx", streams.stream_multicasts_tx.get());
    f("stream_multicasts_rx", streams.stream_multicasts_rx.get());
    f("stream_repairs", streams.stream_repairs.get());
    f("rx_stream_duplicate", streams.rx_stream_duplicate.get());
    f("rx_stream_ahead", streams.rx_stream_ahead.get());
    f("rx_stream_bad", streams.rx_stream_bad.get());
    f("rx_stream_given_up", streams.rx_stream_given_up.get());
    f("rx_stream_child_failed", streams.rx_stream_child_failed.get());
    f("rx_stream_contradicted", streams.rx_stream_contradicted.get());
    f("stream_gap_timeouts", streams.stream_gap_timeouts.get());
    f("stream_evicted", streams.stream_evicted.get());
    f("stream_batches_skipped", streams.stream_batches_skipped.get());
    f("stream_evictions_heard", streams.stream_evictions_heard.get());
  }
};

}  // namespace lanecast::engine
