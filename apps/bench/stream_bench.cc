#include "apps/bench/stream_bench.h"

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <thread>

#include "apps/bench/bare_schedule.h"
#include "apps/bench/cpu_wait.h"
#include "apps/common/fault_text.h"
#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "engine/runtime/clock.h"
#include "engine/group/fault_keys.h"
#include "engine/api/member_internals.h"

namespace lanecast::apps {
namespace {

// What one member checks and measures, on its polling core (the handler):
// the next sequence number due, each message's bytes against the pattern,
// the latency of the timed ones. Owned by that core while a size runs; read
// by the bench's thread once `delivered` reached the total.
struct alignas(64) MemberTally {
  // The host clock read cheaply: CLOCK_MONOTONIC at most every 50 us, and
  // the engine's TSC clock for the time since (its scale is an estimate -
  // off by a few parts in a thousand on a virtual machine - which over 50 us
  // is a fraction of a microsecond). clock_gettime at each of 8 members'
  // deliveries took a fifth of the polling core at 1M msgs/s.
  uint64_t anchor_host = 0, anchor_tsc = 0;
  uint64_t host_now() {
    const uint64_t tsc = engine::now_ns();
    if (anchor_tsc == 0 || tsc - anchor_tsc > 50'000) {
      anchor_host = clock_ns();
      anchor_tsc = tsc;
    }
    return anchor_host + (tsc - anchor_tsc);
  }
  uint64_t expect = 0;        // the next sequence number
  uint64_t timed_from = 0;    // sequence numbers from here on are timed
  uint64_t size = 0;
  uint64_t seed = 0;
  uint64_t last_ns = 0;       // the last delivery's time
  LogHistogram hist;
  std::string error;
  std::atomic<uint64_t> delivered{0};

  void take(const StreamMessage& m) {
    const uint64_t now = host_now();
    if (!error.empty()) return;
    if (m.seq != expect) {
      error = "message " + std::to_string(m.seq) + " where " + std::to_string(expect) + " was due";
      return;
    }
    if (m.data.size() != size || check_pattern(m.data, pattern_seed(seed, size, m.seq)) != m.data.size()) {
      error = "message " + std::to_string(m.seq) + " differs from what was published (" +
              std::to_string(m.data.size()) + " bytes)";
      return;
    }
    ++expect;
    if (m.seq >= timed_from) hist.add(now > m.timestamp_ns ? now - m.timestamp_ns : 0);
    last_ns = now;
    delivered.store(expect, std::memory_order_release);
  }
};

uint64_t stream_frames(LocalGroup& g) {
  uint64_t n = 0;
  for (Rank r = 0; r < g.size(); ++r) n += node_counters(g.member(r)).streams.stream_batches_tx.get();
  return n;
}

StreamRow run_size(Engine& engine, LocalGroup& g, std::vector<MemberTally>& tallies, Publisher& pub, const std::string& algo,
                   uint32_t fanout, uint64_t size, uint64_t first_seq, const StreamBenchSettings& s) {
  StreamRow row;
  row.algo = algo;
  row.fanout = fanout;
  row.nodes = g.size();
  row.size = size;
  row.messages = s.messages;
  row.offered = s.msg_rate;
  if (size > pub.max_message()) {
    row.error = format_size(size) + " is more than the stream takes: at most " + format_size(pub.max_message()) +
                " per message (the smallest of max_message, half of --stream-window-bytes, and what --stream-window "
                "frames hold)";
    return row;
  }
  const uint64_t total = s.warmup + s.messages;
  // Every member has delivered everything before: the tallies are quiet.
  for (auto& t : tallies) {
    t.size = size;
    t.seed = s.seed;
    t.timed_from = first_seq + s.warmup;
    t.hist = LogHistogram{};
  }
  const uint64_t frames_before = stream_frames(g);
  std::vector<std::byte> msg(size);
  // Every member holds message `want - 1` (bounded: a stream that stops
  // fails the row, below).
  const auto wait_delivered = [&](uint64_t want, uint64_t messages) {
    const uint64_t give_up = clock_ns() + 30'000'000'000ull + messages * 10'000ull;
    for (Rank r = 0; r < g.size(); ++r)
      while (tallies[r].delivered.load(std::memory_order_acquire) < want && tallies[r].error.empty() &&
             clock_ns() < give_up && g.member(r).stream_status().ok())
        std::this_thread::sleep_for(std::chrono::microseconds(200));
  };
  // Messages [from, to) of this size, message k due at start + k / rate
  // (against absolute time) when a rate is offered. False: publish failed.
  const double gap_ns = s.msg_rate > 0 ? 1e9 / s.msg_rate : 0;
  const auto publish_range = [&](uint64_t from, uint64_t to, uint64_t start) {
    for (uint64_t i = from; i < to; ++i) {
      fill_pattern(msg, pattern_seed(s.seed, size, first_seq + i));
      if (gap_ns > 0) {
        const uint64_t due = start + static_cast<uint64_t>(static_cast<double>(i - from) * gap_ns);
        while (clock_ns() < due) {
        }
      }
      for (;;) {
        const PublishResult r = pub.publish(msg);
        if (r == PublishResult::Ok) break;
        if (r != PublishResult::WouldBlock) {
          row.error = "publish: " + pub.status().message;
          return false;
        }
        ++row.would_block;
        std::this_thread::yield();
      }
    }
    return true;
  };
  // The warm-up at the offered rate too, and delivered everywhere before the
  // timed messages start: warm-up messages published as fast as the window
  // allows would still be queued on the polling core when the timed
  // schedule begins, and the first timed messages would wait behind them
  // (at 1M msgs/s, enough of them to set the run's p99).
  if (!publish_range(0, s.warmup, clock_ns())) return row;
  wait_delivered(first_seq + s.warmup, s.warmup);
  row.would_block = 0;
  const uint64_t wait_before = polling_threads_wait_ns();  // before the schedule: it reads files
  const uint64_t long_before = engine.long_poll_cycles();
  engine.reset_longest_poll_cycle();
  const uint64_t t_timed = clock_ns();
  if (!publish_range(s.warmup, total, t_timed)) return row;
  const uint64_t t_end_publish = clock_ns();
  const uint64_t want = first_seq + total;
  wait_delivered(want, total);
  const uint64_t longest_cycle = engine.longest_poll_cycle_ns();
  const uint64_t long_cycles = engine.long_poll_cycles() - long_before;
  uint64_t last = 0;
  for (Rank r = 0; r < g.size(); ++r) {
    MemberTally& t = tallies[r];
    if (!t.error.empty() && row.error.empty()) row.error = "rank " + std::to_string(r) + ": " + t.error;
    const uint64_t got = t.delivered.load(std::memory_order_acquire);
    if (got < want && row.error.empty())
      row.error = "rank " + std::to_string(r) + ": " + std::to_string(got - first_seq) + " of " +
                  std::to_string(total) + " messages delivered" +
                  (g.member(r).stream_status().ok() ? "" : " (" + g.member(r).stream_status().message + ")");
    last = std::max(last, t.last_ns);
    row.histogram.merge(t.hist);
  }
  row.verified = row.error.empty();
  if (!row.verified) return row;
  row.poller_cpu_wait_us = static_cast<double>(polling_threads_wait_ns() - wait_before) / 1e3;
  row.poller_longest_cycle_us = static_cast<double>(longest_cycle) / 1e3;
  row.poller_long_cycles = long_cycles;
  fill_stream_figures(row, t_timed, last, t_end_publish, stream_frames(g) - frames_before, total);
  return row;
}

void print_header(const std::string& algo, uint32_t fanout, const GroupOptions& go, const StreamBenchSettings& s,
                  uint32_t cores, const GroupCaps& caps) {
  std::printf("# lanecast bench --stream: algo %s (stream tree fanout %u), %u members, publisher %u, segment %u B, "
              "%u polling core%s\n",
              algo.c_str(), fanout, go.nodes, s.publisher, caps.segment_bytes, cores, cores == 1 ? "" : "s");
  if (go.ports.empty())
    std::printf("# fabric: rate %g Mbit/s%s, latency %g us, loss %g\n", go.fabric.rate_mbit,
                go.fabric.rate_mbit == 0 ? " (unlimited)" : "", go.fabric.latency_us, go.fabric.loss);
  if (!go.faults.rules.empty()) std::printf("# faults: %s\n", engine::describe_faults(go.faults).c_str());
  std::printf("# window: %u frames, %s, %u messages; %" PRIu64 " warm-up + %" PRIu64 " timed messages per size, %s\n",
              go.streams.window_batches, format_size(go.streams.window_bytes).c_str(), go.streams.window_messages,
              s.warmup, s.messages,
              s.msg_rate > 0 ? ("offered at " + std::to_string(static_cast<uint64_t>(s.msg_rate)) + " msgs/s").c_str()
                             : "published as fast as the window allows");
  std::printf("# latency: publish() to delivery, every member's deliveries of the timed messages; msgs_per_s: timed "
              "messages / (last delivery anywhere - first timed publish)\n");
  print_stream_columns();
}

}  // namespace

void fill_stream_figures(StreamRow& row, uint64_t first_timed_ns, uint64_t last_ns, uint64_t end_publish_ns,
                         uint64_t frames, uint64_t total) {
  const double secs = static_cast<double>(last_ns - first_timed_ns) / 1e9;
  row.msgs_per_s = secs > 0 ? static_cast<double>(row.messages) / secs : 0;
  row.published_per_s = end_publish_ns > first_timed_ns
                            ? static_cast<double>(row.messages) * 1e9 / static_cast<double>(end_publish_ns - first_timed_ns)
                            : 0;
  row.mbps = row.msgs_per_s * static_cast<double>(row.size) / 1e6;
  row.p50_us = static_cast<double>(row.histogram.percentile(0.50)) / 1e3;
  row.p99_us = static_cast<double>(row.histogram.percentile(0.99)) / 1e3;
  row.p999_us = static_cast<double>(row.histogram.percentile(0.999)) / 1e3;
  row.max_us = static_cast<double>(row.histogram.max()) / 1e3;
  row.mean_us = row.histogram.mean() / 1e3;
  row.frames_per_msg = static_cast<double>(frames) / static_cast<double>(total);
}

void print_stream_columns() {
  std::printf("%10s %10s %12s %12s %9s %9s %9s %9s %9s %10s %11s %9s\n", "size", "messages", "published/s",
              "msgs_per_s", "MB/s", "p50_us", "p99_us", "p999_us", "max_us", "frames/msg", "would_block", "verified");
}

void print_stream_row(const StreamRow& r) {
  if (!r.error.empty()) {
    std::printf("%10s  FAILED: %s\n", format_size(r.size).c_str(), r.error.c_str());
    return;
  }
  std::printf("%10s %10" PRIu64 " %12.0f %12.0f %9.1f %9.1f %9.1f %9.1f %9.1f %10.3f %11" PRIu64 " %9s\n",
              format_size(r.size).c_str(), r.messages, r.published_per_s, r.msgs_per_s, r.mbps, r.p50_us, r.p99_us,
              r.p999_us, r.max_us, r.frames_per_msg, r.would_block, r.verified ? "yes" : "NO");
  if (r.has_bare) {
    const BareFigures& w = r.bare.worst;
    std::printf("%10s bare threads, same CPUs and schedule, the worst: p50 %.1f us, p99 %.1f, p999 %.1f, max %.1f (", "",
                w.p50_us, w.p99_us, w.p999_us, w.max_us);
    for (size_t i = 0; i < r.bare.threads.size(); ++i) {
      const BareRun::OnCpu& t = r.bare.threads[i];
      if (t.cpu >= 0) std::printf("%sCPU %d", i ? "; " : "", t.cpu);
      else std::printf("%sthe publisher's thread", i ? "; " : "");
      std::printf(" p999 %.1f max %.1f", t.figures.p999_us, t.figures.max_us);
    }
    std::printf(")\n");
    std::printf("%10s the polling cores waited for their CPUs %.0f us in all while the timed messages ran; their "
                "longest cycle %.0f us, %" PRIu64 " cycles over 1 ms\n",
                "", r.poller_cpu_wait_us, r.poller_longest_cycle_us, r.poller_long_cycles);
  }
  std::printf("%10s histogram (us, deliveries):", "");
  for (const auto& [upper, n] : r.histogram.bands()) std::printf(" <=%.1f:%" PRIu64, static_cast<double>(upper) / 1e3, n);
  std::printf("\n");
  std::fflush(stdout);
}

void print_stream_json(const std::vector<StreamRow>& rows) {
  std::vector<Json> all;
  for (const StreamRow& r : rows) {
    Json o;
    o["algo"] = r.algo;
    o["fanout"] = r.fanout;
    o["nodes"] = r.nodes;
    o["size"] = r.size;
    o["messages"] = r.messages;
    o["offered_per_s"] = rounded(r.offered, 0);
    o["published_per_s"] = rounded(r.published_per_s, 1);
    o["msgs_per_s"] = rounded(r.msgs_per_s, 1);
    o["mbps"] = rounded(r.mbps);
    o["p50_us"] = rounded(r.p50_us);
    o["p99_us"] = rounded(r.p99_us);
    o["p999_us"] = rounded(r.p999_us);
    o["max_us"] = rounded(r.max_us);
    o["mean_us"] = rounded(r.mean_us);
    o["would_block"] = r.would_block;
    o["frames_per_msg"] = rounded(r.frames_per_msg, 4);
    Json hist = Json::array();  // [upper bound us, deliveries] per band
    for (const auto& [upper, n] : r.histogram.bands()) hist.push_back({rounded(static_cast<double>(upper) / 1e3), n});
    o["histogram_us"] = std::move(hist);
    if (r.has_bare) {
      o["bare_p50_us"] = rounded(r.bare.worst.p50_us);
      o["bare_p99_us"] = rounded(r.bare.worst.p99_us);
      o["bare_p999_us"] = rounded(r.bare.worst.p999_us);
      o["bare_max_us"] = rounded(r.bare.worst.max_us);
      o["poller_cpu_wait_us"] = rounded(r.poller_cpu_wait_us, 1);
      o["poller_longest_cycle_us"] = rounded(r.poller_longest_cycle_us, 1);
      o["poller_long_cycles"] = r.poller_long_cycles;
    }
    o["verified"] = r.verified;
    if (!r.error.empty()) o["error"] = r.error;
    all.push_back(std::move(o));
  }
  print_json_rows(all);
}

namespace {

void print_counters(LocalGroup& g) {
  std::printf("# counters (nonzero)\n");
  for (Rank r = 0; r < g.size(); ++r) {
    std::printf("rank %u:", r);
    node_counters(g.member(r)).for_each([](std::string_view name, uint64_t v) {
      if (v) std::printf(" %.*s=%" PRIu64, static_cast<int>(name.size()), name.data(), v);
    });
    std::printf("\n%s", fault_counters_text(g.port_counters(r)).c_str());
  }
}

// Until the polling cores sleep: after a stream's last batch its reports
// repeat every 1 ms for 50 ms, and a core spins up to busy_spin_ns after its
// last work; then no turn for 5 ms says they are asleep. At most a second.
void wait_quiet(const Engine& engine) {
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const uint64_t give_up = clock_ns() + 1'000'000'000;
  for (uint64_t turns = engine.poll_iterations(); clock_ns() < give_up;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const uint64_t now = engine.poll_iterations();
    if (now == turns) return;
    turns = now;
  }
}

}  // namespace

int stream_bench(Engine& engine, const std::vector<std::string>& algos, const GroupOptions& go_base,
                 const StreamBenchSettings& s) {
  std::vector<StreamRow> rows;
  bool ok = true;
  for (const std::string& algo : algos) {
    GroupOptions go = go_base;
    go.algo = algo;
    auto g = engine.create_local_group(go);
    std::vector<MemberTally> tallies(g->size());
    for (Rank r = 0; r < g->size(); ++r) g->member(r).on_message([t = &tallies[r]](const StreamMessage& m) { t->take(m); });
    Publisher pub = g->member(s.publisher).open_stream(0);
    const uint32_t fanout = g->options().streams.fanout;  // resolved from the algorithm
    if (!s.json) print_header(algo, fanout, go, s, engine.polling_cores(), g->caps());
    uint64_t seq = 0;
    for (uint64_t size : s.sizes) {
      StreamRow r = run_size(engine, *g, tallies, pub, algo, fanout, size, seq, s);
      seq += s.warmup + s.messages;
      if (r.verified) {
        // The same schedule (offered, or what the stream reached) on the
        // polling cores' CPUs and the publisher's thread, once the engine
        // is quiet (a bare thread pinned beside a core still polling
        // measures that core, not the machine).
        wait_quiet(engine);
        r.bare = bare_schedule(s.msg_rate > 0 ? s.msg_rate : r.msgs_per_s, s.messages, engine.poller_cpus());
        r.has_bare = true;
      }
      ok = ok && r.verified;
      if (!s.json) print_stream_row(r);
      rows.push_back(std::move(r));
      if (!rows.back().error.empty()) break;
    }
    if (s.counters && !s.json) print_counters(*g);
    if (!s.json) std::printf("\n");
  }
  if (s.json) print_stream_json(rows);
  if (!ok) std::fprintf(stderr, "lanecast bench --stream: some messages were not delivered or not verified\n");
  return ok ? 0 : 1;
}

}  // namespace lanecast::apps
