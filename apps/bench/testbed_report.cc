#include "apps/bench/testbed_report.h"

#include <cinttypes>
#include <cstdio>
#include <fstream>

#include "apps/common/json_output.h"
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

std::vector<LinkRow> link_rows(const testbed::TestbedSpec& t, const std::vector<QdiscCounters>& before,
                               const std::vector<QdiscCounters>& after) {
  std::vector<LinkRow> rows;
  const std::string sw = testbed::switch_ns(t.name);
  for (uint32_t i = 0; i < t.nodes; ++i)
    for (uint32_t lane = 0; lane < t.lanes; ++lane)
      rows.push_back(LinkRow{i, testbed::node_iface(lane),
                             during(before, after, testbed::node_ns(t.name, i), testbed::node_iface(lane)),
                             during(before, after, sw, testbed::switch_port(lane, i))});
  return rows;
}

LinkTotals link_totals(const std::vector<LinkRow>& links, uint32_t root) {
  LinkTotals t;
  for (const LinkRow& l : links) {
    t.drops += l.up.dropped + l.down.dropped;
    if (l.rank == root) t.root_up_bytes += l.up.bytes;
  }
  return t;
}

void print_link_counters(const std::vector<LinkRow>& links, bool xdp, uint32_t root, const Payload& payload) {
  std::printf("# links during the run, as each tbf counted (frames with their Ethernet header, no FCS, preamble or "
              "gap; acks, barriers and hellos included)%s\n",
              xdp ? "; af_xdp: uplinks count nothing (XDP transmit skips the node's qdisc)" : "");
  std::printf("# payload each receiver must get: %s = %" PRIu64 " B (%s)\n", payload.how.c_str(), payload.bytes,
              format_size(payload.bytes).c_str());
  std::printf("%5s %-4s %14s %9s %8s %10s %14s %9s %8s %10s %9s\n", "rank", "lane", "up_bytes", "up_pkts", "up_drop",
              "up_overlim", "down_bytes", "down_pkts", "down_drop", "down_overl", "down/pay");
  for (const LinkRow& l : links)
    std::printf("%5u %-4s %14" PRIu64 " %9" PRIu64 " %8" PRIu64 " %10" PRIu64 " %14" PRIu64 " %9" PRIu64 " %8" PRIu64
                " %10" PRIu64 " %9.3f\n",
                l.rank, l.lane.c_str(), l.up.bytes, l.up.packets, l.up.dropped, l.up.overlimits, l.down.bytes,
                l.down.packets, l.down.dropped, l.down.overlimits,
                payload.bytes ? static_cast<double>(l.down.bytes) / static_cast<double>(payload.bytes) : 0.0);
  const LinkTotals t = link_totals(links, root);
  std::printf("# the root's (rank %u) uplink carried %" PRIu64 " B = %.3f x the payload; drops on every link: %" PRIu64
              "\n",
              root, t.root_up_bytes,
              payload.bytes ? static_cast<double>(t.root_up_bytes) / static_cast<double>(payload.bytes) : 0.0, t.drops);
}

namespace {

// Rank 0's output when it is one whole JSON array (it printed its results
// and ended), else null: a member killed mid-run leaves half a document.
Json whole_array(const std::string& text) {
  Json parsed = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return parsed.is_array() ? parsed : Json();
}

}  // namespace

void print_testbed_json(const TestbedJson& j) {
  const testbed::TestbedSpec& t = *j.testbed;
  Json out;
  out["testbed"] = {{"nodes", t.nodes},
                    {"lanes", t.lanes},
                    {"rate_mbit", t.rate_mbit},
                    {"mtu", t.mtu},
                    {"burst_bytes", testbed::burst_bytes(t)},
                    {"uplink_queue_frames", t.uplink_queue},
                    {"uplink_limit_bytes", testbed::uplink_limit_bytes(t)},
                    {"switch_queue_ms", testbed::kQueueMs},
                    {"paced_mbit", j.paced_mbit}};
  out["results"] = whole_array(j.results);
  out["payload_bytes"] = j.payload.bytes;
  out["payload"] = j.payload.how;
  Json links = Json::array();
  for (const LinkRow& l : j.links)
    links.push_back({{"rank", l.rank},
                     {"lane", l.lane},
                     {"up_bytes", l.up.bytes},
                     {"up_packets", l.up.packets},
                     {"up_dropped", l.up.dropped},
                     {"up_overlimits", l.up.overlimits},
                     {"down_bytes", l.down.bytes},
                     {"down_packets", l.down.packets},
                     {"down_dropped", l.down.dropped},
                     {"down_overlimits", l.down.overlimits}});
  out["links"] = std::move(links);
  const LinkTotals totals = link_totals(j.links, j.root);
  out["root_uplink_bytes"] = totals.root_up_bytes;
  out["drops"] = totals.drops;
  out["failed"] = j.failed;
  print_json(out, stdout, 1);
  std::fflush(stdout);
}

std::string error_lines(const MemberProcesses::Member& m) {
  std::ifstream in(m.err_path);
  std::vector<std::string> own, all;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    // A notice (such as a keyless group's) is not why the member ended.
    if (line.find(": notice: ") != std::string::npos) continue;
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
