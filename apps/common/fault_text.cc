#include "apps/common/fault_text.h"

#include <cinttypes>
#include <cstdio>

#include "apps/common/options.h"
#include "engine/group/fault_keys.h"

namespace lanecast::apps {
namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    const size_t at = text.find(sep);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text = text.substr(at + 1);
  }
}

uint32_t parse_rank(std::string_view v, const std::string& where) {
  return static_cast<uint32_t>(parse_uint(v, where, 1023));
}

}  // namespace

FaultOptions parse_fault_text(std::string_view text, std::string_view what) {
  FaultOptions out;
  bool seeded = false;
  const std::vector<std::string_view> rules = split(text, ';');
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string rule_name = std::string(what) + (rules.size() > 1 ? " (rule " + std::to_string(i + 1) + ")" : "");
    const auto bad = [&](const std::string& why) { return UsageError(rule_name + ": " + why); };
    FaultRule r;
    bool any = false, selected = false;
    for (std::string_view item : split(rules[i], ',')) {
      if (item.empty()) throw bad("an empty item (two commas, or a comma at an end)");
      const size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size())
        throw bad("'" + std::string(item) + "' is not key=value");
      const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
      const std::string where = rule_name + ": " + std::string(key);
      if (key == "seed") {
        if (seeded) throw bad("seed given twice");
        out.seed = parse_uint(value, where, UINT64_MAX);
        seeded = true;
      } else if (key == "member") {
        r.member = parse_rank(value, where);
        selected = true;
      } else if (key == "peer") {
        r.peer = parse_rank(value, where);
        selected = true;
      } else if (key == "direction") {
        if (value != "receive" && value != "send") throw bad("direction '" + std::string(value) + "': receive or send");
        r.send = value == "send";
        selected = true;
      } else if (key == "frames") {
        if (value != "all" && value != "unicast" && value != "multicast")
          throw bad("frames '" + std::string(value) + "': all, unicast or multicast");
        r.frames = value == "all" ? FaultRule::Frames::All : value == "unicast" ? FaultRule::Frames::Unicast
                                                                                : FaultRule::Frames::Multicast;
        selected = true;
      } else if (key == "burst") {
        // ENTER:LEAVE[:LOSS_BAD[:LOSS_GOOD]]
        const std::vector<std::string_view> p = split(value, ':');
        if (p.size() < 2 || p.size() > 4) throw bad("burst '" + std::string(value) + "': ENTER:LEAVE[:LOSS_BAD[:LOSS_GOOD]]");
        r.faults.burst_enter = parse_double(p[0], where + " (enter)", 0, 1);
        r.faults.burst_leave = parse_double(p[1], where + " (leave)", 0, 1);
        if (p.size() > 2) r.faults.burst_loss_bad = parse_double(p[2], where + " (loss in the bad state)", 0, 1);
        if (p.size() > 3) r.faults.burst_loss_good = parse_double(p[3], where + " (loss in the good state)", 0, 0.999999);
        any = true;
      } else if (const engine::FaultKey* k = engine::fault_key(key)) {
        const double v = k->integer ? static_cast<double>(parse_uint(value, where, UINT32_MAX))
                                    : parse_double(value, where, -1e300, 1e300);
        if (!k->in_range(v))
          throw bad(std::string(key) + " " + std::string(value) + " is out of range; allowed " + std::string(k->allowed));
        k->set(r.faults, v);
        any = true;
      } else {
        std::string keys = "seed, member, direction, peer, frames, burst";
        for (const engine::FaultKey& f : engine::kFaultKeys) keys += ", " + std::string(f.key);
        throw bad("unknown key '" + std::string(key) + "'; known: " + keys);
      }
    }
    if (!any && selected) throw bad("no fault given for the frames it selects (e.g. loss=0.05)");
    if (!any) continue;  // seed= alone
    const std::string problem = engine::fault_rule_problem(r, 0);
    if (!problem.empty()) throw bad(problem);
    for (size_t j = 0; j < out.rules.size(); ++j)
      if (engine::same_frames(out.rules[j], r)) throw bad("selects the same frames as rule " + std::to_string(j + 1));
    out.rules.push_back(r);
  }
  return out;
}

std::string fault_text_help() {
  std::string s;
  char line[256];
  for (const engine::FaultKey& k : engine::kFaultKeys) {
    std::snprintf(line, sizeof line, "    %-16s %s; %s\n", std::string(k.key).c_str(), std::string(k.doc).c_str(),
                  std::string(k.allowed).c_str());
    s += line;
  }
  s += "    burst=E:L[:B[:G]]  the four burst_ keys at once: enter, leave, loss in the bad state, in the good\n"
       "    member=R, direction=receive|send, peer=R, frames=all|unicast|multicast: which frames (default: every\n"
       "                     member's, received, from any peer, all); seed=S: the seed of every rule\n";
  return s;
}

std::string fault_counters_text(const PortCounters& p) {
  std::string out;
  char line[320];
  const auto one = [&](const char* way, const FaultCounters& f) {
    const uint64_t sum = f.lost + f.burst_lost + f.reordered + f.duplicated + f.corrupted_header +
                         f.corrupted_payload + f.delayed + f.no_buffer;
    if (sum == 0) return;
    std::snprintf(line, sizeof line,
                  "  faults %s: lost=%" PRIu64 " burst_lost=%" PRIu64 " reordered=%" PRIu64 " duplicated=%" PRIu64
                  " corrupted_header=%" PRIu64 " corrupted_payload=%" PRIu64 " delayed=%" PRIu64 " no_buffer=%" PRIu64 "\n",
                  way, f.lost, f.burst_lost, f.reordered, f.duplicated, f.corrupted_header, f.corrupted_payload,
                  f.delayed, f.no_buffer);
    out += line;
  };
  one("received", p.rx_faults);
  one("sent", p.tx_faults);
  return out;
}

}  // namespace lanecast::apps
