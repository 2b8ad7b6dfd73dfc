// [group.faults] of a group file (format: config/groups/README.md), read
// into GroupSpec::faults: the fault keys of engine/group/fault_keys.h, each
// value checked against its range, each link rule against the others.
#include "engine/group/group_file_faults.h"

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "engine/group/fault_keys.h"

namespace lanecast {

// [group.faults] (FaultOptions, lanecast/group_spec.h): its fault keys are
// a rule for every frame every member receives; each [[group.faults.link]]
// a rule of its own, for the frames its selector keys pick.
void FaultTableReader::read(const toml::table& g, GroupSpec& spec) const {
  const toml::node* n = g.get("faults");
  if (n == nullptr) return;
  if (!n->is_table()) fail(*n, "group.faults must be a table ([group.faults]), not " + type_name(*n));
  const toml::table& t = *n->as_table();
  std::vector<std::string_view> keys{"seed", "link"};
  for (const engine::FaultKey& k : engine::kFaultKeys) keys.push_back(k.key);
  reject_unknown_keys(t, "[group.faults]", keys);
  constexpr int64_t kMaxSeed = std::numeric_limits<int64_t>::max();
  if (auto v = integer(t, "seed", "group.faults.seed", 0, kMaxSeed, "a seed")) spec.faults.seed = static_cast<uint64_t>(*v);
  std::vector<std::string> origin;  // of each rule, for messages
  FaultRule every;
  if (read_values(t, "group.faults", every.faults)) {
    spec.faults.rules.push_back(every);
    origin.push_back("the [group.faults] keys");
  }
  const toml::node* links = t.get("link");
  if (links == nullptr) return;
  if (!links->is_array_of_tables())
    fail(*links, "group.faults.link must be an array of tables ([[group.faults.link]]), not " + type_name(*links));
  keys[0] = "member", keys[1] = "peer";
  keys.insert(keys.begin() + 2, {"direction", "frames"});
  for (const toml::node& entry : *links->as_array()) {
    const toml::table& lt = *entry.as_table();
    reject_unknown_keys(lt, "[[group.faults.link]]", keys);
    FaultRule r;
    if (auto v = integer(lt, "member", "group.faults.link.member", 0, max_members_ - 1)) r.member = static_cast<uint32_t>(*v);
    if (auto v = integer(lt, "peer", "group.faults.link.peer", 0, max_members_ - 1)) r.peer = static_cast<uint32_t>(*v);
    if (auto v = string(lt, "direction", "group.faults.link.direction")) {
      if (*v != "receive" && *v != "send")
        fail(*lt.get("direction"), "group.faults.link.direction " + in_quotes(*v) + " is not a direction; allowed: receive | send");
      r.send = *v == "send";
    }
    if (auto v = string(lt, "frames", "group.faults.link.frames")) {
      if (*v != "all" && *v != "unicast" && *v != "multicast")
        fail(*lt.get("frames"), "group.faults.link.frames " + in_quotes(*v) + " is not a kind of frames; allowed: all | unicast | multicast");
      r.frames = *v == "all" ? FaultRule::Frames::All : *v == "unicast" ? FaultRule::Frames::Unicast : FaultRule::Frames::Multicast;
    }
    if (r.peer != UINT32_MAX && r.peer == r.member)
      fail(*lt.get("peer"), "group.faults.link.peer " + std::to_string(r.peer) + " is the member itself; allowed: another rank");
    read_values(lt, "group.faults.link", r.faults);
    if (const std::string problem = engine::fault_rule_problem(r, 0); !problem.empty())
      fail(lt, "[[group.faults.link]]: " + problem);
    for (size_t i = 0; i < spec.faults.rules.size(); ++i)
      if (engine::same_frames(spec.faults.rules[i], r))
        fail(lt, "[[group.faults.link]] selects the same frames as " + origin[i] +
                     "; allowed: one rule per member, direction, peer and frames");
    spec.faults.rules.push_back(r);
    origin.push_back("the rule on line " + std::to_string(lt.source().begin.line));
  }
}

// The fault keys of one table into `f`; whether any was there.
bool FaultTableReader::read_values(const toml::table& t, const std::string& path, LinkFaults& f) const {
  bool any = false;
  for (const engine::FaultKey& k : engine::kFaultKeys) {
    const toml::node* n = t.get(k.key);
    if (n == nullptr) continue;
    const std::string name = path + "." + std::string(k.key);
    const std::string allowed = std::string(k.allowed);
    if (k.integer ? !n->is_integer() : !n->is_number())
      fail(*n, name + " must be " + (k.integer ? "an integer" : "a number") + ", not " + type_name(*n) + "; allowed " + allowed);
    const double v = n->value<double>().value();
    if (!std::isfinite(v) || !k.in_range(v)) fail(*n, name + " is " + number_text(v) + ", out of range; allowed " + allowed);
    k.set(f, v);
    any = true;
  }
  if (f.burst_enter > 0 && !(f.burst_leave > 0))
    fail(*t.get("burst_enter"), path + ".burst_enter is " + number_text(f.burst_enter) +
                                    " but burst_leave is 0: a burst would never end; allowed burst_leave 0 < x <= 1");
  return any;
}

// The ranks [[group.faults.link]] names, once the members are known.
void FaultTableReader::check_ranks(const toml::table& g, const GroupSpec& spec) const {
  const toml::node* faults = g.get("faults");
  const toml::node* links = faults != nullptr && faults->is_table() ? faults->as_table()->get("link") : nullptr;
  if (links == nullptr || !links->is_array_of_tables()) return;
  const size_t n = spec.members.size();
  for (const toml::node& entry : *links->as_array())
    for (const char* key : {"member", "peer"}) {
      const toml::node* v = entry.as_table()->get(key);
      if (v != nullptr && v->is_integer() && static_cast<uint64_t>(v->as_integer()->get()) >= n)
        fail(*v, "group.faults.link." + std::string(key) + " " + std::to_string(v->as_integer()->get()) +
                     " is not a member; allowed 0.." + std::to_string(n - 1));
    }
}

}  // namespace lanecast
