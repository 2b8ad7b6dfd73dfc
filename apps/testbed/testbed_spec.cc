#include "apps/testbed/testbed_spec.h"

#include <algorithm>
#include <cstdio>

#include "apps/common/options.h"

namespace lanecast::apps::testbed {
namespace {

std::string mac(uint32_t kind, uint32_t index) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "02:00:00:%02x:%02x:%02x", kind & 0xff, (index >> 8) & 0xff, index & 0xff);
  return buf;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

// A lowercase letter and up to 8 more letters or digits: short enough for
// every interface name built from it, and no character a command line or a
// file name would treat specially.
void check_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 9 && name[0] >= 'a' && name[0] <= 'z' &&
                  std::all_of(name.begin(), name.end(), [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
  if (!ok) throw UsageError("--name '" + name + "': a lowercase letter, then up to 8 lowercase letters or digits");
}

void check(const TestbedSpec& s) {
  check_name(s.name);
  if (s.nodes < kMinNodes || s.nodes > kMaxNodes)
    throw UsageError("N = " + std::to_string(s.nodes) + ": a testbed has " + std::to_string(kMinNodes) + ".." +
                     std::to_string(kMaxNodes) + " nodes (their IPv4 addresses share one /24)");
  if (s.lanes < 1 || s.lanes > kMaxLanes)
    throw UsageError("--lanes " + std::to_string(s.lanes) + ": 1 or 2 (a switch each)");
  if (s.rate_mbit < 1 || s.rate_mbit > kMaxRateMbit)
    throw UsageError("--rate " + std::to_string(s.rate_mbit) + ": 1.." + std::to_string(kMaxRateMbit) + " Mbit/s");
  if (s.mtu < kMinMtu || s.mtu > kMaxMtu)
    throw UsageError("--mtu " + std::to_string(s.mtu) + ": " + std::to_string(kMinMtu) + ".." + std::to_string(kMaxMtu));
  if (s.uplink_queue > kMaxUplinkQueueFrames)
    throw UsageError("--uplink-queue " + std::to_string(s.uplink_queue) + ": 0.." +
                     std::to_string(kMaxUplinkQueueFrames) + " frames (0: " + std::to_string(kQueueMs) +
                     " ms, as the switch's ports)");
}

std::string node_ns(const std::string& name, uint32_t node) { return name + "n" + std::to_string(node); }
std::string switch_ns(const std::string& name) { return name + "s"; }
std::string probe_ns(const std::string& name) { return name + "p"; }

// A node's number as node_ns writes it (no leading zero, below kMaxNodes):
// tests/bench/shaped_testbed.sh's lctbn<pid> is not node <pid> of lctb.
bool is_part_of(const std::string& name, const std::string& ns) {
  if (ns.size() <= name.size() || ns.compare(0, name.size(), name) != 0) return false;
  const std::string rest = ns.substr(name.size());
  if (rest == "s" || rest == "p") return true;
  const std::string digits = rest.substr(1);
  return rest[0] == 'n' && all_digits(digits) && digits.size() <= 3 && (digits == "0" || digits[0] != '0') &&
         std::stoul(digits) < kMaxNodes;
}

std::string node_iface(uint32_t lane) { return lane == 0 ? "v0" : "w0"; }
std::string switch_port(uint32_t lane, uint32_t node) { return (lane == 0 ? "b" : "c") + std::to_string(node); }
std::string bridge(uint32_t lane) { return "br" + std::to_string(lane); }

std::string node_mac(uint32_t node) { return mac(1, node); }
std::string probe_mac(uint32_t end) { return mac(2, end); }
std::string node_ipv4(uint32_t node) { return "10.78.0." + std::to_string(node + 1); }

uint32_t burst_bytes(const TestbedSpec& s) {
  const uint64_t of_rate = uint64_t{s.rate_mbit} * kBurstUs / 8;  // Mbit/s x us / 8 = bytes
  const uint64_t two_frames = 2 * (uint64_t{s.mtu} + 14);
  return static_cast<uint32_t>(std::max(of_rate, two_frames));
}

uint64_t uplink_limit_bytes(const TestbedSpec& s) { return uint64_t{s.uplink_queue} * (s.mtu + 14); }

std::string queues_text(const TestbedSpec& s) {
  const std::string sw = "switch ports " + std::to_string(kQueueMs) + " ms";
  if (s.uplink_queue == 0) return "uplinks " + std::to_string(kQueueMs) + " ms, " + sw;
  return "uplinks " + std::to_string(s.uplink_queue) + " frames (" + std::to_string(uplink_limit_bytes(s)) + " B), " + sw;
}

}  // namespace lanecast::apps::testbed
