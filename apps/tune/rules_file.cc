#include "apps/tune/rules_file.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>

#include "algos/auto/rules.h"
#include "apps/common/options.h"
#include "apps/common/subprocess.h"

namespace lanecast::apps {
namespace {

// A table as comments: a row per size, a column per algorithm of `t`,
// each cell what `cell` makes of the algorithm's time there ("-" where
// there is none).
std::string comment_table(const TimeTable& t, const std::function<std::string(uint64_t, const std::string&, double)>& cell) {
  std::set<std::string> algos;
  for (const auto& [size, at] : t)
    for (const auto& [a, us] : at) algos.insert(a);
  char b[64];
  std::snprintf(b, sizeof b, "# %8s", "size");
  std::string s = b;
  for (const auto& a : algos) {
    std::snprintf(b, sizeof b, " %13s", a.c_str());
    s += b;
  }
  s += "\n";
  for (const auto& [size, at] : t) {
    std::snprintf(b, sizeof b, "# %8s", format_size(size).c_str());
    s += b;
    for (const auto& a : algos) {
      const auto it = at.find(a);
      std::snprintf(b, sizeof b, " %13s", it == at.end() ? "-" : cell(size, a, it->second).c_str());
      s += b;
    }
    s += "\n";
  }
  return s;
}

std::string fixed1(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

}  // namespace

std::string fastest(const std::map<std::string, double>& at) {
  return std::min_element(at.begin(), at.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
}

// What plan predicts for (size, algo), or nullptr.
const double* predicted_at(const ModelFit* fit, uint64_t size, const std::string& algo) {
  if (fit == nullptr) return nullptr;
  const auto s = fit->predicted.find(size);
  if (s == fit->predicted.end()) return nullptr;
  const auto a = s->second.find(algo);
  return a == s->second.end() ? nullptr : &a->second;
}

// The plan command the fit found, as a user types it.
std::string plan_command(const ModelFit& fit, uint32_t nodes) {
  Argv argv{"lanecast", "plan", "--nodes", std::to_string(nodes)};
  for (const std::string& a : fit.params.plan_args()) argv.push_back(a);
  return command_line(argv);
}

// The rules: per size the fastest, switching at the geometric middle
// between two sizes measured; the built-in rules after them, for other
// group sizes. With a fit: plan's model and its prediction beside each time.
std::string rules_text(const TimeTable& t, uint32_t nodes, const std::string& how, const ModelFit* fit,
                       const std::string& stream_lines) {
  char when[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  std::string s = "# lanecast tune, " + std::string(when) + ": " + how + "\n";
  s += "# Completion in us, per size and algorithm:\n#\n";
  s += comment_table(t, [](uint64_t, const std::string&, double us) { return fixed1(us); });
  if (fit != nullptr) {
    s += "#\n# lanecast plan's model fitted to these times (docs/algorithms.md):\n#   " + plan_command(*fit, nodes) + "\n";
    for (const std::string& line : fit->how) s += "#   " + line + "\n";
    s += "# Its predictions over the times measured, less one:\n#\n";
    s += comment_table(t, [&](uint64_t size, const std::string& a, double us) -> std::string {
      const double* p = predicted_at(fit, size, a);
      if (p == nullptr) return "-";
      char b[32];
      std::snprintf(b, sizeof b, "%+.1f%%", (*p / us - 1) * 100);
      return b;
    });
  }
  if (!stream_lines.empty()) {
    s += "#\n";
    for (size_t at = 0; at < stream_lines.size();) {
      const size_t nl = stream_lines.find('\n', at);
      s += "# " + stream_lines.substr(at, nl - at) + "\n";
      at = nl == std::string::npos ? stream_lines.size() : nl + 1;
    }
  }
  s += "#\n# The fastest at each size, for groups of " + std::to_string(nodes) +
       "; the built-in rules below them for other groups.\n";
  std::vector<std::pair<uint64_t, std::string>> best;
  for (const auto& [size, at] : t) best.emplace_back(size, fastest(at));
  for (size_t i = 0; i < best.size(); ++i) {
    const bool last = i + 1 == best.size();
    if (!last && best[i + 1].second == best[i].second) continue;  // the next size's rule covers this one too
    const auto& at = t.at(best[i].first);
    const double us = at.at(best[i].second);
    std::string runner_up;
    double second = 0;
    for (const auto& [a, x] : at)
      if (a != best[i].second && (runner_up.empty() || x < second)) runner_up = a, second = x;
    std::string rule = "nodes == " + std::to_string(nodes);
    if (!last) {
      const auto middle = static_cast<uint64_t>(std::sqrt(static_cast<double>(best[i].first) *
                                                          static_cast<double>(best[i + 1].first)));
      rule += " and size <= " + std::to_string(middle);
    }
    rule += " -> " + best[i].second;
    char note[200];
    int used = std::snprintf(note, sizeof note, "%-44s # %s: %.1f us", rule.c_str(), format_size(best[i].first).c_str(), us);
    if (const double* p = predicted_at(fit, best[i].first, best[i].second);
        p != nullptr && used > 0 && static_cast<size_t>(used) < sizeof note)
      used += std::snprintf(note + used, sizeof note - used, " (plan %.1f)", *p);
    if (!runner_up.empty() && used > 0 && static_cast<size_t>(used) < sizeof note)
      std::snprintf(note + used, sizeof note - used, ", next %s %.1f us", runner_up.c_str(), second);
    s += std::string(note) + "\n";
  }
  s += "\n# The built-in rules (config/auto.rules):\n";
  s += std::string(algos::autoselect::kDefaultRules);
  if (!s.empty() && s.back() != '\n') s += '\n';
  return s;
}

// Written beside the target and renamed over it: never through a link
// planted at the name, never half a file.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::out | std::ios::trunc);
    if (!f) throw std::runtime_error("cannot write " + tmp);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp);
    throw std::runtime_error("cannot put the rules at " + path + ": " + ec.message());
  }
}

// The streams measured, one line each after a heading, for the rules'
// comments and the terminal alike.
std::string stream_text(const std::vector<StreamCheck>& streams, uint64_t size, uint64_t messages) {
  if (streams.empty()) return {};
  char line[400];
  std::snprintf(line, sizeof line, "A stream of %s-byte messages (%llu), measured; plan --stream's prediction beside:\n",
                format_size(size).c_str(), static_cast<unsigned long long>(messages));
  std::string s = line;
  for (const StreamCheck& x : streams) {
    const std::string mode = x.mode == "tree" ? "tree, fanout " + std::to_string(x.fanout) : x.mode;
    if (!x.error.empty()) {
      std::snprintf(line, sizeof line, "  %-16s not measured: %s\n", mode.c_str(), x.error.substr(0, 300).c_str());
    } else if (x.predicted_msgs_per_s > 0) {
      std::snprintf(line, sizeof line,
                    "  %-16s %12.1f msgs/s, plan %12.1f (%+.1f%%); frames per message %.4f, plan %.4f\n", mode.c_str(),
                    x.msgs_per_s, x.predicted_msgs_per_s, (x.predicted_msgs_per_s / x.msgs_per_s - 1) * 100,
                    x.frames_per_msg, x.predicted_copies_per_msg);
    } else {
      std::snprintf(line, sizeof line, "  %-16s %12.1f msgs/s; frames per message %.4f\n", mode.c_str(), x.msgs_per_s,
                    x.frames_per_msg);
    }
    s += line;
  }
  return s;
}

}  // namespace lanecast::apps
