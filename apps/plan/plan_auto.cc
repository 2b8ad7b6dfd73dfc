#include "apps/plan/plan_auto.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "apps/plan/plan_options.h"

namespace lanecast::apps {

algos::autoselect::Rules load_auto_rules(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("auto rules: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return algos::autoselect::Rules::parse(text.str(), path);
}

algos::autoselect::Situation plan_situation(const PlanConfig& c, uint32_t nodes, uint64_t size) {
  algos::autoselect::Situation s;
  s.message_bytes = size;
  s.nodes = nodes;
  s.lanes = c.lanes;
  // The plan's model network always multicasts: the simulator's switch copies
  // a multicast to every other rank's rx port (algos/sim/simulator.h), and
  // --mcast-loss only sets how many of those copies are lost. So the rules may
  // choose a multicast algorithm here, as on a fabric with multicast.
  s.multicast = true;
  s.latency_spread = c.net.latency.spread(nodes);
  return s;
}

AutoPick pick_auto(const PlanConfig& c, uint32_t nodes, uint64_t size) {
  if (!c.auto_rules) throw std::logic_error("pick_auto: the plan has no auto rules");
  AutoPick out{plan_situation(c, nodes, size), algos::Algo::Chain, std::nullopt};
  out.rule = c.auto_rules->first_match(out.situation);
  out.algo = c.auto_rules->choose(out.situation);
  return out;
}

std::string rule_origin(const PlanConfig& c, size_t i) {
  return (c.auto_rules_file.empty() ? std::string("built-in rules") : c.auto_rules_file) + ":" +
         std::to_string(c.auto_rules->line(i));
}

}  // namespace lanecast::apps
