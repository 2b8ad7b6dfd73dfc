#include "apps/run/run_command.h"

#include <csignal>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "engine/runtime/clock.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

struct RunConfig {
  std::string config;
  std::optional<uint32_t> rank;
  std::vector<uint64_t> sizes{1 << 20};
  uint32_t iters = 3;
  uint32_t root = 0;
  uint64_t seed = 1;
  uint32_t cores = 0;
  bool yield_when_idle = false;
  bool progress_in_calls = false;
  bool serve = false;
  bool reform = false;
  bool show_endpoints = false;
  bool show_placement = false;
  bool counters = false;
};

const char* kUsage =
    "usage: lanecast run --config FILE [--rank R] [--sizes LIST] [--iters K] [--root R]\n"
    "                    [--seed S] [--serve] [--reform] [--show-endpoints] [--show-placement]\n"
    "                    [--cores C] [--yield-when-idle] [--progress cores|calls] [--counters]\n"
    "\n"
    "Runs this process as member R of the group FILE describes (config/groups/):\n"
    "opens the member's port, finds the other members by the file's bootstrap\n"
    "(static addresses, hellos on the wire, or a PMIx launcher's key-value store),\n"
    "then takes part in K broadcasts of each size from the root. Every member runs\n"
    "the same command with its own rank; under a PMIx launcher (mpirun, prterun,\n"
    "srun) a group with bootstrap \"pmix\" takes the launcher's rank:\n"
    "  mpirun -np 8 lanecast run --config FILE\n"
    "The data is a pattern every member can compute, so each checks every\n"
    "byte it received; a line per size gives this member's time from posting to\n"
    "completion (avg and min; the root's includes every member's acknowledgement).\n"
    "With --serve the schedule repeats until SIGINT or SIGTERM (an appliance).\n"
    "A lost member fails every survivor's broadcast within twice the peer timeout,\n"
    "naming it; with --reform the survivors then form the group again without it.\n"
    "Exit status: 0 all verified, 1 a broadcast failed or a byte differed,\n"
    "2 bad usage or group file, 3 the engine, its port or the bootstrap failed.\n"
    "\n";

OptionTable make_table(RunConfig& c) {
  OptionTable t;
  t.add({"config", "FILE", "", "the group file (TOML; format in config/groups/README.md)",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "this member's rank in the group file (pmix groups: the launcher's, if left out)",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"sizes", "LIST", "1M", "message sizes: 'a,b,c' and/or 'lo:hi' (powers of two); K/M/G suffixes",
         [&](std::string_view v) { c.sizes = parse_size_list(v, "--sizes"); }});
  t.add({"iters", "K", "3", "broadcasts per size",
         [&](std::string_view v) { c.iters = static_cast<uint32_t>(parse_uint(v, "--iters", 1'000'000)); }});
  t.add({"root", "R", "0", "rank that broadcasts",
         [&](std::string_view v) { c.root = static_cast<uint32_t>(parse_uint(v, "--root", 1023)); }});
  t.add({"seed", "S", "1", "seed of the data pattern (every member must use the same)",
         [&](std::string_view v) { c.seed = parse_uint(v, "--seed", UINT64_MAX); }});
  t.add({"serve", "", "", "repeat the schedule until SIGINT or SIGTERM",
         [&](std::string_view) { c.serve = true; }});
  t.add({"reform", "", "",
         "when a member is lost, the survivors form the group again without it (a new epoch; discovery "
         "bootstrap) and go on from where the root was",
         [&](std::string_view) { c.reform = true; }});
  t.add({"show-endpoints", "", "", "print every member's link address as the bootstrap found it",
         [&](std::string_view) { c.show_endpoints = true; }});
  t.add({"show-placement", "", "",
         "print where the member runs: each lane's port, the CPUs nearest it (hwloc) and the polling core that "
         "drives it (the nearest; a core per lane while there are cores, the member's state on lane 0's)",
         [&](std::string_view) { c.show_placement = true; }});
  t.add({"counters", "", "",
         "when the member leaves (done, failed or stopped), print its counters: frames by kind, resends, "
         "drops by reason - with a group key the frames refused (rx_unsealed, rx_bad_tag, rx_replayed, "
         "rx_stale_counter, rx_bad_payload_seal; docs/security.md) - and its port's",
         [&](std::string_view) { c.counters = true; }});
  t.add({"yield-when-idle", "", "",
         "idle polling cores yield their CPU instead of spinning: for several members on one host's CPUs "
         "(a testbed), not for a core of one's own",
         [&](std::string_view) { c.yield_when_idle = true; }});
  t.add({"cores", "C", "auto", "polling cores (default: one per usable CPU but one, 1..2)",
         [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"progress", "cores|calls", "cores",
         "who runs the member: a polling core, or (calls) this program's thread while it waits for a broadcast, "
         "as MPI progresses inside its calls: one thread instead of two, and between broadcasts nothing moves",
         [&](std::string_view v) { c.progress_in_calls = parse_progress(v); }});
  return t;
}

// One line of the member's nonzero counters, one of its port's.
void print_counters(Group& g) {
  std::printf("rank %u:", g.rank());
  for (const auto& [name, v] : g.member().counters())
    if (v != 0) std::printf(" %s=%llu", name.c_str(), static_cast<unsigned long long>(v));
  const PortCounters p = g.port_counters();
  std::printf("\n  port: rx=%llu tx=%llu tx_full=%llu missed=%llu no_buffer=%llu\n",
              static_cast<unsigned long long>(p.rx_frames), static_cast<unsigned long long>(p.tx_frames),
              static_cast<unsigned long long>(p.tx_full), static_cast<unsigned long long>(p.rx_missed),
              static_cast<unsigned long long>(p.rx_no_buffer));
  std::fflush(stdout);
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

struct SizeResult {
  double sum_us = 0, min_us = 1e300;
  uint32_t done = 0;
  std::string error;
  Rank peer = kNoRank;  // the member the error names
};

// One broadcast of the schedule; returns its time, or sets r.error.
void run_one(Group& g, const RunConfig& c, std::vector<std::byte>& buf, uint64_t size, uint64_t it,
             SizeResult& r) {
  const uint64_t seed = pattern_seed(c.seed, size, it);
  std::span<std::byte> b(buf.data(), size);
  if (g.rank() == c.root) {
    fill_pattern(b, seed);
  } else {
    std::fill(b.begin(), b.end(), std::byte{0xEE});  // nothing stale can pass
  }
  const uint64_t t0 = engine::now_ns();
  Completion done = g.broadcast(c.root, b);
  // The engine fails a broadcast within its peer timeout; the bound is only a
  // guard against a bug turning into a hang.
  const auto bound = std::chrono::milliseconds(static_cast<int64_t>(2 * g.spec().peer_timeout_ms) + 10'000);
  const std::optional<Status> s = done.wait_for(bound);
  const double us = static_cast<double>(engine::now_ns() - t0) / 1e3;
  if (!s) {
    r.error = "broadcast " + std::to_string(it) + " of " + format_size(size) + " did not finish";
    return;
  }
  if (!s->ok()) {
    r.error = s->message;
    r.peer = s->peer;
    return;
  }
  if (g.rank() != c.root) {
    const size_t bad = check_pattern(b, seed);
    if (bad != size) {
      r.error = "byte " + std::to_string(bad) + " of broadcast " + std::to_string(it) + " (" + format_size(size) +
                ") differs from the root's";
      return;
    }
  }
  r.sum_us += us;
  r.min_us = std::min(r.min_us, us);
  ++r.done;
}

// The survivors of a lost member form the group again without it: ranks
// above it move down by one, the bootstrap runs again (a new epoch: every
// process's incarnation is new to the group), and the new root tells
// everyone where in the schedule it was, so all go on from the same place.
std::unique_ptr<Group> reform(Engine& engine, std::unique_ptr<Group> old, GroupSpec& spec, RunConfig& c, Rank lost,
                              uint64_t& pos) {
  Rank me = old->rank();
  old.reset();  // its port is opened again by the new group
  spec.members.erase(spec.members.begin() + lost);
  for (uint32_t r = 0; r < spec.members.size(); ++r) spec.members[r].rank = r;
  spec.bootstrap = "discovery";
  spec.epoch = 0;
  if (me > lost) --me;
  if (c.root == lost) c.root = 0;
  else if (c.root > lost) --c.root;
  const uint64_t t0 = engine::now_ns();
  auto g = engine.join(spec, me);
  uint64_t where = pos;
  std::span<std::byte> b(reinterpret_cast<std::byte*>(&where), sizeof where);
  const Status s = g->broadcast(c.root, b).wait();
  if (!s.ok()) throw std::runtime_error("re-formed group: " + s.message);
  pos = where;
  std::printf("# re-formed without the lost member in %.1f ms: rank %u of %u, epoch %u, root %u, from broadcast %llu\n",
              static_cast<double>(engine::now_ns() - t0) / 1e6, g->rank(), g->size(), g->epoch(), c.root,
              static_cast<unsigned long long>(pos));
  std::fflush(stdout);
  return g;
}

}  // namespace

int run_main(int argc, char** argv) {
  RunConfig c;
  OptionTable table = make_table(c);
  if (table.parse(argc, argv, 1)) {
    std::fputs(kUsage, stdout);
    std::fputs(table.help().c_str(), stdout);
    return 0;
  }
  if (c.config.empty()) throw UsageError("--config FILE is required (see lanecast run --help)");
  const uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
  const GroupMember who = load_group_for(c.config, c.rank, c.root, max_size);
  const GroupSpec& spec = who.spec;
  if (c.reform && spec.bootstrap == "static")
    throw UsageError("--reform needs a group found on the wire (bootstrap = \"discovery\"): a static group file cannot say who is left");  // invalid_argument: file:line, exit 2
  // Not engine::now_ns(): its TSC scale is fixed at first use, and before
  // the engine starts DPDK it does not know the TSC's rate.
  using Clock = std::chrono::steady_clock;
  const auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  const Clock::time_point t_engine = Clock::now();
  Engine engine(member_engine_options(who, c.cores, c.yield_when_idle, c.progress_in_calls));
  const Clock::time_point t0 = Clock::now();
  auto g = engine.join(spec, who.rank);
  const Clock::time_point t_joined = Clock::now();
  notice_if_keyless(*g);
  std::printf("# lanecast run: group %s, rank %u of %u, epoch %u, bootstrap %s in %.1f ms, segment %u B, %u polling core(s)\n",
              spec.name.c_str(), g->rank(), g->size(), g->epoch(), spec.bootstrap.c_str(), ms(t_joined - t0),
              g->caps().segment_bytes, engine.polling_cores());
  // What the group took to form, by step: a bootstrap's cost is more than
  // its exchange. The wall-clock time lets a script line members up.
  const double unix_s =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::printf("# group formed in %.1f ms (at %.6f unix s): engine start %.1f ms, join %.1f ms (%s)\n",
              ms(t_joined - t_engine), unix_s, ms(t0 - t_engine), ms(t_joined - t0), g->join_steps().c_str());
  if (c.show_endpoints) std::fputs(g->endpoints().c_str(), stdout);
  if (c.show_placement) std::fputs(g->placement().c_str(), stdout);
  std::printf("%10s %6s %12s %12s %9s\n", "size", "iters", "avg_us", "min_us", "verified");
  std::fflush(stdout);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::vector<std::byte> buf(max_size);
  GroupSpec current = spec;
  // The schedule is one count of broadcasts: position p is size
  // sizes[(p / iters) % sizes] and the p-th pattern.
  const uint64_t per_round = c.sizes.size() * uint64_t{c.iters};
  uint64_t pos = 0;
  SizeResult r;
  while (per_round > 0 && (c.serve ? !(g_stop.load() && g->rank() != c.root) : pos < per_round)) {
    uint64_t size = 0;
    if (c.serve && pos > 0 && pos % per_round == 0) {
      // Serving: the root says at the end of each round whether all go on,
      // so a signal to the root stops every member at the same place. (A
      // signal to another member makes it leave at once: the group sees it
      // lost.)
      uint64_t stop = g_stop.load() ? 1 : 0;
      const Status s = g->broadcast(c.root, std::span(reinterpret_cast<std::byte*>(&stop), sizeof stop)).wait();
      if (s.ok() && stop != 0) break;
      if (!s.ok()) r = SizeResult{0, 1e300, 0, s.message, s.peer};
    }
    if (r.error.empty()) {
      size = c.sizes[(pos / c.iters) % c.sizes.size()];
      run_one(*g, c, buf, size, pos, r);
    }
    if (r.error.empty()) {
      if (++pos % c.iters == 0) {
        std::printf("%10s %6u %12.1f %12.1f %9s\n", format_size(size).c_str(), r.done, r.sum_us / r.done, r.min_us,
                    "yes");
        std::fflush(stdout);
        r = SizeResult{};
      }
      continue;
    }
    std::printf("%10s  FAILED: %s\n", format_size(size).c_str(), r.error.c_str());
    std::fprintf(stderr, "lanecast run: rank %u: %s\n", g->rank(), r.error.c_str());
    std::fflush(stdout);
    if (c.counters) print_counters(*g);  // the group that failed: what it refused, what it lost
    if (!c.reform || r.peer == kNoRank || current.members.size() <= 2) return 1;
    g = reform(engine, std::move(g), current, c, r.peer, pos);
    r = SizeResult{};
  }
  if (c.counters) print_counters(*g);
  return 0;
}

}  // namespace lanecast::apps
