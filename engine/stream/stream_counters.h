// A member's streams' counters: the slice of the node's counters the
// streams write (NodeCounters::streams; their names in the node's listing
// are these fields' names). One writer, the polling core; any thread reads.
#pragma once

#include "engine/runtime/counter.h"
#include "engine/stream/delivery_target.h"

namespace lanecast::engine::stream {

struct StreamCounters {
  Counter stream_msgs_published;  // messages the publisher's core put in batches
  Counter stream_batches_formed;  // batches the publisher made
  Counter stream_batches_tx;      // batches sent to a child, first transmissions
  Counter stream_batches_rx;      // batches accepted from the parent
  Counter stream_msgs_delivered;  // messages delivered here, in order
  DeliveryTarget::Counters stream_delivery;  // times delivery waited for the application (delivery_target.h)
  Counter stream_reports_tx;
  Counter stream_reports_rx;
  Counter stream_multicasts_tx;   // batches sent once to the group address (streams over multicast)
  Counter stream_multicasts_rx;   // batches taken from the group address
  Counter stream_repairs;         // batches sent again to a member over its channel after a multicast
  Counter rx_stream_duplicate;    // a batch held already (acknowledged again)
  Counter rx_stream_ahead;        // a batch past the window (not acknowledged)
  Counter rx_stream_bad;          // stream frames that break the format, or from outside the tree
  Counter rx_stream_given_up;     // the parent gave up a batch this member lacks: its streams fail
  Counter rx_stream_child_failed; // a child's streams failed (it says so): this member's fail too
  Counter rx_stream_contradicted; // a child's report lacks batches let go here; for 5 ms on end: streams fail
  Counter stream_gap_timeouts;    // a gap no retransmission filled within the peer timeout: streams fail
  Counter stream_evicted;         // this member left a stream: its delivery ring stayed full past evict_after_ms
  Counter stream_batches_skipped; // batches it then let pass without delivering them
  Counter stream_evictions_heard; // other members that left a stream so
};

}  // namespace lanecast::engine::stream
