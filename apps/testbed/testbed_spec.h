// The shaped testbed: what a cluster of N hosts on one switch (or, with two
// lanes, on two switches) looks like to lanecast and to MPI, built of network
// namespaces on one machine. This file names its parts; testbed_build.h
// builds and removes them.
//
//   NAMEn0..NAMEn(N-1)  a node each: veth v0 (MAC 02:00:00:01:hh:ll, IPv4
//                       10.78.0.(I+1)/24 for TCP programs such as MPI); with
//                       two lanes also w0, the same MAC, on the second switch
//   NAMEs               the switches: bridge br0 with ports b0..b(N-1), bp0,
//                       bp1; bridge br1 with c0..c(N-1) for lane 1
//   NAMEp               a probe pair p0, p1 on br0 (the line rate, measured)
//
// Every link is shaped both ways by a tbf root qdisc - the node's uplink on
// its end, the switch's downlink on the bridge port - at one rate, with a
// burst of 400 us of that rate (at least two frames). The switch's ports
// queue 5 ms, as a switch's buffers do; a node's uplink queues what a host
// NIC's transmit queue holds (txqueuelen, 1000 frames by default), so a
// sender that outruns its link waits in its own queue, as on a host, instead
// of losing frames there - TCP (Open MPI) backs off on a full local queue
// without a loss; a 5 ms uplink queue made it drop its own packets into
// retransmission timeouts (uplink_queue 0 builds that testbed). MTU M
// everywhere; IPv6 off in every namespace, so nothing but the programs'
// own frames crosses the links, and no bridge hands frames to iptables.
#pragma once

#include <cstdint>
#include <string>

namespace lanecast::apps::testbed {

inline constexpr uint32_t kMinNodes = 2;
inline constexpr uint32_t kMaxNodes = 254;  // IPv4 10.78.0.1 .. .254 in one /24
inline constexpr uint32_t kMaxLanes = 2;
inline constexpr uint32_t kMinMtu = 576, kMaxMtu = 9000;
inline constexpr uint32_t kMaxRateMbit = 100'000;
inline constexpr uint32_t kQueueMs = 5;
inline constexpr uint32_t kBurstUs = 400;
inline constexpr uint32_t kUplinkQueueFrames = 1000;  // a host NIC's txqueuelen
inline constexpr uint32_t kMaxUplinkQueueFrames = 100'000;
inline constexpr const char* kDefaultName = "lctb";

struct TestbedSpec {
  std::string name = kDefaultName;
  uint32_t nodes = 0;
  uint32_t lanes = 1;
  uint32_t rate_mbit = 200;
  uint32_t mtu = 1500;
  // Frames a node's uplink queues before tbf drops; 0: kQueueMs, as the switch.
  uint32_t uplink_queue = kUplinkQueueFrames;
};

// Throws UsageError naming the option at fault.
void check_name(const std::string& name);
void check(const TestbedSpec& s);

// Namespaces.
std::string node_ns(const std::string& name, uint32_t node);
std::string switch_ns(const std::string& name);
std::string probe_ns(const std::string& name);
// Whether a namespace of that name belongs to testbed `name`.
bool is_part_of(const std::string& name, const std::string& ns);

// Interfaces: a node's end of lane L (v0, w0), the switch's port facing node
// I on lane L (bI, cI), the bridge of lane L (br0, br1).
std::string node_iface(uint32_t lane);
std::string switch_port(uint32_t lane, uint32_t node);
std::string bridge(uint32_t lane);

// 02:00:00:KK:hh:ll: KK 1 for the nodes (every lane of node I has the same
// address: on separate switches there is no clash), 2 for the probe pair.
std::string node_mac(uint32_t node);
std::string probe_mac(uint32_t end);
std::string node_ipv4(uint32_t node);  // "10.78.0.(I+1)"

// tbf's burst: 400 us of the rate, but at least two frames of the MTU.
uint32_t burst_bytes(const TestbedSpec& s);
// A node's uplink queue in bytes (tbf's limit): uplink_queue frames of the
// MTU with their Ethernet header; 0 when it queues kQueueMs instead.
uint64_t uplink_limit_bytes(const TestbedSpec& s);
// The queues in words: "uplink 1000 frames (1514000 B), switch 5 ms".
std::string queues_text(const TestbedSpec& s);

}  // namespace lanecast::apps::testbed
