// Per-node counters: every frame a node drops is counted under its reason, and
// the copy counters make zero-copy forwarding checkable.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "engine/counter.h"
#include "engine/wire.h"

namespace lanecast::engine {

struct NodeCounters {
  Counter rx_frames;          // everything rx_burst returned
  Counter rx_data;            // data frames accepted by the channel
  Counter rx_acks;
  Counter rx_not_for_us;      // link header addressed elsewhere / foreign EtherType
  std::array<Counter, static_cast<size_t>(wire::Verdict::kCount)> rx_malformed;  // by verdict
  Counter rx_foreign_group;
  Counter rx_bad_source;      // source rank outside the group, or ourselves
  Counter rx_bad_ack;         // acks for frames never sent
  Counter rx_duplicate;       // channel-level duplicates (re-acked)
  Counter rx_out_of_window;
  Counter rx_stale_op;        // data of an operation already finished here
  Counter rx_early_dropped;   // data of an operation too far ahead; sender retries
  Counter rx_stashed;         // data of the next operation, kept for it
  Counter rx_bad_segment;     // header disagrees with the operation's plan
  Counter rx_abandoned;       // frames of a broadcast that failed at its sender
  Counter rx_signals;         // machine signals accepted (mcast_chain's synchronisation)
  Counter tx_data;
  std::array<Counter, 4> tx_data_lane;  // first transmissions per lane
  Counter tx_retransmits;
  Counter tx_acks;
  Counter tx_abandoned;       // in-flight frames of a failed broadcast, re-sent empty
  Counter tx_signals;         // machine signals, first transmissions
  Counter timers_fired;       // machine timers (mcast_chain's root delay)
  Counter tx_alloc_failures;  // header mbuf pool empty: retried next iteration
  Counter root_copy_bytes;    // root: user buffer -> frames (the one copy a send needs)
  Counter forward_copy_bytes; // forwarding: payload bytes copied; zero by design
  Counter payload_mbufs_allocated;  // only a root allocates payload buffers
  Counter delivered_bytes;    // frames -> user buffer
  Counter ops_completed;
  Counter ops_failed;

  uint64_t rx_malformed_total() const {
    uint64_t t = 0;
    for (const auto& c : rx_malformed) t += c.get();
    return t;
  }

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
    f("rx_bad_source", rx_bad_source.get());
    f("rx_bad_ack", rx_bad_ack.get());
    f("rx_duplicate", rx_duplicate.get());
    f("rx_out_of_window", rx_out_of_window.get());
    f("rx_stale_op", rx_stale_op.get());
    f("rx_early_dropped", rx_early_dropped.get());
    f("rx_stashed", rx_stashed.get());
    f("rx_bad_segment", rx_bad_segment.get());
    f("rx_abandoned", rx_abandoned.get());
    f("rx_signals", rx_signals.get());
    f("tx_data", tx_data.get());
    static constexpr std::string_view kLaneNames[] = {"tx_data_lane0", "tx_data_lane1",
                                                      "tx_data_lane2", "tx_data_lane3"};
    for (size_t l = 0; l < tx_data_lane.size(); ++l) f(kLaneNames[l], tx_data_lane[l].get());
    f("tx_retransmits", tx_retransmits.get());
    f("tx_acks", tx_acks.get());
    f("tx_abandoned", tx_abandoned.get());
    f("tx_signals", tx_signals.get());
    f("timers_fired", timers_fired.get());
    f("tx_alloc_failures", tx_alloc_failures.get());
    f("root_copy_bytes", root_copy_bytes.get());
    f("forward_copy_bytes", forward_copy_bytes.get());
    f("payload_mbufs_allocated", payload_mbufs_allocated.get());
    f("delivered_bytes", delivered_bytes.get());
    f("ops_completed", ops_completed.get());
    f("ops_failed", ops_failed.get());
  }
};

}  // namespace lanecast::engine
