#include "apps/testbed/tc_counters.h"

#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "apps/common/subprocess.h"

namespace lanecast::apps::testbed {
namespace {

// The word after `key` in `words`, or "".
std::string after(const std::vector<std::string>& words, const std::string& key) {
  for (size_t i = 0; i + 1 < words.size(); ++i)
    if (words[i] == key) return words[i + 1];
  return "";
}

uint64_t less(uint64_t now, uint64_t before) { return now >= before ? now - before : 0; }

}  // namespace

QdiscCounters QdiscCounters::minus(const QdiscCounters& b) const {
  QdiscCounters d = *this;
  d.bytes = less(bytes, b.bytes);
  d.packets = less(packets, b.packets);
  d.dropped = less(dropped, b.dropped);
  d.overlimits = less(overlimits, b.overlimits);
  d.requeues = less(requeues, b.requeues);
  return d;
}

// "qdisc tbf 86a5: dev v0 root refcnt 3 rate 200Mbit burst 10000b lat 5ms"
// " Sent 54 bytes 1 pkt (dropped 0, overlimits 0 requeues 0)"
std::vector<QdiscCounters> parse_tbf_stats(const std::string& ns, const std::string& text) {
  std::vector<QdiscCounters> out;
  std::istringstream lines(text);
  std::string line;
  bool open = false;  // a tbf line read, its "Sent" line not yet
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    std::vector<std::string> words;
    for (std::string w; in >> w;) words.push_back(w);
    if (words.empty()) continue;
    if (words[0] == "qdisc") {
      open = words.size() > 1 && words[1] == "tbf";
      if (!open) continue;
      QdiscCounters q;
      q.ns = ns;
      q.dev = after(words, "dev");
      q.rate = after(words, "rate");
      q.burst = after(words, "burst");
      q.latency = after(words, "lat");
      out.push_back(q);
    } else if (open && words[0] == "Sent") {
      QdiscCounters& q = out.back();
      const size_t at = line.find("Sent");
      std::sscanf(line.c_str() + at,
                  "Sent %" SCNu64 " bytes %" SCNu64 " pkt (dropped %" SCNu64 ", overlimits %" SCNu64
                  " requeues %" SCNu64 ")",
                  &q.bytes, &q.packets, &q.dropped, &q.overlimits, &q.requeues);
      open = false;
    }
  }
  return out;
}

std::vector<QdiscCounters> read_tbf(const std::string& ns) {
  return parse_tbf_stats(ns, run_checked({"tc", "-s", "-n", ns, "qdisc", "show"}));
}

const QdiscCounters* find(const std::vector<QdiscCounters>& all, const std::string& ns, const std::string& dev) {
  for (const QdiscCounters& q : all)
    if (q.ns == ns && q.dev == dev) return &q;
  return nullptr;
}

}  // namespace lanecast::apps::testbed
