// `lanecast bench --stream --config FILE --rank R` (and so --testbed N
// --stream): the stream benchmark with one member per process. The
// publisher publishes, every member takes its messages with next() and
// checks each one (order, count, bytes); latencies are measured on
// CLOCK_MONOTONIC, the host's one clock, so they hold when the members share
// a host (the namespaces testbed). Members exchange their histograms and
// times by broadcasts, and rank 0 prints the table.
#include "apps/bench/bench_group.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>
#include <type_traits>

#include "apps/bench/group_exchange.h"
#include "apps/bench/log_histogram.h"
#include "apps/bench/stream_bench.h"
#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"

namespace lanecast::apps {
namespace {

// What each member measured for one size, exchanged as bytes.
struct StreamFigures {
  uint64_t delivered = 0;      // messages of this size, in order and verified
  uint64_t bad = 0;            // out of order or differing
  uint64_t first_timed_ns = 0; // the publisher's first timed publish (host clock)
  uint64_t last_ns = 0;        // this member's last delivery
  uint64_t end_publish_ns = 0; // the publisher's last publish
  uint64_t would_block = 0;
  uint64_t frames = 0;         // stream frames this member sent
  LogHistogram hist;
};
static_assert(std::is_trivially_copyable_v<StreamFigures>);

uint64_t frames_sent(Group& g) { return node_counters(g.member()).streams.stream_batches_tx.get(); }

}  // namespace

int stream_group(const GroupBenchConfig& c) {
  const uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
  const GroupMember who = load_group_for(c.config, c.rank, c.root, max_size);
  Engine engine(member_engine_options(who, c.cores, c.yield_when_idle, c.progress_in_calls));
  auto g = engine.join(who.spec, who.rank);
  if (g->rank() == 0) notice_if_keyless(*g);  // one for the run, as bench_group
  Member& me = g->member();
  const bool publisher = g->rank() == c.root;
  Publisher pub;
  if (publisher) pub = me.open_stream(0);
  if (max_size > pub.max_message() && publisher) {
    std::fprintf(stderr, "lanecast bench: %s is more than the stream takes (at most %s per message: the smallest of "
                 "max_message, half of stream_window_bytes, and what stream_window frames hold)\n",
                 format_size(max_size).c_str(), format_size(pub.max_message()).c_str());
    return 1;
  }
  std::vector<StreamRow> rows;  // --json: what rank 0 prints at the end
  if (g->rank() == 0 && !c.json) {
    std::printf("# lanecast bench --stream: group %s of %u processes (%s), publisher %u, segment %u B, %s\n",
                who.spec.name.c_str(), g->size(), c.config.c_str(), c.root, g->caps().segment_bytes,
                engine.progress_in_calls() ? "progress in calls (no polling core)"
                                           : (std::to_string(engine.polling_cores()) + " polling core(s)").c_str());
    std::printf("# %" PRIu64 " warm-up + %" PRIu64 " timed messages per size, %s; latency: publish() to next() on "
                "every member (CLOCK_MONOTONIC: valid when the members share a host); msgs_per_s: timed messages / "
                "(last delivery anywhere - first timed publish)\n",
                uint64_t{c.warmup}, c.stream_messages,
                c.msg_rate > 0 ? ("offered at " + std::to_string(static_cast<uint64_t>(c.msg_rate)) + " msgs/s").c_str()
                               : "published as fast as the window allows");
    print_stream_columns();
    std::fflush(stdout);
  }
  bool all_ok = true;
  uint64_t seq = 0;
  std::vector<std::byte> msg(max_size);
  const uint64_t total = uint64_t{c.warmup} + c.stream_messages;
  for (uint64_t size : c.sizes) {
    StreamFigures f;
    const uint64_t first = seq, timed_from = seq + uint64_t{c.warmup}, want = seq + total;
    uint64_t expect = first;
    const uint64_t frames_before = frames_sent(*g);
    auto take = [&](const StreamMessage& m) {
      const uint64_t now = clock_ns();
      if (m.publisher != c.root || m.seq != expect || m.data.size() != size ||
          check_pattern(m.data, pattern_seed(c.seed, size, m.seq)) != size) {
        ++f.bad;
        return;
      }
      ++expect;
      ++f.delivered;
      if (m.seq >= timed_from) f.hist.add(now > m.timestamp_ns ? now - m.timestamp_ns : 0);
      f.last_ns = now;
    };
    StreamMessage m;
    barrier(*g);
    if (publisher) {
      std::span<std::byte> b(msg.data(), size);
      const double gap_ns = c.msg_rate > 0 ? 1e9 / c.msg_rate : 0;
      uint64_t start = clock_ns();
      for (uint64_t i = 0; i < total && f.bad == 0; ++i) {
        fill_pattern(b, pattern_seed(c.seed, size, seq + i));
        if (i == uint64_t{c.warmup}) f.first_timed_ns = start = clock_ns();
        if (gap_ns > 0 && i >= uint64_t{c.warmup}) {
          const uint64_t due = start + static_cast<uint64_t>(static_cast<double>(i - uint64_t{c.warmup}) * gap_ns);
          for (uint64_t now = clock_ns(); now < due; now = clock_ns()) {
            if (me.next(m)) take(m);  // turns the engine (progress in calls) meanwhile
            // Members sharing this host's CPUs (a testbed) get them while
            // the next message is not due: a publisher that spins holds a
            // CPU the forwarding members need.
            else if (due - now > 20'000) std::this_thread::yield();
          }
        }
        for (;;) {
          const PublishResult r = pub.publish(b);
          if (r == PublishResult::Ok) break;
          if (r != PublishResult::WouldBlock) {
            std::fprintf(stderr, "lanecast bench: rank %u: %s\n", g->rank(), pub.status().message.c_str());
            return 1;
          }
          ++f.would_block;
          // The window is full: the room comes from members that must
          // forward and report. Having turned the engine (next() does),
          // the publisher gives its CPU to them: on a host whose members
          // share the CPUs (a testbed) a publisher that spins holds one.
          if (me.next(m)) take(m);
          else std::this_thread::yield();
        }
        if (gap_ns == 0 && me.next(m)) take(m);
      }
      f.end_publish_ns = clock_ns();
    }
    // Every member takes the rest (bounded: a stream that stops ends it).
    const uint64_t give_up = clock_ns() + 60'000'000'000ull + total * 20'000ull;
    while (expect < want && f.bad == 0 && me.stream_status().ok() && clock_ns() < give_up)
      if (me.next_for(m, std::chrono::milliseconds(10))) take(m);
    if (!me.stream_status().ok())
      std::fprintf(stderr, "lanecast bench: rank %u: %s\n", g->rank(), me.stream_status().message.c_str());
    f.frames = frames_sent(*g) - frames_before;
    seq += total;
    // Everyone's figures to everyone (rank 0 prints).
    std::vector<StreamFigures> all(g->size());
    all[g->rank()] = f;
    std::vector<std::byte*> at;
    for (auto& x : all) at.push_back(reinterpret_cast<std::byte*>(&x));
    all_to_all(*g, at, sizeof(StreamFigures), "exchanging figures");
    if (g->rank() != 0) continue;
    StreamRow row;
    row.algo = who.spec.algo;
    row.fanout = g->caps().stream_fanout;
    row.offered = c.msg_rate;
    row.nodes = g->size();
    row.size = size;
    row.messages = c.stream_messages;
    uint64_t last = 0, frames = 0, missing = 0, bad = 0;
    const StreamFigures& p = all[c.root];
    for (const StreamFigures& x : all) {
      row.histogram.merge(x.hist);
      last = std::max(last, x.last_ns);
      frames += x.frames;
      bad += x.bad;
      missing += total - std::min(total, x.delivered);
    }
    row.would_block = p.would_block;
    row.verified = bad == 0 && missing == 0;
    all_ok = all_ok && row.verified;
    if (!row.verified) {
      row.error = std::to_string(missing) + " messages missing, " + std::to_string(bad) +
                  " out of order or differing, over " + std::to_string(g->size()) + " members";
      if (c.json) rows.push_back(row);
      else print_stream_row(row);
      continue;  // every member goes on to the next size alike (only rank 0 knows of the failure)
    }
    fill_stream_figures(row, p.first_timed_ns, last, p.end_publish_ns, frames, total);
    if (c.json) rows.push_back(row);
    else print_stream_row(row);
  }
  if (c.counters) {
    std::printf("rank %u:", g->rank());
    node_counters(me).for_each([](std::string_view name, uint64_t v) {
      if (v) std::printf(" %.*s=%" PRIu64, static_cast<int>(name.size()), name.data(), v);
    });
    std::printf("\n");
  }
  if (g->rank() == 0 && c.json) print_stream_json(rows);
  barrier(*g);  // nobody leaves while another still needs its acks
  return all_ok ? 0 : 1;
}

}  // namespace lanecast::apps
