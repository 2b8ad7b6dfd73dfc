// `auto`: picks an algorithm for one broadcast from its size, the group size,
// lanes per node, whether the ports multicast, and the spread of the group's
// latencies. The decision is a short list of rules, first match wins, built in
// (from the simulator's table in docs/algorithms.md) and replaceable by a rules
// file (config/auto.rules). Pure: the same inputs give the same choice on every
// member, so all members of a group agree without talking.
//
// Rules file: one rule per line, '#' starts a comment.
//   <condition> [and <condition>]... -> <algorithm>
//   condition: size|nodes|lanes|spread  <|<=|>|>=|==  number (size takes K/M/G)
//              multicast | nomulticast | always
//   e.g.   size < 2K -> linear
//          lanes >= 2 and size >= 64K -> multilane
//          always -> bintree
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "algos/registry.h"

namespace lanecast::algos::autoselect {

struct Situation {
  uint64_t message_bytes = 0;
  uint32_t nodes = 1;
  uint16_t lanes = 1;
  bool multicast = false;
  double latency_spread = 1.0;  // largest / smallest pairwise latency; 1 = uniform
};

// A rules file that does not parse: what, where.
struct RulesError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class Rules {
 public:
  // The built-in rules (kDefaultRules below).
  static const Rules& defaults();
  // Parses rules text; `origin` names it in errors ("config/auto.rules").
  // Throws RulesError ("config/auto.rules:4: unknown algorithm 'bintre'").
  static Rules parse(std::string_view text, std::string_view origin);

  // The first rule that matches; a rules set without a catch-all that matches
  // nothing falls back to `chain`.
  Algo choose(const Situation& s) const;
  // Which rule choose() follows: its index, or none when none matches. Lets a
  // report say why (`lanecast plan --algo auto`) and a test see every rule fire.
  std::optional<size_t> first_match(const Situation& s) const;
  size_t size() const { return rules_.size(); }
  // Rule i: its algorithm, its text without the comment ("nodes <= 4 -> bintree")
  // and its line in the parsed text (1-based, as in RulesError).
  Algo algo(size_t i) const { return rules_.at(i).algo; }
  const std::string& text(size_t i) const { return rules_.at(i).text; }
  size_t line(size_t i) const { return rules_.at(i).line; }

 private:
  enum class Var : uint8_t { Size, Nodes, Lanes, Spread, Multicast, NoMulticast, Always };
  enum class Op : uint8_t { Lt, Le, Gt, Ge, Eq };
  struct Condition {
    Var var;
    Op op;
    double value;
  };
  struct Rule {
    std::vector<Condition> all;
    Algo algo;
    std::string text;
    size_t line = 0;
  };
  static bool holds(const Condition& c, const Situation& s);
  std::vector<Rule> rules_;
};

// The built-in rules, as text in the rules-file format.
extern const std::string_view kDefaultRules;

}  // namespace lanecast::algos::autoselect
