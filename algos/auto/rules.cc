#include "algos/auto/rules.h"

#include <cmath>
#include <cstdlib>

namespace lanecast::algos::autoselect {

// From `lanecast plan --algo all` on the linear model (t0 10 us, 1250 MB/s,
// 1400-byte segments; table in docs/algorithms.md): one frame goes out fastest
// from the root itself (linear) and in a binomial tree for large groups;
// above a few segments the two-tree pipeline (bintree) leads except around
// 8-16 members, where the symmetric scatter + forward-to-all wins. Lanes and
// multicast pick the algorithms built for them when they exist in this build
// (a rule naming an algorithm this build lacks is skipped).
const std::string_view kDefaultRules = R"(# lanecast auto rules: first match wins
nodes <= 2 -> linear
size <= 1400 and nodes <= 64 -> linear
size <= 1400 -> binomial
multicast and size <= 64K -> mcast_chain
lanes >= 2 and size >= 64K -> multilane
spread >= 4 -> hypercube
nodes <= 4 -> bintree
nodes <= 16 and size >= 1M -> symmetric
nodes <= 8 -> symmetric
always -> bintree
)";

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Algorithms of the issue tracker not in every build yet: rules may name them.
bool is_planned(std::string_view name) { return name == "multilane" || name == "mcast_chain"; }

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    s = trim(s);
    if (s.empty()) return out;
    const size_t end = s.find_first_of(" \t");
    out.push_back(s.substr(0, end));
    if (end == std::string_view::npos) return out;
    s.remove_prefix(end);
  }
}

}  // namespace

const Rules& Rules::defaults() {
  static const Rules r = parse(kDefaultRules, "built-in rules");
  return r;
}

Rules Rules::parse(std::string_view text, std::string_view origin) {
  Rules out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string where = std::string(origin) + ":" + std::to_string(line_no) + ": ";
    const size_t arrow = line.find("->");
    if (arrow == std::string_view::npos) throw RulesError(where + "a rule reads '<conditions> -> <algorithm>'");
    const std::string_view name = trim(line.substr(arrow + 2));
    const auto algo = algo_by_name(name);
    Rule rule;
    if (!algo) {
      // A name this build lacks is skipped (an algorithm may come later), but
      // one that is not even a word is an error.
      if (name.empty() || name.find(' ') != std::string_view::npos)
        throw RulesError(where + "expected one algorithm name after '->'");
      if (!is_planned(name))
        throw RulesError(where + "unknown algorithm '" + std::string(name) + "'");
    }
    const auto w = words(line.substr(0, arrow));
    if (w.empty()) throw RulesError(where + "no condition before '->' (use 'always')");
    for (size_t i = 0; i < w.size();) {
      if (i > 0) {
        if (w[i] != "and") throw RulesError(where + "expected 'and', found '" + std::string(w[i]) + "'");
        ++i;
        if (i == w.size()) throw RulesError(where + "a condition must follow 'and'");
      }
      const std::string_view v = w[i];
      if (v == "always" || v == "multicast" || v == "nomulticast") {
        rule.all.push_back({v == "always" ? Var::Always : v == "multicast" ? Var::Multicast : Var::NoMulticast,
                            Op::Eq, 0});
        ++i;
        continue;
      }
      Condition c{};
      if (v == "size") c.var = Var::Size;
      else if (v == "nodes") c.var = Var::Nodes;
      else if (v == "lanes") c.var = Var::Lanes;
      else if (v == "spread") c.var = Var::Spread;
      else throw RulesError(where + "unknown condition '" + std::string(v) + "' (size, nodes, lanes, spread, multicast, nomulticast, always)");
      if (i + 3 > w.size()) throw RulesError(where + "'" + std::string(v) + "' needs an operator and a number");
      const std::string_view op = w[i + 1];
      if (op == "<") c.op = Op::Lt;
      else if (op == "<=") c.op = Op::Le;
      else if (op == ">") c.op = Op::Gt;
      else if (op == ">=") c.op = Op::Ge;
      else if (op == "==") c.op = Op::Eq;
      else throw RulesError(where + "unknown operator '" + std::string(op) + "' (<, <=, >, >=, ==)");
      std::string num(w[i + 2]);
      double mult = 1;
      if (c.var == Var::Size && !num.empty()) {
        const char last = num.back();
        if (last == 'K' || last == 'k') mult = 1024.0;
        if (last == 'M' || last == 'm') mult = 1024.0 * 1024;
        if (last == 'G' || last == 'g') mult = 1024.0 * 1024 * 1024;
        if (mult != 1) num.pop_back();
      }
      char* end = nullptr;
      const double val = std::strtod(num.c_str(), &end);
      if (num.empty() || end != num.c_str() + num.size() || !std::isfinite(val) || val < 0)
        throw RulesError(where + "'" + std::string(w[i + 2]) + "' is not a number");
      c.value = val * mult;
      rule.all.push_back(c);
      i += 3;
    }
    if (!algo) continue;  // valid rule for an algorithm this build does not have
    rule.algo = *algo;
    rule.text = std::string(line);
    rule.line = line_no;
    out.rules_.push_back(std::move(rule));
  }
  if (out.rules_.empty()) throw RulesError(std::string(origin) + ": no usable rule");
  return out;
}

bool Rules::holds(const Condition& c, const Situation& s) {
  double x = 0;
  switch (c.var) {
    case Var::Always: return true;
    case Var::Multicast: return s.multicast;
    case Var::NoMulticast: return !s.multicast;
    case Var::Size: x = static_cast<double>(s.message_bytes); break;
    case Var::Nodes: x = s.nodes; break;
    case Var::Lanes: x = s.lanes; break;
    case Var::Spread: x = s.latency_spread; break;
  }
  switch (c.op) {
    case Op::Lt: return x < c.value;
    case Op::Le: return x <= c.value;
    case Op::Gt: return x > c.value;
    case Op::Ge: return x >= c.value;
    case Op::Eq: return x == c.value;
  }
  return false;
}

std::optional<size_t> Rules::first_match(const Situation& s) const {
  for (size_t i = 0; i < rules_.size(); ++i) {
    bool ok = true;
    for (const Condition& c : rules_[i].all) ok = ok && holds(c, s);
    if (ok) return i;
  }
  return std::nullopt;
}

Algo Rules::choose(const Situation& s) const {
  const std::optional<size_t> i = first_match(s);
  return i ? rules_[*i].algo : Algo::Chain;
}

}  // namespace lanecast::algos::autoselect
