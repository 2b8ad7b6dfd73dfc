#include "apps/plan/plan_command.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algos/hypercube.h"
#include "algos/multilane.h"
#include "algos/mcast_chain.h"
#include "algos/sim/simulator.h"
#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/plan/plan_auto.h"
#include "apps/plan/plan_options.h"
#include "apps/plan/plan_stream.h"

namespace lanecast::apps {
namespace {

using algos::sim::Picos;
using algos::sim::SimResult;

// Above this many (node, segment) pairs the action checks would need too much
// memory (a bit each, 128 MiB at the limit); the run goes unchecked, as with
// --no-validate.
constexpr uint64_t kValidateLimit = uint64_t{1} << 30;

struct Run {
  algos::Algo algo;
  std::optional<AutoPick> pick;  // --algo auto: why `algo`
  uint32_t nodes;
  uint64_t size;
  uint32_t segments;
  SimResult result;
  algos::sim::SegmentFit fit;    // --fit: read off a line, or why the full run
  algos::sim::NodeFit node_fit;  // large groups: read off smaller ones (node_fit.h), or why not
};

struct Summary {
  algos::Algo algo;
  bool picked;  // by --algo auto
  uint32_t nodes;
  uint64_t size;
  Picos completion;
  bool complete;
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string us(Picos t) { return fmt("%.3f", static_cast<double>(t) / 1e6); }

template <class T>
std::string min_med_max(std::vector<T> v, bool as_us) {
  std::sort(v.begin(), v.end());
  auto show = [&](T x) {
    return as_us ? us(static_cast<Picos>(x)) : std::to_string(static_cast<uint64_t>(x));
  };
  return "min " + show(v.front()) + "  median " + show(v[(v.size() - 1) / 2]) + "  max " + show(v.back());
}

uint64_t total(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

// The rank that synchronises mcast_chain's root in this plan, or kNoRank.
algos::Rank sync_rank(const PlanConfig& c, const Run& r) {
  if (r.algo != algos::Algo::McastChain || c.algo_options.sync_seed == 0 || r.nodes < 2 || r.size == 0)
    return algos::kNoRank;
  return algos::mcast_sync_rank(c.algo_options.sync_seed, c.op, r.nodes, c.root);
}

// Process skew and mcast_chain's multicast: start times, copies lost, the
// synchronising rank.
void print_mcast_lines(const PlanConfig& c, const Run& r) {
  const SimResult& s = r.result;
  if (c.net.start_skew > 0 || !c.net.start_times.empty())
    std::cout << "  rank start     " << min_med_max(s.start, true) << " us\n";
  if (r.algo != algos::Algo::McastChain) return;
  std::cout << "  multicast lost " << total(s.multicast_lost) << " copies to the network, "
            << total(s.multicast_unposted) << " to skew (came before the receiver started)\n";
  if (const algos::Rank k = sync_rank(c, r); k != algos::kNoRank)
    std::cout << "  sync rank      " << k << " (operation " << c.op << ")\n";
}

// Which rule chose, and from what (the parts of the situation not in the run's
// first line).
void print_pick(const PlanConfig& c, const AutoPick& pick) {
  std::cout << "  chosen by      ";
  if (pick.rule)
    std::cout << rule_origin(c, *pick.rule) << " '" << c.auto_rules->text(*pick.rule) << "'";
  else
    std::cout << "no rule (chain, the fallback of rules without 'always')";
  std::cout << " (lanes " << pick.situation.lanes << (pick.situation.multicast ? ", multicast" : ", no multicast")
            << ", latency spread " << fmt("%g", pick.situation.latency_spread) << ")\n";
}

void print_text(const PlanConfig& c, const Run& r) {
  const SimResult& s = r.result;
  if (r.pick) std::cout << "auto -> ";
  std::cout << algos::algo_info(r.algo).name << ": " << r.nodes << " nodes, " << format_size(r.size)
            << " (" << r.size << " B) in " << r.segments << " segments of " << c.segment << " B\n";
  if (r.pick) print_pick(c, *r.pick);
  if (!s.complete) std::cout << "  INCOMPLETE     " << s.problem << "\n";
  std::cout << "  predicted      " << us(s.completion) << " us\n";
  if (r.node_fit.used) {
    const algos::sim::NodeFit& f = r.node_fit;
    const algos::sim::NodeFitShape shape = algos::sim::node_fit_shape(r.algo);
    std::cout << "  method         fitted in the group size: simulated on " << f.points[0] << ", " << f.points[1]
              << " and " << f.points[2] << " nodes";
    if (shape.axis == algos::sim::NodeFitShape::Axis::Scaled)
      std::cout << " (" << f.segments[0] << ", " << f.segments[1] << " and " << f.segments[2]
                << " segments: the same per node), read off the line in nodes";
    else
      std::cout << ", read off the line in log2(nodes)";
    std::cout << " at " << r.nodes << " (" << fmt("%.3f", 100 * f.off_line) << "% off it at "
              << f.points[shape.chord ? 1 : 0] << "); per-rank figures are not simulated\n";
    return;
  }
  if (!r.node_fit.why_not.empty()) std::cout << "  group-size fit " << r.node_fit.why_not << "\n";
  if (r.fit.used)
    std::cout << "  method         fitted: simulated at " << r.fit.points[0] << ", " << r.fit.points[1] << " and "
              << r.fit.points[2] << " segments" << (r.fit.simulated > 3 ? " (" + std::to_string(r.fit.simulated) + " points: it climbed)" : "")
              << ", read off the line at " << r.segments << " (" << fmt("%.3f", 100 * r.fit.off_line) << "% off it at the first)"
              << (s.finish.empty() ? "; only the completion, per-rank figures are not simulated" : "") << "\n";
  else if (r.fit.refused)
    std::cout << "  method         simulated in full: " << r.fit.why_not << "\n";
  if (s.finish.empty()) return;  // a fit of the completion only
  std::cout
            << "  rank finish    " << min_med_max(s.finish, true) << " us\n"
            << "  bytes sent     " << min_med_max(s.bytes_sent, false) << "  total "
            << std::accumulate(s.bytes_sent.begin(), s.bytes_sent.end(), uint64_t{0}) << "\n"
            << "  bytes received " << min_med_max(s.bytes_received, false) << "\n"
            << "  peers          " << min_med_max(s.peers, false) << "\n";
  print_mcast_lines(c, r);
  if (r.nodes > 16 && !c.per_rank) return;
  char line[160];
  std::snprintf(line, sizeof line, "  %6s %14s %14s %14s %6s\n", "rank", "finish_us", "sent", "received",
                "peers");
  std::cout << line;
  for (uint32_t i = 0; i < r.nodes; ++i) {
    std::snprintf(line, sizeof line, "  %6u %14s %14" PRIu64 " %14" PRIu64 " %6u\n", i, us(s.finish[i]).c_str(),
                  s.bytes_sent[i], s.bytes_received[i], s.peers[i]);
    std::cout << line;
  }
}

double us_value(Picos t) { return rounded(static_cast<double>(t) / 1e6); }

// "algo" is what was asked for, "chosen" what ran; with auto, the rule that
// chose (null when none matched) and the situation fields not given elsewhere.
void add_json_choice(Json& j, const PlanConfig& c, const Run& r) {
  const std::string_view name = algos::algo_info(r.algo).name;
  j["algo"] = r.pick ? std::string_view("auto") : name;
  j["chosen"] = name;
  if (!r.pick) return;
  const AutoPick& p = *r.pick;
  j["rule"] = p.rule ? Json(c.auto_rules->text(*p.rule)) : Json();
  j["rule_at"] = p.rule ? Json(rule_origin(c, *p.rule)) : Json();
  j["multicast"] = p.situation.multicast;
  // JSON has no infinity: some pairs have latency 0, others not - null.
  j["latency_spread"] = std::isfinite(p.situation.latency_spread) ? Json(p.situation.latency_spread) : Json();
}

Json run_json(const PlanConfig& c, const Run& r) {
  const SimResult& s = r.result;
  Json j;
  add_json_choice(j, c, r);
  j["nodes"] = r.nodes;
  j["size"] = r.size;
  j["segment"] = c.segment;
  j["lanes"] = c.lanes;
  j["root"] = c.root;
  j["order"] = c.order;
  j["t0_us"] = c.t0_us;
  j["bw_mbytes_per_s"] = c.bw_mbytes;
  j["port_burst_bytes"] = c.net.port_burst_bytes;
  j["tx_order"] = c.net.tx_order == algos::sim::TxOrder::Fifo ? "fifo" : "rr";
  j["topology"] = c.topology_file;
  j["mcast_loss"] = c.net.multicast_loss;
  j["root_delay_us"] = double(c.algo_options.root_delay_ns) / 1e3;
  j["sync_seed"] = c.algo_options.sync_seed;
  const algos::Rank k = sync_rank(c, r);
  j["sync_rank"] = k != algos::kNoRank ? Json(k) : Json();
  j["skew_us"] = double(c.net.start_skew) / 1e6;
  j["skew_seed"] = c.net.skew_seed;
  j["multicast_lost"] = total(s.multicast_lost);
  j["multicast_unposted"] = total(s.multicast_unposted);
  j["complete"] = s.complete;
  if (!s.complete) j["problem"] = s.problem;
  j["predicted_us"] = us_value(s.completion);
  j["method"] = r.node_fit.used ? "node-fit" : r.fit.used ? "fit" : "simulated";
  j["node_fit_points"] = r.node_fit.points[0] != 0 ? Json(std::vector<uint32_t>(r.node_fit.points, r.node_fit.points + 3)) : Json();
  j["node_fit_segments"] = r.node_fit.points[0] != 0 ? Json(std::vector<uint32_t>(r.node_fit.segments, r.node_fit.segments + 3)) : Json();
  j["node_fit_off_line"] = r.node_fit.points[0] != 0 ? Json(r.node_fit.off_line) : Json();
  j["node_fit_why_not"] = r.node_fit.why_not.empty() ? Json() : Json(r.node_fit.why_not);
  j["fit_why_not"] = r.fit.refused ? Json(r.fit.why_not) : Json();
  j["fit_off_line"] = r.fit.used ? Json(r.fit.off_line) : Json();
  j["fit_points"] = r.fit.simulated > 0 ? Json(std::vector<uint32_t>(r.fit.points, r.fit.points + 3)) : Json();
  j["fit_simulated"] = r.fit.simulated;
  Json finish = Json::array(), start = Json::array();
  for (const Picos t : s.finish) finish.push_back(us_value(t));
  for (const Picos t : s.start) start.push_back(us_value(t));
  j["rank_finish_us"] = std::move(finish);
  j["rank_start_us"] = std::move(start);
  j["bytes_sent"] = s.bytes_sent;
  j["bytes_received"] = s.bytes_received;
  j["peers"] = s.peers;
  return j;
}

void print_header(const PlanConfig& c) {
  std::cout << "# lanecast plan: t0 " << fmt("%g", c.t0_us) << " us, link " << fmt("%g", c.bw_mbytes)
            << " MB/s, lanes " << c.lanes << (c.net.lanes_share_port ? " (one shared port)" : "")
            << ", root " << c.root << ", tx order "
            << (c.net.tx_order == algos::sim::TxOrder::Fifo ? "fifo" : "round robin");
  if (!c.topology_file.empty()) std::cout << ", topology " << c.topology_file;
  if (c.order != "id") std::cout << ", order " << c.order;
  if (c.auto_rules) std::cout << ", auto rules " << (c.auto_rules_file.empty() ? "built in" : c.auto_rules_file);
  if (c.net.frame_overhead_bytes > 0) std::cout << ", +" << c.net.frame_overhead_bytes << " B/frame";
  if (c.net.frame_overhead_time > 0) std::cout << ", +" << us(c.net.frame_overhead_time) << " us/frame";
  if (c.net.port_capacity > 0) std::cout << ", port " << fmt("%g", c.net.port_capacity / 1e6) << " MB/s";
  if (c.net.switch_capacity > 0) std::cout << ", switch " << fmt("%g", c.net.switch_capacity / 1e6) << " MB/s";
  if (c.net.switch_buffer_frames > 0) std::cout << ", switch buffer " << c.net.switch_buffer_frames << " frames/port";
  if (c.net.multicast_loss > 0)
    std::cout << ", multicast loss " << fmt("%g", c.net.multicast_loss) << " (seed " << c.net.multicast_seed << ")";
  if (c.algo_options.root_delay_ns > 0) std::cout << ", root delay " << fmt("%g", double(c.algo_options.root_delay_ns) / 1e3) << " us";
  if (c.algo_options.sync_seed != 0) std::cout << ", sync seed " << c.algo_options.sync_seed;
  if (c.net.start_skew > 0)
    std::cout << ", skew up to " << us(c.net.start_skew) << " us (seed " << c.net.skew_seed << ")";
  std::cout << "\n";
}

void print_summary(const std::vector<Summary>& runs) {
  std::cout << "\n# summary\n";
  char line[128];
  std::snprintf(line, sizeof line, "%-24s %8s %10s %16s\n", "algo", "nodes", "size", "predicted_us");
  std::cout << line;
  for (const Summary& r : runs) {
    const std::string name(algos::algo_info(r.algo).name);
    std::snprintf(line, sizeof line, "%-24s %8u %10s %16s%s\n", (r.picked ? "auto -> " + name : name).c_str(),
                  r.nodes, format_size(r.size).c_str(), us(r.completion).c_str(), r.complete ? "" : "  INCOMPLETE");
    std::cout << line;
  }
}

// The hypercube's order for the plan from the topology's latencies (picoseconds):
// Figueira's passes (--order form-double, form1, form2, form3), or, for --order
// form, form_hypercube_best with the port time of the whole message on one hop
// as the simulator sees it (two nodes, no latency).
std::vector<algos::Rank> form_order(const PlanConfig& c, const algos::Plan& plan) {
  const uint32_t p = plan.nodes();
  std::vector<double> latency(size_t{p} * p, 0);
  for (algos::Rank a = 0; a < p; ++a)
    for (algos::Rank b = 0; b < p; ++b)
      if (a != b) latency[size_t{a} * p + b] = static_cast<double>(c.net.latency.latency(a, b));
  if (!c.form_best) return algos::topology::form_hypercube(p, latency, c.form_passes);
  algos::PlanParams two;
  two.nodes = 2;
  two.lanes = plan.lanes();
  two.message_bytes = plan.message_bytes();
  two.segment_bytes = plan.segment_bytes();
  algos::sim::Network flat = c.net;
  flat.latency = algos::sim::LatencyMap(0);
  algos::sim::SimOptions quick;
  quick.validate = false;
  const double hop = static_cast<double>(
      algos::sim::simulate(algos::Algo::Hypercube, algos::Plan(two), flat, quick).completion);
  algos::topology::FormBestOptions o;
  o.root = plan.root();
  return algos::topology::form_hypercube_best(p, latency, hop, o).order;
}

SimResult simulate_one(const PlanConfig& c, algos::Algo a, const algos::Plan& plan,
                       const algos::sim::SimOptions& opt) {
  if (a == algos::Algo::Multilane && c.chain_sites) {
    const std::span<const uint32_t> sites(c.site_of_rank.data(), plan.nodes());
    return algos::sim::simulate(
        plan, [&](algos::Rank r) { return algos::make_multilane(plan, r, sites); }, c.net, opt);
  }
  if (c.order == "id" || a != algos::Algo::Hypercube) return algos::sim::simulate(a, plan, c.net, opt);
  const std::vector<algos::Rank> order = form_order(c, plan);
  return algos::sim::simulate(
      plan, [&](algos::Rank r) { return algos::make_hypercube(plan, r, order); }, c.net, opt);
}

// The group-size fit reads a plan off smaller groups of the same network:
// not when the network is given per pair (a topology file), the ranks are
// reordered or grouped into sites, or randomness (loss, skew) makes each
// run its own.
bool node_fit_applies(const PlanConfig& c) {
  return c.fit.mode != algos::sim::FitOptions::Mode::Never && c.topology_file.empty() && c.order == "id" &&
         !c.chain_sites && c.net.multicast_loss == 0 && c.net.start_skew == 0 && c.net.start_times.empty();
}

// A line on stderr when a run starts that may take more than a few
// seconds, and one when it ends (never on stdout: --json stays whole).
class Progress {
 public:
  static constexpr uint64_t kLongWork = uint64_t{1} << 24;  // (node, segment) pairs: about 2 s
  Progress(const PlanConfig& c, const Run& r)
      : on_(!c.quiet && uint64_t{r.nodes} * r.segments > kLongWork), nodes_(r.nodes),
        start_(std::chrono::steady_clock::now()) {
    if (!on_) return;
    what_ = std::string(algos::algo_info(r.algo).name) + ", " + std::to_string(r.nodes) + " nodes, " +
            format_size(r.size);
    std::cerr << "plan: " << what_ << ": " << r.segments << " segments on every node...\n";
  }
  // Each simulation the run makes: a fit's points (segments, or a smaller
  // group), or the full plan.
  void simulating(uint32_t segments, uint32_t of, uint32_t nodes) const {
    if (!on_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::cerr << "plan: " << what_ << ": at " << fmt("%.1f", s) << " s, ";
    if (nodes != nodes_) std::cerr << "group-size fit point " << nodes << " nodes, ";
    if (segments != of) std::cerr << "fit point " << segments << " segments\n";
    else if (nodes != nodes_) std::cerr << "every segment\n";
    else std::cerr << "simulating in full" << full_hint(uint64_t{nodes} * segments) << "\n";
  }
  // A full simulation far past kLongWork: how long it may take, and how
  // not to wait (a user who asked for every algorithm at 4096 nodes x 1 GiB
  // otherwise watched symmetric's line for minutes). Paces on one core of
  // this project's 2-CPU VM: kLongWork's 2 s (8.4M (node, segment) pairs a
  // second) the fastest; symmetric covered 4.5M (196M pairs in 44 s).
  static std::string full_hint(uint64_t pairs) {
    if (pairs < 16 * kLongWork) return "";
    const uint64_t lo = pairs / (kLongWork / 2) / 60, hi = pairs / 4'500'000 / 60 + 1;
    const std::string span = lo == 0 ? "up to " + std::to_string(hi) : std::to_string(lo) + "-" + std::to_string(hi);
    return " (" + std::to_string(pairs / 1'000'000) + "M (node, segment) pairs: roughly " + span +
           " min; no fit applies here - leave the algorithm out of --algo, or a smaller --size or --nodes takes less)";
  }
  void done(const Run& r) const {
    if (!on_) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::cerr << "plan: " << what_ << ": " << fmt("%.1f", s) << " s ("
              << (r.node_fit.used ? "fitted in the group size" : r.fit.used ? "fitted" : "simulated in full") << ")\n";
  }

 private:
  bool on_;
  uint32_t nodes_;
  std::chrono::steady_clock::time_point start_;
  std::string what_;
};

int run_plan(const PlanConfig& c) {
  std::vector<Summary> runs;
  bool all_complete = true;
  if (c.json) std::cout << "[\n";
  else print_header(c);
  // What to run per point: an algorithm, or none for the auto rules' choice.
  std::vector<std::optional<algos::Algo>> wanted(c.algos.begin(), c.algos.end());
  if (c.auto_rules) wanted.push_back(std::nullopt);
  for (const std::optional<algos::Algo>& want : wanted)
    for (uint32_t p : c.nodes)
      for (uint64_t n : c.sizes) {
        std::optional<AutoPick> pick;
        if (!want) pick = pick_auto(c, p, n);
        const algos::Algo a = want ? *want : pick->algo;
        algos::PlanParams pp;
        pp.nodes = p;
        pp.root = c.root;
        pp.lanes = c.lanes;
        pp.message_bytes = n;
        pp.segment_bytes = c.segment;
        pp.op = c.op;
        pp.algo = c.algo_options;
        const algos::Plan plan(pp);
        Run r{a, pick, p, n, plan.segments(), {}, {}, {}};
        const Progress progress(c, r);
        const auto simulate_plan = [&](const algos::Plan& pl) {
          progress.simulating(pl.segments(), plan.segments(), pl.nodes());
          algos::sim::SimOptions opt;
          opt.validate = c.validate && uint64_t{pl.nodes()} * pl.segments() <= kValidateLimit;
          return simulate_one(c, a, pl, opt);
        };
        if (node_fit_applies(c))
          r.result = algos::sim::simulate_node_fitted(
              a, plan,
              [&](const algos::Plan& smaller) {
                // Each smaller group fitted in the segments too, whatever its size.
                algos::sim::FitOptions fit = algos::sim::limited(c.fit, a, smaller.nodes());
                fit.mode = algos::sim::FitOptions::Mode::Always;
                algos::sim::SegmentFit ignored;
                return algos::sim::simulate_fitted(smaller, simulate_plan, fit, &ignored);
              },
              c.node_fit, &r.node_fit);
        if (!r.node_fit.used)
          r.result = algos::sim::simulate_fitted(plan, simulate_plan, algos::sim::limited(c.fit, a, p), &r.fit);
        progress.done(r);
        all_complete = all_complete && r.result.complete;
        if (c.json) {
          if (!runs.empty()) std::cout << ",\n";
          std::cout << json_text(run_json(c, r));
        } else {
          print_text(c, r);
        }
        std::cout.flush();
        runs.push_back({a, pick.has_value(), p, n, r.result.completion, r.result.complete});
      }
  if (c.json) std::cout << "\n]\n";
  else if (runs.size() > 1) print_summary(runs);
  return all_complete ? 0 : 1;
}

}  // namespace

int plan_main(int argc, char** argv) {
  try {
    const PlanConfig c = parse_plan_options(argc, argv);
    if (c.help) {
      std::cout << plan_help();
      return 0;
    }
    return c.stream.on ? run_plan_stream(c) : run_plan(c);
  } catch (const UsageError& e) {
    std::cerr << "lanecast plan: " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    std::cerr << "lanecast plan: " << e.what() << "\n";
  } catch (const std::logic_error& e) {  // a machine did something impossible
    std::cerr << "lanecast plan: simulation failed: " << e.what() << "\n";
    return 1;
  }
  return 2;
}

}  // namespace lanecast::apps
