// `lanecast stat --dir DIR`: a daemon's counters, live, like top: every
// counter that is not zero with its rate since the last refresh, read from
// the stats file the daemon keeps in its directory (metrics.h).
#include <unistd.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>

#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/common/stop_signals.h"
#include "apps/daemon/daemon_command.h"
#include "apps/daemon/metrics.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

struct StatConfig {
  std::string dir;
  bool once = false;
  bool all = false;
  double interval_s = 1;
  uint64_t count = 0;  // refreshes; 0: until interrupted
  std::string filter;
  bool json = false;  // one JSON object per refresh, one per line (JSON Lines)
  std::string daemon_user;  // whose stats file is trusted beside root's and ours
};

const char* kStatUsage =
    "usage: lanecast stat --dir DIR [--once] [--interval S] [--count N] [--filter TEXT] [--all] [--json]\n"
    "\n"
    "Shows the counters of the `lanecast daemon` serving DIR (its --dir; by default\n"
    "/run/lanecast/GROUP-rRANK): every counter that is not zero, its value and its\n"
    "rate per second since the last refresh, refreshed every S seconds until\n"
    "interrupted (or N times). The same counters are in the daemon's --prometheus file;\n"
    "when the stats file could not hold them all, a note line says how many are missing.\n"
    "--json prints each refresh as one JSON object on one line (docs/json.md).\n"
    "The stats file must belong to root, this user or --daemon-user (default\n"
    "LANECAST_DAEMON_USER): whoever made DIR first owns what is in it, and an\n"
    "impostor's counters are refused, not shown.\n"
    "\n";

// Whether a counter is shown: not zero (unless --all) and its name holding
// --filter's text.
bool shown(const StatConfig& c, const std::string& name, uint64_t v) {
  return (c.all || v != 0) && (c.filter.empty() || name.find(c.filter) != std::string::npos);
}

// --json: one refresh as one object.
void print_stat_json(const StatConfig& c, const daemon::StatsSnapshot& s, double age_s,
                     const std::map<std::string, double>& rates) {
  Json j;
  j["group"] = s.group;
  j["rank"] = s.rank;
  j["group_size"] = s.group_size;
  j["pid"] = s.pid;
  j["age_s"] = rounded(age_s);
  j["stats_file"] = c.dir + "/stats";
  j["note"] = daemon::stats_cut_note(s);
  Json counters = Json::object(), per_s = Json::object();
  for (const auto& [name, v] : s.entries) {
    if (!shown(c, name, v)) continue;
    counters[name] = v;
    if (const auto it = rates.find(name); it != rates.end()) per_s[name] = rounded(it->second, 1);
  }
  j["counters"] = std::move(counters);
  j["per_s"] = std::move(per_s);
  print_json(j);
}

}  // namespace

int stat_main(int argc, char** argv) {
  StatConfig c;
  OptionTable t;
  t.add({"dir", "DIR", "", "the daemon's directory", [&](std::string_view v) { c.dir = std::string(v); }});
  t.add({"once", "", "", "print once and exit", [&](std::string_view) { c.once = true; }});
  t.add({"all", "", "", "zero counters too", [&](std::string_view) { c.all = true; }});
  t.add({"interval", "S", "1", "seconds between refreshes",
         [&](std::string_view v) { c.interval_s = parse_double(v, "--interval", 0.05, 3600); }});
  t.add({"count", "N", "0", "refreshes before exiting (0: until interrupted)",
         [&](std::string_view v) { c.count = parse_uint(v, "--count", UINT64_MAX); }});
  t.add({"filter", "TEXT", "", "only counters whose name contains TEXT",
         [&](std::string_view v) { c.filter = std::string(v); }});
  t.add({"json", "", "", "each refresh as one JSON object on one line", [&](std::string_view) { c.json = true; }});
  t.add({"daemon-user", "USER", "", "the daemon's user, trusted beside root and this user (else LANECAST_DAEMON_USER)",
         [&](std::string_view v) { c.daemon_user = std::string(v); }});
  if (t.parse(argc, argv, 1)) {
    std::fputs(kStatUsage, stdout);
    std::fputs(t.help().c_str(), stdout);
    return 0;
  }
  if (c.dir.empty()) throw UsageError("--dir DIR is required: the daemon's directory (its --dir)");
  if (c.once) c.count = 1;
  if (c.daemon_user.empty())
    if (const char* u = std::getenv("LANECAST_DAEMON_USER"); u != nullptr) c.daemon_user = u;
  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  StopSignals signals;
  std::map<std::string, uint64_t> last;
  uint64_t last_ns = 0;
  for (uint64_t round = 0; c.count == 0 || round < c.count; ++round) {
    if (round > 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(c.interval_s);
      while (std::chrono::steady_clock::now() < until && StopSignals::received() == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (StopSignals::received() != 0) break;
    }
    const daemon::StatsSnapshot s = daemon::read_stats(c.dir + "/stats", c.daemon_user);
    const uint64_t now = clock_ns();
    const double age_s = now > s.updated_ns ? static_cast<double>(now - s.updated_ns) / 1e9 : 0.0;
    const double dt = last_ns && s.updated_ns > last_ns ? static_cast<double>(s.updated_ns - last_ns) / 1e9 : 0;
    std::map<std::string, double> rates;
    for (const auto& [name, v] : s.entries)
      if (const auto it = last.find(name); dt > 0 && it != last.end() && v >= it->second)
        rates[name] = static_cast<double>(v - it->second) / dt;
    if (s.updated_ns != last_ns) {
      last.clear();
      for (const auto& [name, v] : s.entries) last[name] = v;
      last_ns = s.updated_ns;
    }
    if (c.json) {
      print_stat_json(c, s, age_s, rates);
      std::fflush(stdout);
      continue;
    }
    if (tty && !c.once) std::fputs("\033[H\033[2J", stdout);
    std::printf("lanecast stat: group %s, rank %u of %u, daemon pid %d, counters %.1f s old (%s/stats)\n",
                s.group.c_str(), s.rank, s.group_size, s.pid, age_s, c.dir.c_str());
    if (const std::string note = daemon::stats_cut_note(s); !note.empty()) std::printf("%s\n", note.c_str());
    std::printf("%-78s %16s %14s\n", "counter", "value", dt > 0 ? "per_s" : "");
    for (const auto& [name, v] : s.entries) {
      if (!shown(c, name, v)) continue;
      if (const auto it = rates.find(name); it != rates.end())
        std::printf("%-78s %16" PRIu64 " %14.1f\n", name.c_str(), v, it->second);
      else
        std::printf("%-78s %16" PRIu64 " %14s\n", name.c_str(), v, "");
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace lanecast::apps
