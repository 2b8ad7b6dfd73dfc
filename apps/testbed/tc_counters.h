// What the testbed's links counted: every tbf's counters, from `tc -s qdisc
// show`. tbf counts a frame as the kernel holds it (Ethernet header and
// payload, no preamble, FCS or gap), so its bytes compare directly with
// lanecast's frames.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::apps::testbed {

struct QdiscCounters {
  std::string ns, dev;
  std::string rate, burst, latency;  // as tc prints them: "200Mbit", "10000b", "5ms"
  uint64_t bytes = 0, packets = 0, dropped = 0, overlimits = 0, requeues = 0;

  QdiscCounters minus(const QdiscCounters& before) const;  // the counts of a span of time
};

// The tbf qdiscs in `tc -s qdisc show`'s text, in order; `ns` labels them.
std::vector<QdiscCounters> parse_tbf_stats(const std::string& ns, const std::string& text);

// Every tbf qdisc in namespace `ns` (runs tc).
std::vector<QdiscCounters> read_tbf(const std::string& ns);

// The qdisc on `dev` in `ns` among `all`, or nullptr.
const QdiscCounters* find(const std::vector<QdiscCounters>& all, const std::string& ns, const std::string& dev);

}  // namespace lanecast::apps::testbed
