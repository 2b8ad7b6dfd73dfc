#include "apps/tune/tune_command.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/common/progress_line.h"
#include "apps/common/subprocess.h"
#include "apps/tune/lanecast_run.h"
#include "apps/tune/model_fit.h"
#include "apps/tune/rules_file.h"
#include "apps/tune/stream_check.h"

namespace lanecast::apps {
namespace {

struct TuneConfig {
  std::string out = "tuned.rules";
  std::string sizes = "2,64K,1M,8M";
  std::string algos = "all";
  uint32_t iters = 10;
  // Small messages take microseconds and vary by tens of them (scheduling):
  // sizes up to kSmall are timed over more broadcasts.
  uint32_t small_iters = 200;
  bool check = false;
  bool json = false;
  bool quiet = false;
  // Which completion time ranks the algorithms: "avg" (bench's avg_us: in
  // process, the root's posting to the last member holding the message; one
  // member per process, osu_bcast's - each member's own average, the
  // largest), "span" (member processes: the root's posting to the last
  // member holding it, on one clock - the testbed's namespaces share the
  // host's) or "p50" (the median completion: in process, or the median span).
  // "": avg with --config (hosts with clocks of their own), p50 otherwise.
  std::string metric;
  std::vector<std::string> bench;  // after "--": where and how bench runs
  // --measured FILE: an earlier run's bench --json (or bench --testbed
  // --json) instead of measuring now.
  std::string measured;
  bool fit = true;  // --no-fit turns it off
  uint64_t stream_size = 0;  // --stream SIZE (0: no stream measured)
  uint64_t stream_messages = 200'000;
};

const char* const kUsage =
    "usage: lanecast tune [--out FILE] [--sizes LIST] [--algos LIST] [--iters K] [--small-iters K]\n"
    "                     [--metric p50|avg|span] [--check] [--no-fit] [--stream SIZE [--stream-messages N]]\n"
    "                     [--json] [--quiet]\n"
    "                     -- BENCH_OPTIONS   (where the group runs: --nodes N, --testbed N, --config FILE ...)\n"
    "       lanecast tune --measured FILE [--out FILE] [--metric p50|avg|span] [--no-fit] [--json]\n"
    "\n"
    "Measures every algorithm (--algos) at every size (--sizes) where the group runs, with\n"
    "`lanecast bench BENCH_OPTIONS` itself - in process (--nodes N and the fabric's options),\n"
    "on a testbed of namespaces (--testbed N, root), or on real hosts (--config FILE --rank R:\n"
    "every member runs the same command, rank 0 writes the file) - and writes a rules file\n"
    "that `--algo auto` follows (`bench --auto-rules FILE`, or `auto_rules` in a group file):\n"
    "at each size the fastest algorithm measured, switching halfway (geometrically) between\n"
    "the sizes measured, for this group size; the built-in rules follow for any other. Beside\n"
    "each rule, what was measured. --check then measures, side by side, the fastest algorithm\n"
    "of each size, auto with the written rules and auto with the built-in ones, and prints\n"
    "each as a share of the fastest. Progress and bench's own lines go to stderr.\n"
    "\n"
    "Then it fits `lanecast plan`'s model of the network to the times (the link rate, t0, a\n"
    "token bucket per port, the segment; docs/algorithms.md) and writes the plan command and\n"
    "its prediction beside every measured time, so plan can tell how this network would carry\n"
    "other sizes and group sizes. --measured FILE writes the rules and the fit from an earlier\n"
    "run's `bench --json` (or `bench --testbed N --json`) instead of measuring. --stream SIZE\n"
    "also measures a stream of SIZE-byte messages down the group's stream tree and over\n"
    "multicast, each beside what `plan --stream` predicts for it.\n"
    "\n";

OptionTable make_table(TuneConfig& c) {
  OptionTable t;
  t.add({"out", "FILE", "tuned.rules", "the rules file to write (replaced if it exists: never through a link)",
         [&](std::string_view v) { c.out = std::string(v); }});
  t.add({"sizes", "LIST", "2,64K,1M,8M", "message sizes to measure, as bench takes them ('a,b' and 'lo:hi')",
         [&](std::string_view v) { c.sizes = std::string(v); }});
  t.add({"algos", "LIST", "all", "algorithms to measure: 'all' or a list 'chain,bintree,...'",
         [&](std::string_view v) { c.algos = std::string(v); }});
  t.add({"iters", "K", "10", "timed broadcasts per algorithm and size (1..100000)",
         [&](std::string_view v) { c.iters = static_cast<uint32_t>(parse_uint(v, "--iters", 100'000)); }});
  t.add({"small-iters", "K", "200", "timed broadcasts per algorithm for sizes up to 64K, whose times vary most (1..1000000)",
         [&](std::string_view v) { c.small_iters = static_cast<uint32_t>(parse_uint(v, "--small-iters", 1'000'000)); }});
  t.add({"check", "", "", "after writing: the fastest, auto with the new rules and auto built in, side by side",
         [&](std::string_view) { c.check = true; }});
  t.add({"json", "", "", "print what was measured and chosen as one JSON object (docs/json.md)",
         [&](std::string_view) { c.json = true; }});
  t.add({"metric", "p50|avg|span", "avg with --config, else p50",
         "the time that ranks the algorithms: p50 (the median completion - with one member per process the median "
         "span - which the few broadcasts that waited for a CPU do not move), avg (bench's avg_us; one member per "
         "process: osu_bcast's, each member's own average, the largest) or span (member processes: the root's "
         "posting to the last member holding the message, on one clock - members that share a host, as the "
         "testbed's)",
         [&](std::string_view v) {
           if (v != "avg" && v != "span" && v != "p50")
             throw UsageError("--metric: '" + std::string(v) + "': p50, avg or span");
           c.metric = std::string(v);
         }});
  t.add({"measured", "FILE", "measure now",
         "take the times from FILE, an earlier `bench --json` or `bench --testbed N --json`, instead of running bench",
         [&](std::string_view v) { c.measured = std::string(v); }});
  t.add({"stream", "SIZE", "none",
         "also measure a stream of SIZE-byte messages (bench --stream), down the stream tree and over multicast, "
         "beside plan --stream's prediction",
         [&](std::string_view v) {
           c.stream_size = parse_size(v, "--stream");
           if (c.stream_size == 0 || c.stream_size > (64 << 10)) throw UsageError("--stream: 1 byte .. 64K");
         }});
  t.add({"stream-messages", "N", "200000", "--stream: messages per measurement (1000..100000000)",
         [&](std::string_view v) {
           c.stream_messages = parse_uint(v, "--stream-messages", 100'000'000);
           if (c.stream_messages < 1000) throw UsageError("--stream-messages: at least 1000");
         }});
  t.add({"no-fit", "", "", "do not fit plan's model to the times (it runs lanecast plan a few dozen times)",
         [&](std::string_view) { c.fit = false; }});
  t.add({"quiet", "", "", "no progress lines on stderr", [&](std::string_view) { c.quiet = true; }});
  return t;
}

struct Measured {
  std::string algo, chosen;
  uint32_t nodes = 0;
  uint64_t size = 0;
  double us = 0;  // completion, the members' average
  uint32_t segment = 0;  // payload bytes per frame (0: the bench did not say)
};

// The rows of bench --json output: one or more JSON values one after the
// other, each an array of rows (bench) or an object whose "results" is one
// (bench --testbed). None from a member that is not rank 0 (it prints
// nothing). `from` names the source in errors.
std::vector<Measured> rows_of(const std::string& text, const std::string& metric, const std::string& from) {
  std::vector<Measured> out;
  const char* field = metric == "span" ? "span_us" : metric == "p50" ? "p50_us" : "avg_us";
  std::istringstream in(text);
  for (uint32_t value = 1; (in >> std::ws, in.peek() != std::char_traits<char>::eof()); ++value) {
    Json j;
    try {
      in >> j;
    } catch (const Json::exception& e) {
      throw std::runtime_error(from + ": JSON value " + std::to_string(value) + ": " + e.what());
    }
    const Json* rows = j.is_array() ? &j : j.is_object() && j.contains("results") ? &j["results"] : nullptr;
    if (rows == nullptr || !rows->is_array())
      throw std::runtime_error(from + ": JSON value " + std::to_string(value) +
                               " is neither bench's array of rows nor an object with its \"results\"");
    for (const Json& row : *rows) {
      if (!row.is_object() || !row.contains("algo") || !row.contains("size") || !row.contains("nodes"))
        throw std::runtime_error(from + ": a row without algo, size and nodes: " +
                                 json_text(row).substr(0, 200));
      if (!row.value("verified", false))
        throw std::runtime_error(row.value("algo", std::string("?")) + " at " +
                                 std::to_string(row.value("size", uint64_t{0})) + " bytes was not verified: " +
                                 row.value("error", std::string("every member's bytes did not equal the root's")));
      if (!row.contains(field) || !row[field].is_number() || row[field].get<double>() <= 0)
        throw std::runtime_error("--metric " + metric + ": " + from + " gave no " + field +
                                 " (span is measured with one member per process)");
      out.push_back({row.at("algo").get<std::string>(), row.value("chosen", std::string()),
                     row.at("nodes").get<uint32_t>(), row.at("size").get<uint64_t>(), row.at(field).get<double>(),
                     row.value("segment", uint32_t{0})});
    }
  }
  return out;
}

constexpr uint64_t kSmall = 64 << 10;

// One `lanecast bench ... --json` run; its rows. Empty on a member that is
// not rank 0 (which prints nothing).
std::vector<Measured> run_bench_once(const TuneConfig& c, const std::string& algos, const std::string& sizes,
                                     uint32_t iters, const std::string& rules, ProgressLine& progress,
                                     const std::string& what) {
  Argv argv{this_program(), "bench"};
  argv.insert(argv.end(), c.bench.begin(), c.bench.end());
  argv.insert(argv.end(), {"--algo", algos, "--sizes", sizes, "--iters", std::to_string(iters), "--json", "--quiet"});
  if (!rules.empty()) argv.insert(argv.end(), {"--auto-rules", rules});
  const std::string out = run_lanecast(argv, &progress, what, std::chrono::hours(12));
  const std::vector<Measured> rows = rows_of(out, c.metric, "bench");
  if (rows.empty() && out.find_first_not_of(" \n") != std::string::npos)
    throw std::runtime_error("bench printed no results: " + tail_lines(out, 3));
  return rows;
}

// The sizes up to kSmall over --small-iters broadcasts, the rest over
// --iters: two bench runs (one when all sizes fall on one side).
std::vector<Measured> run_bench(const TuneConfig& c, const std::string& algos, const std::string& rules,
                                ProgressLine& progress, const std::string& what) {
  std::vector<uint64_t> small, large;
  for (const uint64_t b : parse_size_list(c.sizes, "--sizes")) (b <= kSmall ? small : large).push_back(b);
  std::vector<Measured> out;
  if (!small.empty()) out = run_bench_once(c, algos, size_list_text(small), c.small_iters, rules, progress, what);
  if (!large.empty()) {
    const std::vector<Measured> more = run_bench_once(c, algos, size_list_text(large), c.iters, rules, progress, what);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

using Table = TimeTable;  // size -> algorithm -> us

Table table_of(const std::vector<Measured>& m) {
  Table t;
  for (const Measured& x : m) t[x.size][x.algo] = x.us;
  return t;
}

// A table as --json gives it: per size, {"size", "fastest" (with_fastest),
// "us": {algorithm: us}}.
Json times_json(const Table& t, bool with_fastest) {
  Json sizes = Json::array();
  for (const auto& [size, at] : t) {
    Json one;
    one["size"] = size;
    if (with_fastest) one["fastest"] = fastest(at);
    Json all = Json::object();
    for (const auto& [a, us] : at) all[a] = rounded(us);
    one["us"] = std::move(all);
    sizes.push_back(std::move(one));
  }
  return sizes;
}

// The payload per frame when a bench did not report it (older versions):
// the engine's default.
constexpr uint32_t kDefaultSegment = 1400;

// --measured FILE: bench's rows from an earlier run; unless --metric says,
// the median where the file has one, else the span, else the average.
std::vector<Measured> measured_from_file(TuneConfig& c) {
  std::ifstream f(c.measured);
  if (!f) throw std::invalid_argument("--measured: cannot read " + c.measured);
  std::ostringstream text;
  text << f.rdbuf();
  if (c.metric.empty())  // older benches printed no median with one member per process
    c.metric = text.str().find("\"p50_us\"") != std::string::npos    ? "p50"
               : text.str().find("\"span_us\"") != std::string::npos ? "span"
                                                                       : "avg";
  std::vector<Measured> rows;
  try {
    rows = rows_of(text.str(), c.metric, c.measured);
  } catch (const std::runtime_error& e) {
    throw std::invalid_argument(std::string("--measured: ") + e.what());  // bad input: exit status 2
  }
  if (rows.empty()) throw std::invalid_argument("--measured: " + c.measured + " holds no bench rows");
  return rows;
}

}  // namespace

int tune_main(int argc, char** argv) {
  TuneConfig c;
  // Everything after "--" is bench's.
  int own = argc;
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--") {
      own = i;
      for (int k = i + 1; k < argc; ++k) c.bench.emplace_back(argv[k]);
      break;
    }
  OptionTable table = make_table(c);
  if (table.parse(own, argv, 1)) {
    std::printf("%soptions:\n%s", kUsage, table.help().c_str());
    return 0;
  }
  if (c.bench.empty() && c.measured.empty())
    throw UsageError("say where the group runs after --: e.g. lanecast tune -- --nodes 8, -- --testbed 8, or -- "
                     "--config FILE --rank R (or give --measured FILE)");
  if (c.bench.empty() && (c.check || c.stream_size != 0))
    throw UsageError(std::string(c.check ? "--check" : "--stream") + " runs bench: say where the group runs after --");
  if (c.check && std::find(c.bench.begin(), c.bench.end(), "--config") != c.bench.end())
    throw UsageError("--check with --config: every member would need rank 0's rules file; copy it to every host and "
                     "run bench --algo auto --auto-rules FILE there");
  for (const std::string& a : c.bench)
    for (const char* own_option : {"--algo", "--sizes", "--iters", "--json", "--auto-rules", "--stream"})
      if (a == own_option)
        throw UsageError(std::string(own_option) + " is tune's to give to bench: leave it out after --" +
                         (a == "--algo" ? " (tune's --algos)" : a == "--sizes" ? " (tune's --sizes)" : ""));
  if (c.metric.empty() && c.measured.empty())
    c.metric = std::find(c.bench.begin(), c.bench.end(), "--config") != c.bench.end() ? "avg" : "p50";
  ProgressLine progress(c.quiet);
  std::string how = "lanecast bench " + command_line(c.bench) + " --algo " + c.algos + " --sizes " + c.sizes +
                          " --iters " + std::to_string(c.iters) + " (" + std::to_string(c.small_iters) +
                          " up to 64K), ranked by " + c.metric;
  std::vector<Measured> measured;
  if (c.measured.empty()) {
    measured = run_bench(c, c.algos, "", progress, "measuring");
    if (measured.empty()) {
      // A member of a --config group: the same bench runs as rank 0, in the same order.
      if (c.stream_size != 0) check_streams(c.bench, 0, c.stream_size, c.stream_messages, nullptr, progress);
      std::fprintf(stderr, "lanecast tune: measured as a member; rank 0 writes the rules\n");
      return 0;
    }
  } else {
    measured = measured_from_file(c);
    how = "measured earlier: " + c.measured + ", ranked by " + c.metric;
  }
  const Table t = table_of(measured);
  const uint32_t nodes = measured.front().nodes;
  for (const Measured& m : measured)
    if (m.nodes != nodes)
      throw std::invalid_argument("the times are of groups of " + std::to_string(nodes) + " and of " +
                                  std::to_string(m.nodes) + ": one group size at a time");
  std::optional<ModelFit> fit;
  if (c.fit) {
    const uint32_t segment = measured.front().segment != 0 ? measured.front().segment : kDefaultSegment;
    progress.show("tune: fitting lanecast plan's model to the times");
    fit = fit_model(t, segment, plan_predictor(this_program(), nodes));
    progress.clear();
  }
  std::vector<StreamCheck> streams;
  if (c.stream_size != 0)
    streams = check_streams(c.bench, nodes, c.stream_size, c.stream_messages, fit ? &fit->params : nullptr, progress);
  const std::string streams_said = stream_text(streams, c.stream_size, c.stream_messages);
  const std::string text = rules_text(t, nodes, how, fit ? &*fit : nullptr, streams_said);
  algos::autoselect::Rules::parse(text, c.out);  // what it wrote, auto must read
  write_file(c.out, text);

  Json out;
  out["rules"] = c.out;
  out["nodes"] = nodes;
  out["measured"] = times_json(t, /*with_fastest=*/true);
  if (fit) {
    Json model;
    model["bw_mbytes_per_s"] = fit->params.bw_mbytes;
    model["t0_us"] = fit->params.t0_us;
    model["port_burst_bytes"] = fit->params.burst_bytes;
    model["segment"] = fit->params.segment;
    model["plan"] = plan_command(*fit, nodes);
    model["how"] = fit->how;
    model["plan_runs"] = fit->predictions;
    model["predicted"] = times_json(fit->predicted, /*with_fastest=*/false);
    out["model"] = std::move(model);
  }
  if (!streams.empty()) {
    Json rows = Json::array();
    for (const StreamCheck& x : streams) {
      Json one;
      one["mode"] = x.mode;
      one["fanout"] = x.fanout;
      one["size"] = c.stream_size;
      one["messages"] = c.stream_messages;
      if (!x.error.empty()) {
        one["error"] = x.error;
      } else {
        one["msgs_per_s"] = rounded(x.msgs_per_s, 1);
        one["frames_per_msg"] = rounded(x.frames_per_msg, 4);
        if (x.predicted_msgs_per_s > 0) {
          one["predicted_msgs_per_s"] = rounded(x.predicted_msgs_per_s, 1);
          one["predicted_copies_per_msg"] = rounded(x.predicted_copies_per_msg, 4);
        }
      }
      rows.push_back(std::move(one));
    }
    out["stream"] = std::move(rows);
  }
  if (!c.json) {
    std::printf("lanecast tune: %u members, %zu algorithms x %zu sizes measured; rules written to %s\n", nodes,
                t.begin()->second.size(), t.size(), c.out.c_str());
    for (const auto& [size, at] : t) {
      const std::string best = fastest(at);
      std::printf("  %8s  %-18s %10.1f us", format_size(size).c_str(), best.c_str(), at.at(best));
      if (const double* p = predicted_at(fit ? &*fit : nullptr, size, best)) std::printf("  (plan %.1f us)", *p);
      std::printf("\n");
    }
    if (fit) {
      double worst = 0;
      for (const auto& [size, at] : t)
        for (const auto& [a, us] : at)
          if (const double* p = predicted_at(&*fit, size, a)) worst = std::max(worst, std::fabs(*p / us - 1));
      std::printf("plan's model of this group, fitted (every prediction within %.1f%% of what was measured; the "
                  "rules file has each):\n  %s\n",
                  worst * 100, plan_command(*fit, nodes).c_str());
    }
    if (!streams_said.empty()) std::printf("%s", streams_said.c_str());
  }

  if (c.check) {
    // The fastest of each size and auto with the new rules in one run; auto
    // built in right after.
    std::set<std::string> best;
    for (const auto& [size, at] : t) best.insert(fastest(at));
    std::string list;
    for (const auto& a : best) list += a + ",";
    const std::vector<Measured> tuned = run_bench(c, list + "auto", c.out, progress, "checking the rules");
    const std::vector<Measured> builtin = run_bench(c, "auto", "", progress, "checking the built-in rules");
    Json rows = Json::array();
    if (!c.json)
      std::printf("\n  %8s  %-26s  %-30s  %-30s\n", "size", "fastest (us)", "auto, these rules: us (share)",
                  "auto, built in: us (share)");
    for (const auto& [size, at] : t) {
      double best_us = 1e300;
      std::string best_algo;
      const Measured *mine = nullptr, *theirs = nullptr;
      for (const Measured& m : tuned)
        if (m.size == size) {
          if (m.algo == "auto") mine = &m;
          else if (m.us < best_us) best_us = m.us, best_algo = m.algo;
        }
      for (const Measured& m : builtin)
        if (m.size == size) theirs = &m;
      if (mine == nullptr || theirs == nullptr || best_algo.empty()) continue;
      Json row;
      row["size"] = size;
      row["fastest"] = best_algo;
      row["fastest_us"] = rounded(best_us);
      row["tuned_chosen"] = mine->chosen;
      row["tuned_us"] = rounded(mine->us);
      row["tuned_share"] = rounded(mine->us / best_us, 4);
      row["builtin_chosen"] = theirs->chosen;
      row["builtin_us"] = rounded(theirs->us);
      row["builtin_share"] = rounded(theirs->us / best_us, 4);
      rows.push_back(row);
      if (!c.json) {
        char a[64], b[64], d[64];
        std::snprintf(a, sizeof a, "%s %.1f", best_algo.c_str(), best_us);
        std::snprintf(b, sizeof b, "%s %.1f (%.3f)", mine->chosen.c_str(), mine->us, mine->us / best_us);
        std::snprintf(d, sizeof d, "%s %.1f (%.3f)", theirs->chosen.c_str(), theirs->us, theirs->us / best_us);
        std::printf("  %8s  %-26s  %-30s  %-30s\n", format_size(size).c_str(), a, b, d);
      }
    }
    out["check"] = std::move(rows);
  }
  if (c.json) print_json(out);
  return 0;
}

}  // namespace lanecast::apps
