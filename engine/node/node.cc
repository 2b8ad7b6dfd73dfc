// Node: set-up and the poll loop.
#include "engine/node/node.h"

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include <algorithm>
#include <stdexcept>

#include "drivers/wake.h"
#include "engine/auth/frame_auth.h"
#include "engine/node/rx_prefetch.h"

namespace lanecast::engine {

using algos::Rank;

namespace {

// Runs enough for every shape of owed work a broadcast makes (owed_runs.h):
// a run per segment in flight through this node, a few per channel, and
// slack. Streams add their share when they open (grow_runs).
uint32_t owed_runs_for(uint64_t max_segments, uint64_t channels) {
  const uint64_t n = 2 * max_segments + 4 * channels + 1024;
  if (n > (1u << 28)) throw std::invalid_argument("node: message limit and group too large for the owed runs");
  return static_cast<uint32_t>(n);
}

// What the port's filter is shown for a frame shorter than a link header:
// zeros (refused), never bytes past the frame's end. No port receives a
// longer link header (the constructor checks; a UD datagram's GRH is 40).
constexpr uint8_t kNoLink[64] = {};

uint32_t slabs_for(const NodeConfig& cfg) {
  const uint64_t channels = uint64_t{cfg.nodes - 1} * cfg.lanes;
  const uint64_t want = cfg.active_channels ? cfg.active_channels : std::min<uint64_t>(32, channels);
  return static_cast<uint32_t>(std::max<uint64_t>(1, std::min<uint64_t>(want, std::max<uint64_t>(channels, 1))));
}

uint64_t max_segments_of(const NodeConfig& cfg) {
  if (cfg.segment_bytes == 0) throw std::invalid_argument("node: segment size must be positive");
  return (cfg.max_message_bytes + cfg.segment_bytes - 1) / cfg.segment_bytes;
}

// Nodes made by hand (tests) may leave the streams' fanout to the default
// tree (the binary one). Streams over multicast report in a star: every
// member's parent is the publisher.
NodeConfig with_default_fanout(NodeConfig cfg) {
  if (cfg.streams.multicast) cfg.streams.fanout = std::max<uint32_t>(1, cfg.nodes - 1);
  if (cfg.streams.fanout == 0) cfg.streams.fanout = 2;
  return cfg;
}

// What the streams need of the configuration.
stream::Streams::Config streams_config_of(const NodeConfig& cfg) {
  return {cfg.rank, cfg.nodes, cfg.segment_bytes, cfg.max_message_bytes, cfg.peer_timeout_ns, cfg.streams,
          wire::Origin{cfg.group_id, cfg.epoch, cfg.rank}};
}

uint32_t segments_held_of(const NodeConfig& cfg) {
  const uint64_t n = max_segments_of(cfg);
  if (n >= (1u << 28)) throw std::invalid_argument("node: message limit too large");
  return static_cast<uint32_t>(n);
}

}  // namespace

Node::Node(const NodeConfig& cfg, drivers::Port& port, const Pools& pools, std::vector<drivers::PeerAddress> peers)
    : cfg_(with_default_fanout(cfg)),
      port_(port),
      caps_(port.caps()),
      pools_(pools),
      frames_(port, pools.header, pools.payload, wire::Origin{cfg.group_id, cfg.epoch, cfg.rank}, cfg.auth != nullptr,
              {counters_.tx_alloc_failures, counters_.tx_flatten_bytes}),
      rx_link_bytes_(port.rx_link_header_bytes()),
      sealed_link_bytes_(port.sealed_link_bytes()),
      groups_(port),
      acks_(cfg.nodes * cfg.lanes, cfg.ack_every ? cfg.ack_every : std::max<uint32_t>(1, cfg.window / 4),
            cfg.ack_delay_ns),
      peers_(cfg.nodes),
      channels_(cfg.nodes, cfg.lanes, cfg.window, cfg.rtt, slabs_for(cfg),
                owed_runs_for(max_segments_of(cfg), uint64_t{cfg.nodes} * cfg.lanes), counters_.channels),
      tx_lanes_(cfg.lanes, port.link_header_bytes(), cfg.pace_overhead_bytes, counters_.tx_lanes),
      fail_stop_(cfg.fail_stop, cfg.nodes, cfg.rank, counters_.fail_stop),
      broadcast_(cfg_, {broadcast_link_, frames_, counters_, box_, fail_stop_, caps_, addrs_, groups_.addresses(), pools.payload},
                 segments_held_of(cfg)),
      streams_(streams_config_of(cfg_), streams_link_, counters_.streams,
               {counters_.root_copy_bytes, counters_.delivered_bytes, counters_.tx_alloc_failures,
                counters_.rx_malformed[static_cast<size_t>(wire::Verdict::BadPayloadCrc)]}) {
  if (cfg.nodes == 0 || cfg.rank >= cfg.nodes) throw std::invalid_argument("node: rank outside the group");
  if (peers.size() != cfg.nodes) throw std::invalid_argument("node: need one address per member");
  if (pools.payload == nullptr || pools.header == nullptr) throw std::invalid_argument("node: mempools missing");
  if (cfg.auth) {
    auth_ = std::make_unique<auth::FrameAuth>(*cfg.auth, cfg.rank, cfg.nodes);
    tx_lanes_.seal_with(auth_.get(), sealed_link_bytes_);
  }
  // Signed: a pool whose room is less than the headroom has none for headers.
  const int64_t header_room = int64_t{rte_pktmbuf_data_room_size(pools.header)} - RTE_PKTMBUF_HEADROOM;
  const uint32_t link_bytes = frames_.link_bytes(), hdr_data = frames_.data_header();
  if (rx_link_bytes_ > sizeof kNoLink)
    throw std::invalid_argument("node: port " + port.name() + " receives a " + std::to_string(rx_link_bytes_) +
                                "-byte link header, more than the " + std::to_string(sizeof kNoLink) + " it may have");
  if (sealed_link_bytes_ > link_bytes || sealed_link_bytes_ > rx_link_bytes_)
    throw std::invalid_argument("node: port " + port.name() + " seals more link header than it has");
  if (header_room < link_bytes + hdr_data)
    throw std::invalid_argument("node: header buffers of " + std::to_string(header_room) + " bytes cannot hold a " +
                                std::to_string(link_bytes + hdr_data) + "-byte frame header");
  const uint64_t frame = uint64_t{link_bytes} + hdr_data + cfg.segment_bytes;
  if (frame > port.max_frame_bytes())
    throw std::invalid_argument("segment of " + std::to_string(cfg.segment_bytes) + " bytes makes " +
                                std::to_string(frame) + "-byte frames; port " + port.name() + " carries at most " +
                                std::to_string(port.max_frame_bytes()));
  if (cfg.lanes == 0 || cfg.lanes > kMaxLanes || cfg.lanes > port.lanes())
    throw std::invalid_argument("node: " + std::to_string(cfg.lanes) + " lanes requested, port " + port.name() +
                                " has " + std::to_string(port.lanes()) + " (at most " + std::to_string(kMaxLanes) + ")");
  if (!cfg.hypercube_order.empty()) {
    std::vector<bool> seen(cfg.nodes, false);
    for (algos::Rank r : cfg.hypercube_order) {
      if (cfg.hypercube_order.size() != cfg.nodes || r >= cfg.nodes || seen[r])
        throw std::invalid_argument("node: the hypercube order must list every rank once");
      seen[r] = true;
    }
  }
  if (!cfg.site_of_rank.empty() && cfg.site_of_rank.size() != cfg.nodes)
    throw std::invalid_argument("node: need one site per member");
  // The port prepares what it needs to reach the members (address handles
  // on verbs) and to send from the group's buffers (memory registration).
  for (rte_mempool* pool : {pools.payload, pools.header})
    if (std::string why = port.register_pool(pool); !why.empty())
      throw std::runtime_error("port " + port.name() + ": " + why);
  if (std::string why = port.learn_peers(peers.data(), peers.size()); !why.empty())
    throw std::runtime_error("port " + port.name() + ": " + why);
  addrs_ = std::move(peers);
  caps_.multicast = groups_.join(cfg_, caps_.multicast);  // on any refusal, emulated
  streams_.connect({auth_.get(), frames_.seal_flag(), frames_.data_header(), frames_.link_bytes(), pools.payload, addrs_.data(),
                    groups_.addresses().empty() ? nullptr : &groups_.addresses()[0]});
  broadcast_.connect(auth_.get(), peers_.heard_ns());

  // At least two frames. A found rate's bursts at most 16: the rate is
  // learned and may sit above the path's (by half, at 1000 Mbit/s on
  // 2 shared CPUs), and a burst of 200 us at such a rate is a queue at the
  // link. 16 frames are what 200 us of 1000 Mbit/s hold; with
  // RateControl::follow_acks() a found rate carried 0.91-0.95 of a told
  // one there, 0.88-0.89 without either (docs/engine.md, "Finding the rate").
  tx_lanes_.burst_rule(cfg.pace_burst_bytes, 2 * (frame + 24), cfg.rate_control ? 16 * (frame + 24) : UINT64_MAX);
  if (cfg.rate_control) {
    // From below: slow start finds a faster link in a few rounds, and a
    // slower one is not flooded first.
    reliable::RateControl::Params p;
    p.ceiling_bps = cfg.lane_rate_bps ? cfg.lane_rate_bps : kRateControlCeilingBps;
    p.start_bps = std::min<uint64_t>(p.ceiling_bps, 100'000'000);
    p.floor_bps = std::min(p.floor_bps, p.ceiling_bps);
    rates_.start(cfg.lanes, p);
  } else if (cfg.lane_rate_bps > 0) {
    tx_lanes_.pace(cfg.lane_rate_bps);
  }
}

Node::~Node() {
  groups_.leave();
  streams_.free_batches();
  tx_lanes_.drop_queued();
}

Node::Footprint Node::footprint() const {
  Footprint f{};
  f.channels = channels_.list_bytes() + addrs_.capacity() * sizeof(drivers::PeerAddress) + acks_.footprint_bytes();
  f.flight = channels_.flight_bytes();
  f.owed = channels_.owed_bytes();
  const Broadcast::Bytes b = broadcast_.bytes();
  f.store = b.store;
  f.stash = b.stash;
  f.datagrams = b.multicasts;
  f.other = sizeof(Node) + b.arena + (auth_ ? auth_->bytes() : 0) +
            streams_.bytes();
  return f;
}

bool Node::submit(const Submission& s) {
  if (!broadcast_.submit(s)) return false;
  if (waker_ != nullptr) waker_->notify();
  return true;
}

void Node::attach_waker(drivers::Waker* w) {
  waker_ = w;
  if (w != nullptr) port_.attach_waker(w);
  else port_.detach_waker();
}

// ---------------------------------------------------------------- poll loop

uint32_t Node::poll(uint64_t now) {
  stage_begin(&counters_.stages);
  const uint32_t work = poll_rx(now) + poll_tx(now);
  stage_end();
  return work;
}

// Everything that arrived, and the timers: the machine decides what to send.
uint32_t Node::poll_rx(uint64_t now) {
  uint32_t work = 0;
  broadcast_.try_start(now);
  rte_mbuf* rx[kBurst];
  bool behind = false;  // a lane gave a full burst: more frames are waiting
  for (uint16_t lane = 0; lane < cfg_.lanes; ++lane) {
    const uint16_t n = port_.rx_burst(lane, rx, kBurst);
    stage_mark(Stage::kRxBurst);
    if (n > 0) counters_.rx_frames.add(n);  // a burst's frames counted at once, before any is handled
    // Whether each frame is addressed here: one call to the port per burst,
    // not a virtual call per frame.
    const uint8_t* links[kBurst];
    for (uint16_t i = 0; i < n; ++i)
      links[i] = rx[i]->data_len >= rx_link_bytes_ ? rte_pktmbuf_mtod(rx[i], const uint8_t*) : kNoLink;
    const uint64_t addressed = n > 0 ? port_.accepted(links, n) : 0;
    // The next frames' bytes, fetched by dependency (rx_prefetch.h).
    for (uint16_t i = 0; i < n; ++i) prefetch_chain_link(rx[i]);
    for (uint16_t i = 0; i < n && i < 2; ++i) prefetch_payload_descriptor(rx[i]);
    for (uint16_t i = 0; i < n; ++i) {
      if (i + 2 < n) prefetch_payload_descriptor(rx[i + 2]);
      if (i + 1 < n) {
        rte_prefetch0(links[i + 1]);  // the next frame's headers
        prefetch_frame_bytes(rx[i + 1]);
      }
      handle_frame(rx[i], (addressed >> i) & 1, now);
    }
    frames_.spent_headers().flush();  // the burst's header buffers back to their pools
    behind = behind || n == kBurst;
    work += n;
  }
  broadcast_.timer_due(now);
  resends_.after_rx(now, behind);  // the timers, when due and the member was looking
  stage_mark(Stage::kTimers);
  return work;
}

// What to send: acks, frames, one burst per lane; then the broadcast may end.
uint32_t Node::poll_tx(uint64_t now) {
  if (!fail_stop_.due().empty()) send_notices(now);
  send_acks(now);
  stage_mark(Stage::kAcksOut);
  streams_.pump(now);
  pump(now);
  stage_mark(Stage::kTxBuild);
  const uint32_t work = tx_lanes_.flush(port_);
  stage_mark(Stage::kTxBurst);
  broadcast_.end_turn(now, tx_lanes_.pending());
  stage_mark(Stage::kEndTurn);
  return work;
}

uint64_t Node::next_wakeup_ns() const {
  if (tx_lanes_.pending() || broadcast_.waiting() || !fail_stop_.due().empty() ||
      streams_.waiting())
    return 0;
  uint64_t at = std::min(resends_.due_ns(), streams_.due_ns());
  // Frames left unsent wait for a pacer (then it says when) or for acks to
  // open a window (then an arrival wakes the core): tx_lanes_.paced_until() == 0 is
  // not "due now", or a sender waiting for acks would never sleep.
  if ((channels_.owed() > 0 || broadcast_.multicasting() || channels_.resending()) && tx_lanes_.paced_until() != 0)
    at = std::min(at, tx_lanes_.paced_until());
  if (acks_.urgent()) return 0;
  at = std::min(at, acks_.next_deadline());
  at = std::min(at, broadcast_.timer_at());
  return std::min(at, port_.held_until_ns());
}

bool Node::pacer_holds(uint64_t now_ns) const {
  if (tx_lanes_.pending() || broadcast_.waiting() || acks_.urgent()) return false;
  return (channels_.owed() > 0 || broadcast_.multicasting() || channels_.resending()) && tx_lanes_.paced_until() > now_ns;
}

bool Node::arm_wakeup() {
  port_.arm_wakeup();
  return caps_.rx_wakeup && port_.caps().rx_wakeup;
}

void Node::disarm_wakeup() {
  port_.disarm_wakeup();
  resends_.napped();
}

}  // namespace lanecast::engine
