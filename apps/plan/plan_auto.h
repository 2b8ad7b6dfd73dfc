// `lanecast plan --algo auto`: what the auto rules (algos/auto/rules.h) see of
// one plan point (nodes, size) and which algorithm they choose for it. Every
// field of the rules' Situation comes from the plan's own inputs, so the plan
// predicts what `auto` would run on the network it models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "algos/auto/rules.h"
#include "algos/registry.h"

namespace lanecast::apps {

struct PlanConfig;

// Reads a rules file (the format of config/auto.rules). Throws
// std::invalid_argument: "auto rules: cannot read FILE", or the parser's
// "FILE:LINE: what" (algos::autoselect::RulesError), as `lanecast bench` does.
algos::autoselect::Rules load_auto_rules(const std::string& path);

// The situation of a broadcast of `size` bytes to `nodes` members on the plan's
// network: size, nodes, --lanes, multicast and the topology's latency spread.
algos::autoselect::Situation plan_situation(const PlanConfig& c, uint32_t nodes, uint64_t size);

struct AutoPick {
  algos::autoselect::Situation situation;
  algos::Algo algo;
  std::optional<size_t> rule;  // index in the rules; none: no rule matched (chain)
};

// What c.auto_rules choose for (nodes, size). Needs c.auto_rules.
AutoPick pick_auto(const PlanConfig& c, uint32_t nodes, uint64_t size);

// Where rule `i` of the plan's rules was written: "built-in rules:8", "FILE:3".
std::string rule_origin(const PlanConfig& c, size_t i);

}  // namespace lanecast::apps
