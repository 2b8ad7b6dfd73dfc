#include "engine/group/fault_keys.h"

#include <sstream>
#include <stdexcept>

namespace lanecast::engine {
namespace {

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string rank_text(uint32_t r) { return r == UINT32_MAX ? "any" : std::to_string(r); }

}  // namespace

const FaultKey* fault_key(std::string_view key) {
  for (const FaultKey& k : kFaultKeys)
    if (k.key == key) return &k;
  return nullptr;
}

bool any_fault(const LinkFaults& f) {
  return f.loss > 0 || f.burst_enter > 0 || f.reorder > 0 || f.dup > 0 || f.corrupt > 0 || f.delay_us > 0 ||
         f.jitter_us > 0;
}

bool same_frames(const FaultRule& a, const FaultRule& b) {
  return a.member == b.member && a.send == b.send && a.peer == b.peer && a.frames == b.frames;
}

std::string fault_rule_problem(const FaultRule& r, uint32_t nodes) {
  for (const FaultKey& k : kFaultKeys) {
    const double v = k.get(r.faults);
    if (!k.in_range(v)) return std::string(k.key) + " is " + number_text(v) + ", out of range; allowed " + std::string(k.allowed);
  }
  if (r.faults.burst_enter > 0 && !(r.faults.burst_leave > 0))
    return "burst_enter is " + number_text(r.faults.burst_enter) +
           " but burst_leave is 0: a burst would never end; allowed burst_leave 0 < x <= 1";
  if (nodes > 0) {
    if (r.member != UINT32_MAX && r.member >= nodes)
      return "member " + std::to_string(r.member) + " is not in the group (ranks 0.." + std::to_string(nodes - 1) + ")";
    if (r.peer != UINT32_MAX && r.peer >= nodes)
      return "peer " + std::to_string(r.peer) + " is not in the group (ranks 0.." + std::to_string(nodes - 1) + ")";
  }
  if (r.peer != UINT32_MAX && r.peer == r.member)
    return "peer " + std::to_string(r.peer) + " is the member itself; allowed: another rank";
  if (r.send && r.peer != UINT32_MAX && r.frames == FaultRule::Frames::Multicast)
    return "a send rule for peer " + std::to_string(r.peer) +
           " sees no multicasts (they go to the group's address); allowed: frames all or unicast, or no peer";
  return "";
}

void check_faults(const FaultOptions& f, uint32_t nodes, const std::string& where) {
  for (size_t i = 0; i < f.rules.size(); ++i) {
    const std::string problem = fault_rule_problem(f.rules[i], nodes);
    if (!problem.empty()) throw std::invalid_argument(where + ": faults: rule " + std::to_string(i) + ": " + problem);
    for (size_t j = 0; j < i; ++j)
      if (same_frames(f.rules[j], f.rules[i]))
        throw std::invalid_argument(where + ": faults: rules " + std::to_string(j) + " and " + std::to_string(i) +
                                    " select the same frames (member " + rank_text(f.rules[i].member) + ", " +
                                    (f.rules[i].send ? "send" : "receive") + ", peer " + rank_text(f.rules[i].peer) +
                                    "); allowed: one rule per selection");
  }
}

std::string describe_faults(const FaultOptions& f) {
  std::string out;
  for (const FaultRule& r : f.rules) {
    std::string what;
    const LinkFaults& x = r.faults;
    const LinkFaults defaults;
    for (const FaultKey& k : kFaultKeys) {
      const double v = k.get(x);
      // Each fault once it is on; its parameters when they differ from the defaults.
      const bool shown = k.key == "reorder_gap"       ? x.reorder > 0 && v != k.get(defaults)
                         : k.key.starts_with("burst_") ? x.burst_enter > 0 && (k.key == "burst_enter" || k.key == "burst_leave" || v != k.get(defaults))
                                                       : v != 0;
      if (!shown) continue;
      if (!what.empty()) what += ", ";
      what += std::string(k.key) + " " + number_text(v);
    }
    if (what.empty()) what = "nothing";
    if (!out.empty()) out += "; ";
    out += what + " on frames ";
    out += r.member == UINT32_MAX ? std::string(r.send ? "every member sends" : "every member receives")
                                  : "member " + std::to_string(r.member) + (r.send ? " sends" : " receives");
    if (r.peer != UINT32_MAX) out += (r.send ? " to " : " from ") + std::to_string(r.peer);
    if (r.frames != FaultRule::Frames::All) out += r.frames == FaultRule::Frames::Unicast ? " (unicast)" : " (multicast)";
  }
  if (out.empty()) return "none";
  return out + "; seed " + std::to_string(f.seed);
}

}  // namespace lanecast::engine
