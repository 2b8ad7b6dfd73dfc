// The bench over a group of processes, timed as osu_bcast times MPI_Bcast:
// every iteration starts after a barrier, each member takes its own time
// from posting until it held the message, and the row gives the largest of
// the members' averages (and the root's time until every member also
// acknowledged). Every member checks every byte. Members exchange their
// figures by broadcasts, so every member prints the same table.
//
// The members' own times miss their skew: a member that left the barrier late
// (the far site of a wide-area group) posts late and times less than the
// broadcast took. So the table also gives span_us: from the root's posting to
// the last member holding the message, per iteration, on CLOCK_MONOTONIC -
// one clock for every process of a host (the namespaces testbed); across
// hosts it means nothing, and the header says so.
#include "apps/bench/bench_group.h"

#include "apps/bench/multicast_text.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <sys/resource.h>
#include <time.h>

#include "algos/registry.h"
#include "apps/bench/bench_report.h"
#include "apps/bench/group_exchange.h"
#include "apps/bench/skew.h"
#include "apps/common/fault_text.h"
#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "engine/runtime/clock.h"
#include "engine/group/fault_keys.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"

namespace lanecast::apps {
namespace {

// What each member measured for one (algorithm, size).
struct Figures {
  double held_sum_us = 0;   // posting -> held the message, summed over iterations
  double held_min_us = 1e300;
  double acked_sum_us = 0;  // posting -> finished (held and acknowledged)
  uint64_t bad = 0;         // broadcasts whose bytes differed or that failed
};

// Every member's figures.
std::vector<Figures> exchange(Group& g, const Figures& mine) {
  std::vector<Figures> all(g.size());
  all[g.rank()] = mine;
  std::vector<std::byte*> at;
  for (Figures& f : all) at.push_back(reinterpret_cast<std::byte*>(&f));
  all_to_all(g, at, sizeof(Figures), "exchanging figures");
  return all;
}

// CLOCK_MONOTONIC at the engine-clock time `then` (a moment just past): the
// engine's TSC clock is scaled per process, the kernel's is one per host.
double host_us_at(uint64_t then) {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now = engine::now_ns();
  const double host_now_us = static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
  return host_now_us - static_cast<double>(now - std::min(then, now)) / 1e3;
}

// From every member's host-clock times (the root's: its posting), per
// timed iteration: each member's latency (holding - root posting), averaged
// over the iterations, and the span (the last member's).
struct Arrivals {
  std::vector<double> rank_us;  // per rank; the root's is 0
  double span_us = 0;
  // The median span: a small message's mean follows the few broadcasts a
  // member waited for a CPU; the median does not.
  double span_p50_us = 0;
};

Arrivals gather_arrivals(Group& g, uint32_t root, std::vector<double>& mine) {
  const uint32_t n = g.size();
  const size_t iters = mine.size();
  Arrivals k;
  k.rank_us.assign(n, 0.0);
  if (iters == 0 || n < 2) return k;
  std::vector<std::vector<double>> all(n, std::vector<double>(iters));
  all[g.rank()] = mine;
  std::vector<std::byte*> at;
  for (auto& v : all) at.push_back(reinterpret_cast<std::byte*>(v.data()));
  all_to_all(g, at, iters * sizeof(double), "exchanging times");
  std::vector<double> spans(iters);
  for (size_t it = 0; it < iters; ++it) {
    double last = all[root][it];
    for (uint32_t r = 0; r < n; ++r) {
      if (r == root) continue;
      last = std::max(last, all[r][it]);
      k.rank_us[r] += (all[r][it] - all[root][it]) / static_cast<double>(iters);
    }
    spans[it] = last - all[root][it];
    k.span_us += spans[it] / static_cast<double>(iters);
  }
  k.span_p50_us = percentile(spans, 0.50);  // as in process: nearest rank
  return k;
}

}  // namespace

int bench_group(const GroupBenchConfig& c) {
  if (c.stream) return stream_group(c);
  const uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
  GroupMember who = load_group_for(c.config, c.rank, c.root, max_size);
  if (!c.auto_rules.empty()) who.spec.auto_rules_file = c.auto_rules;
  const GroupSpec& spec = who.spec;
  Engine engine(member_engine_options(who, c.cores, c.yield_when_idle, c.progress_in_calls));
  auto g = engine.join(spec, who.rank);
  const bool printer = g->rank() == 0;
  if (printer) notice_if_keyless(*g);  // one for the run, from the member that prints
  std::vector<BenchRow> rows;  // --json: what rank 0 prints at the end
  if (printer && !c.json) {
    const std::string progress = engine.progress_in_calls()
                                     ? std::string("progress in calls (no polling core)")
                                     : std::to_string(engine.polling_cores()) + " polling core(s)";
    std::printf("# lanecast bench: group %s of %u processes (%s), root %u, epoch %u, segment %u B, %s%s\n",
                spec.name.c_str(), g->size(), c.config.c_str(), c.root, g->epoch(), g->caps().segment_bytes,
                progress.c_str(), c.yield_when_idle ? ", yielding when idle" : "");
    testbed::MulticastSettings m{spec.multicast,   spec.mcast_root_delay_us,     spec.mcast_sync_seed,
                                 spec.mcast_repair_on_request, spec.mcast_loss, spec.mcast_loss_seed};
    std::printf("# multicast: %s\n", multicast_text(g->caps(), m).c_str());
    if (g->caps().sealed)
      std::printf("# sealed: every frame, with the group key %s (docs/security.md)\n",
                  g->caps().key_fingerprint.c_str());
    if (!spec.faults.rules.empty()) std::printf("# faults: %s\n", engine::describe_faults(spec.faults).c_str());
    std::printf("# osu_bcast style: a barrier before each broadcast; held_us = the largest of the members' average "
                "times from posting to holding the message; acked_us = the root's, until every member acknowledged;\n"
                "# span_us = the root's posting to the last member holding it; rank1_us and rankN_us (rank %u) the "
                "same to ranks 1 and p-1; spread = (slowest - fastest) / median of the members' (CLOCK_MONOTONIC: "
                "valid when the members share a host, as on the namespaces testbed); '#   per rank' lines give every "
                "member's, in rank order\n",
                g->size() - 1);
    std::printf("%-12s %10s %6s %12s %12s %10s %12s %9s %12s %10s %10s %7s\n", "algo", "size", "iters", "held_us",
                "min_us", "MB/s", "acked_us", "verified", "span_us", "rank1_us", "rankN_us", "spread");
    std::fflush(stdout);
  }
  std::vector<std::byte> buf(max_size);
  bool all_ok = true;
  for (const std::string& algo : c.algos) {
    for (uint64_t size : c.sizes) {
      Figures f;
      std::vector<double> host_times;  // per timed iteration: held (root: posted), host clock
      host_times.reserve(c.iters);
      std::span<std::byte> b(buf.data(), size);
      for (uint32_t it = 0; it < c.warmup + c.iters; ++it) {
        const uint64_t seed = pattern_seed(c.seed, size, it);
        if (g->rank() == c.root) fill_pattern(b, seed);
        else std::fill(b.begin(), b.end(), std::byte{0xEE});
        barrier(*g);
        const uint64_t t0 = engine::now_ns();
        Completion done = g->broadcast(c.root, b, algo);
        const Status s = done.wait();
        if (!s.ok()) {
          std::fprintf(stderr, "lanecast bench: rank %u: %s\n", g->rank(), s.message.c_str());
          return 1;  // the group cannot go on (fail-stop); the others fail too
        }
        if (g->rank() != c.root && check_pattern(b, seed) != size) ++f.bad;
        if (it < c.warmup) continue;
        host_times.push_back(host_us_at(g->rank() == c.root ? done.start_ns() : done.held_ns()));
        const double held = static_cast<double>(std::max(done.held_ns(), t0) - t0) / 1e3;
        f.held_sum_us += held;
        f.held_min_us = std::min(f.held_min_us, held);
        f.acked_sum_us += static_cast<double>(std::max(done.finish_ns(), t0) - t0) / 1e3;
      }
      const std::vector<Figures> all = exchange(*g, f);
      const Arrivals arrived = gather_arrivals(*g, c.root, host_times);
      double held = 0, mn = 1e300;
      uint64_t bad = 0;
      for (uint32_t r = 0; r < all.size(); ++r) {
        const Figures& x = all[r];
        bad += x.bad;
        if (r == c.root && all.size() > 1) continue;  // the root holds the message from the start
        held = std::max(held, x.held_sum_us / std::max<uint32_t>(c.iters, 1));
        mn = std::min(mn, x.held_min_us);
      }
      const double acked = all[c.root].acked_sum_us / std::max<uint32_t>(c.iters, 1);
      all_ok = all_ok && bad == 0;
      if (printer && c.json) {
        BenchRow row;
        row.algo = algo;
        row.chosen = algos::algo_info(resolve_algo(g->member(), algo, size)).name;  // what auto chose
        row.nodes = g->size();
        row.size = size;
        row.iters = c.iters;
        row.avg_us = held;
        row.min_us = mn < 1e300 ? mn : 0.0;
        row.mbps = held > 0 ? static_cast<double>(size) / held : 0.0;
        row.acked_us = acked;
        row.verified = bad == 0;
        if (bad != 0) row.error = std::to_string(bad) + " broadcasts whose bytes differed";
        row.rank_us = arrived.rank_us;
        row.skew = skew_of(arrived.rank_us, c.root);
        row.spread_us = spread_of(arrived.rank_us, c.root);
        row.rate_mbit = spec.port_rate_mbit;
        row.segment = g->caps().segment_bytes;
        row.per_process = true;
        row.span_us = arrived.span_us;
        row.p50_us = arrived.span_p50_us;
        rows.push_back(std::move(row));
      } else if (printer) {
        const uint32_t n = g->size();
        std::printf("%-12s %10s %6u %12.1f %12.1f %10.1f %12.1f %9s %12.1f %10.1f %10.1f %7.3f\n", algo.c_str(),
                    format_size(size).c_str(), c.iters, held, mn, held > 0 ? static_cast<double>(size) / held : 0.0,
                    acked, bad == 0 ? "yes" : "NO", arrived.span_us, n > 1 ? arrived.rank_us[1] : 0.0,
                    arrived.rank_us[n - 1], skew_of(arrived.rank_us, c.root));
        std::printf("#   per rank (us):");
        for (uint32_t r = 0; r < n; ++r) std::printf(" %.1f", arrived.rank_us[r]);
        std::printf("\n");
        std::fflush(stdout);
      }
    }
  }
  if (c.counters) {
    std::printf("rank %u:", g->rank());
    node_counters(g->member()).for_each([](std::string_view name, uint64_t v) {
      if (v) std::printf(" %.*s=%" PRIu64, static_cast<int>(name.size()), name.data(), v);
    });
    const PortCounters p = g->port_counters();
    std::printf("\n  port: rx=%" PRIu64 " tx=%" PRIu64 " tx_full=%" PRIu64 " missed=%" PRIu64 " no_buffer=%" PRIu64
                " lost_emulated=%" PRIu64 "\n%s",
                p.rx_frames, p.tx_frames, p.tx_full, p.rx_missed, p.rx_no_buffer, p.rx_lost_emulated,
                fault_counters_text(p).c_str());
    // What the member cost its host: on CPUs shared by several members, CPU
    // time per frame is the figure that noise from the others does not bend.
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    const auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    std::printf("  cpu: user=%.3f s sys=%.3f s voluntary_switches=%ld involuntary_switches=%ld\n", secs(ru.ru_utime),
                secs(ru.ru_stime), ru.ru_nvcsw, ru.ru_nivcsw);
  }
  if (printer && c.json) print_bench_json(rows);
  if (!all_ok) std::fprintf(stderr, "lanecast bench: some broadcasts were not verified\n");
  return all_ok ? 0 : 1;
}

}  // namespace lanecast::apps
