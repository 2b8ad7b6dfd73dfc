#include "apps/bench/testbed_report.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "apps/common/options.h"

namespace lanecast::apps {
namespace {

using testbed::QdiscCounters;

// The counts of (ns, dev) between the two snapshots; zeros if it is missing.
QdiscCounters during(const std::vector<QdiscCounters>& before, const std::vector<QdiscCounters>& after,
                     const std::string& ns, const std::string& dev) {
  const QdiscCounters* a = testbed::find(after, ns, dev);
  if (a == nullptr) return QdiscCounters{};
  const QdiscCounters* b = testbed::find(before, ns, dev);
  return b == nullptr ? *a : a->minus(*b);
}

}  // namespace

std::vector<QdiscCounters> snapshot_links(const testbed::TestbedSpec& t) {
  std::vector<QdiscCounters> all = testbed::read_tbf(testbed::switch_ns(t.name));
  for (uint32_t i = 0; i < t.nodes; ++i) {
    std::vector<QdiscCounters> node = testbed::read_tbf(testbed::node_ns(t.name, i));
    all.insert(all.end(), node.begin(), node.end());
  }
  return all;
}

void print_link_counters(const testbed::TestbedSpec& t, bool xdp, uint32_t root,
                         const std::vector<QdiscCounters>& before, const std::vector<QdiscCounters>& after,
                         const Payload& payload) {
  std::printf("# links during the run, as each tbf counted (frames with their Ethernet header, no FCS, preamble or "
              "gap; acks, barriers and hellos included)%s\n",
              xdp ? "; af_xdp: uplinks count nothing (XDP transmit skips the node's qdisc)" : "");
  std::printf("# payload each receiver must get: %s = %" PRIu64 " B (%s)\n", payload.how.c_str(), payload.bytes,
              format_size(payload.bytes).c_str());
  std::printf("%5s %-4s %14s %9s %8s %10s %14s %9s %8s %10s %9s\n", "rank", "lane", "up_bytes", "up_pkts", "up_drop",
              "up_overlim", "down_bytes", "down_pkts", "down_drop", "down_overl", "down/pay");
  uint64_t drops = 0, root_up = 0;
  const std::string sw = testbed::switch_ns(t.name);
  for (uint32_t i = 0; i < t.nodes; ++i) {
    for (uint32_t lane = 0; lane < t.lanes; ++lane) {
      const QdiscCounters up = during(before, after, testbed::node_ns(t.name, i), testbed::node_iface(lane));
      const QdiscCounters down = during(before, after, sw, testbed::switch_port(lane, i));
      drops += up.dropped + down.dropped;
      if (i == root) root_up += up.bytes;
      std::printf("%5u %-4s %14" PRIu64 " %9" PRIu64 " %8" PRIu64 " %10" PRIu64 " %14" PRIu64 " %9" PRIu64 " %8" PRIu64
                  " %10" PRIu64 " %9.3f\n",
                  i, testbed::node_iface(lane).c_str(), up.bytes, up.packets, up.dropped, up.overlimits, down.bytes,
                  down.packets, down.dropped, down.overlimits,
                  payload.bytes ? static_cast<double>(down.bytes) / static_cast<double>(payload.bytes) : 0.0);
    }
  }
  std::printf("# the root's (rank %u) uplink carried %" PRIu64 " B = %.3f x the payload; drops on every link: %" PRIu64
              "\n",
              root, root_up, payload.bytes ? static_cast<double>(root_up) / static_cast<double>(payload.bytes) : 0.0,
              drops);
}

std::string error_lines(const MemberProcesses::Member& m) {
  std::ifstream in(m.err_path);
  std::vector<std::string> own, all;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    all.push_back(line);
    if (line.rfind("lanecast", 0) == 0) own.push_back(line);
  }
  const std::vector<std::string>& pick = own.empty() ? all : own;
  std::string out;
  const size_t first = pick.size() > 3 ? pick.size() - 3 : 0;  // the last three at most
  for (size_t i = first; i < pick.size(); ++i) out += (out.empty() ? "" : " / ") + pick[i];
  return out;
}

}  // namespace lanecast::apps
