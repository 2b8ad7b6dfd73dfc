// The group file of a testbed run: one member per node namespace, each on
// its node's interfaces (v0, and w0 for lane 1). Written by `bench
// --testbed`; every member process reads the same file.
#pragma once

#include <cstdint>
#include <string>

#include "apps/testbed/testbed_spec.h"

namespace lanecast::apps::testbed {

// A group's multicast settings as bench and the testbed pass them on
// (GroupOptions / the group file's multicast and mcast_* keys).
struct MulticastSettings {
  bool enabled = true;        // real multicast where the ports can join; false: emulated
  double root_delay_us = 0;   // mcast_chain's root delay
  uint64_t sync_seed = 0;     // mcast_chain's randomized synchronisation (0: off)
  bool repair_on_request = true;  // mcast_chain repairs on request (else the paper's ring)
  double loss = 0;            // share of multicast frames each receiver drops
  uint64_t loss_seed = 1;
};

struct MemberGroup {
  std::string name;
  uint32_t id = 1;
  uint64_t max_message = 0;
  double peer_timeout_ms = 3000;
  double port_rate_mbit = 0;   // pacing per lane; the links' rate
  uint32_t port_overhead = 0;  // tbf counts the frame alone
  bool rate_control = false;   // each lane finds its rate (port_rate_mbit, if any, its ceiling)
  uint32_t window = 0;         // 0: the group file's default
  uint32_t segment = 0;        // 0: from the MTU
  bool xdp = false;            // af_xdp ports instead of af_packet
  MulticastSettings mcast;
  uint32_t stream_fanout = 0, stream_window = 0;  // 0: the group file's defaults
  uint64_t stream_window_bytes = 0;
  bool stream_multicast = false;
  std::string key_file;  // the group's secret (an absolute path), or none
};

// The af_packet PMD's ring geometry for frames of `mtu` bytes, as devargs
// (",framesz=...,blocksz=...,framecnt=..."), or "" when its defaults hold them.
std::string af_packet_ring_devargs(uint32_t mtu);

// The devargs of lane `lane` of a node: af_packet with qdisc_bypass=0 (its
// frames pass the node's tbf), or af_xdp on queue 0.
std::string lane_devargs(uint32_t lane, uint32_t mtu, bool xdp);

// The TOML text (config/groups/README.md) for testbed `t`.
std::string member_group_toml(const TestbedSpec& t, const MemberGroup& g);

}  // namespace lanecast::apps::testbed
