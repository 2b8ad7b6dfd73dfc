// The soak: many broadcasts of mixed sizes over every algorithm, and beside
// them a stream of many messages, in one process on the fabric, with faults
// on every member's port (drivers/fault/) - by default 5% loss, 2%
// reordering, 1% duplication and 0.5% corruption of every frame received.
// Every member checks every byte of every broadcast and every message; at the
// end it prints whether each was delivered exactly once and equal to the
// source, the members' retransmissions and drops by reason, the faults
// injected, and the process's RSS at the start, the middle and the end.
//
// Exit status: 0 everything delivered exactly once and intact, 1 not (a
// broadcast failed or hung, a message was lost, duplicated, out of order or
// changed), 2 bad usage, 3 the engine could not start. tests/bench/soak.sh
// runs it with the full counts; meson registers a short one for CI.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "algos/registry.h"
#include "apps/common/fault_text.h"
#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "engine/group/fault_keys.h"
#include "lanecast/lanecast.h"
#include "engine/api/member_internals.h"

namespace lanecast::soak {
namespace {

using namespace std::chrono_literals;
using apps::UsageError;

struct Settings {
  uint64_t broadcasts = 100'000;
  uint64_t stream_messages = 1'000'000;
  uint32_t nodes = 8;
  uint64_t size_lo = 1, size_hi = 1 << 20;
  uint64_t msg_lo = 1, msg_hi = 4096;
  uint64_t seed = 1;
  std::string faults_text = "loss=0.05,reorder=0.02,dup=0.01,corrupt=0.005";
  std::string algos = "all";
  FaultOptions faults;
  double timeout_s = 120;  // one broadcast, or the stream's last message, later than this: a hang
};

// lo..hi, every power of two about as likely as the next (log-uniform).
uint64_t mixed_size(std::mt19937_64& rng, uint64_t lo, uint64_t hi) {
  const double a = std::log(static_cast<double>(lo)), b = std::log(static_cast<double>(hi) + 1);
  const double x = std::exp(a + (b - a) * std::uniform_real_distribution<double>(0, 1)(rng));
  return std::clamp<uint64_t>(static_cast<uint64_t>(x), lo, hi);
}

// A line of /proc/self/status ("VmRSS", "VmHWM"), in bytes; 0 if unknown.
uint64_t status_bytes(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  uint64_t kb = 0;
  const size_t n = std::strlen(key);
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, key, n) == 0 && line[n] == ':' && std::sscanf(line + n + 1, " %" SCNu64, &kb) == 1) break;
  std::fclose(f);
  return kb * 1024;
}
uint64_t rss_bytes() { return status_bytes("VmRSS"); }

// ---------------------------------------------------------------- the stream

// Message `seq`'s size and bytes, which every member computes alone.
struct StreamPlan {
  uint64_t seed, lo, hi;
  uint64_t size_of(uint64_t seq) const {
    std::mt19937_64 rng(seed ^ (seq * 0x9E3779B97F4A7C15ULL));
    return mixed_size(rng, lo, hi);
  }
  uint64_t pattern(uint64_t seq) const { return apps::pattern_seed(seed, 7, seq); }
};

// What one member saw of the stream, on its polling core.
struct alignas(64) StreamTally {
  std::atomic<uint64_t> delivered{0};  // messages in order, intact
  std::string error;                   // the first that was not
  std::atomic<bool> failed{false};
  void take(const StreamMessage& m, const StreamPlan& plan) {
    if (failed.load(std::memory_order_relaxed)) return;
    const uint64_t due = delivered.load(std::memory_order_relaxed);
    if (m.seq != due) {
      error = "message " + std::to_string(m.seq) + " where " + std::to_string(due) + " was due (" +
              (m.seq < due ? "duplicated" : "one lost or out of order") + ")";
    } else if (m.data.size() != plan.size_of(m.seq) || apps::check_pattern(m.data, plan.pattern(m.seq)) != m.data.size()) {
      error = "message " + std::to_string(m.seq) + " differs from what was published";
    } else {
      delivered.store(due + 1, std::memory_order_release);
      return;
    }
    failed.store(true, std::memory_order_release);
  }
};

// Publishes the stream's messages; "" or why it stopped.
std::string publish(Publisher& pub, const StreamPlan& plan, uint64_t messages, double timeout_s) {
  std::vector<std::byte> msg(plan.hi);
  for (uint64_t s = 0; s < messages; ++s) {
    const std::span<std::byte> m(msg.data(), plan.size_of(s));
    apps::fill_pattern(m, plan.pattern(s));
    const PublishResult r = pub.publish_for(m, std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                   std::chrono::duration<double>(timeout_s)));
    if (r != PublishResult::Ok)
      return "publishing message " + std::to_string(s) + ": " +
             (r == PublishResult::WouldBlock ? "the window stayed full for " + std::to_string(timeout_s) + " s"
                                             : pub.status().message);
  }
  return "";
}

// ---------------------------------------------------------------- broadcasts

struct BroadcastTally {
  uint64_t done = 0;
  uint64_t bytes = 0;
  std::vector<uint64_t> expected_bytes;  // per member: what it should have delivered
  std::string error;                     // the first failure
};

// One broadcast on every member; "" or what went wrong.
std::string broadcast_once(LocalGroup& g, Rank root, uint64_t size, const std::string& algo,
                           std::vector<std::vector<std::byte>>& bufs, uint64_t pattern, double timeout_s) {
  const uint32_t p = g.size();
  apps::fill_pattern(std::span(bufs[root].data(), size), pattern);
  std::vector<Completion> done(p);
  for (Rank r = 0; r < p; ++r)
    if (r != root) done[r] = g.member(r).broadcast(root, std::span(bufs[r].data(), size), algo);
  done[root] = g.member(root).broadcast(root, std::span(bufs[root].data(), size), algo);
  std::string err;
  for (Rank r = 0; r < p; ++r) {
    const auto s = done[r].wait_for(std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(timeout_s)));
    if (!s) {
      err += "rank " + std::to_string(r) + " not done after " + std::to_string(timeout_s) + " s (a hang); ";
    } else if (!s->ok()) {
      err += "rank " + std::to_string(r) + ": " + s->message + "; ";
    } else if (r != root && std::memcmp(bufs[r].data(), bufs[root].data(), size) != 0) {
      err += "rank " + std::to_string(r) + "'s bytes differ from the root's; ";
    }
  }
  return err;
}

// ---------------------------------------------------------------- the report

void print_counters(LocalGroup& g) {
  std::map<std::string, uint64_t> sum;
  for (Rank r = 0; r < g.size(); ++r)
    node_counters(g.member(r)).for_each([&](std::string_view k, uint64_t v) { sum[std::string(k)] += v; });
  const auto line = [&](const char* title, const std::vector<std::string>& names) {
    std::printf("%s:", title);
    for (const std::string& n : names) std::printf(" %s=%" PRIu64, n.c_str(), sum[n]);
    std::printf("\n");
  };
  line("retransmits (members summed)", {"tx_retransmits", "fast_retransmits", "rto_timeouts", "tx_abandoned"});
  // Every refusal the members counted, by reason.
  std::printf("drops by reason (members summed):");
  for (const auto& [name, v] : sum) {
    const bool drop = name.starts_with("bad_") || name == "too_short" || name == "header_split" ||
                      (name.starts_with("rx_") && name != "rx_frames" && name != "rx_data" && name != "rx_acks" &&
                       name != "rx_signals" && name != "rx_datagrams" && name != "rx_stashed") ||
                      name == "stream_no_state";
    if (drop && v > 0) std::printf(" %s=%" PRIu64, name.c_str(), v);
  }
  std::printf("\n");
  FaultCounters f;
  for (Rank r = 0; r < g.size(); ++r)
    for (const FaultCounters& x : {g.port_counters(r).rx_faults, g.port_counters(r).tx_faults}) {
      f.lost += x.lost, f.burst_lost += x.burst_lost, f.reordered += x.reordered, f.duplicated += x.duplicated;
      f.corrupted_header += x.corrupted_header, f.corrupted_payload += x.corrupted_payload;
      f.delayed += x.delayed, f.no_buffer += x.no_buffer;
    }
  std::printf("faults injected (ports summed): lost=%" PRIu64 " burst_lost=%" PRIu64 " reordered=%" PRIu64
              " duplicated=%" PRIu64 " corrupted_header=%" PRIu64 " corrupted_payload=%" PRIu64 " delayed=%" PRIu64
              " no_buffer=%" PRIu64 "\n",
              f.lost, f.burst_lost, f.reordered, f.duplicated, f.corrupted_header, f.corrupted_payload, f.delayed,
              f.no_buffer);
  line("work (members summed)", {"ops_completed", "ops_failed", "delivered_bytes", "stream_msgs_delivered", "tx_data",
                                 "tx_acks", "stream_batches_tx"});
}

// Every member's nonzero counters, its port's and the fabric's: what a
// failure looked like from each side.
void print_members(LocalGroup& g) {
  for (Rank r = 0; r < g.size(); ++r) {
    std::printf("rank %u:", r);
    node_counters(g.member(r)).for_each([](std::string_view name, uint64_t v) {
      if (v) std::printf(" %.*s=%" PRIu64, static_cast<int>(name.size()), name.data(), v);
    });
    const PortCounters p = g.port_counters(r);
    std::printf("\n  port: rx=%" PRIu64 " tx=%" PRIu64 " tx_full=%" PRIu64 "\n%s", p.rx_frames, p.tx_frames, p.tx_full,
                apps::fault_counters_text(p).c_str());
  }
  const FabricCounters f = g.fabric_counters();
  std::printf("fabric: switched=%" PRIu64 " lost=%" PRIu64 " queue_drops=%" PRIu64 " pool_drops=%" PRIu64
              " unknown_destination=%" PRIu64 " replicated=%" PRIu64 " not_joined=%" PRIu64 "\n",
              f.switched, f.lost, f.queue_drops, f.pool_drops, f.unknown_destination, f.replicated, f.not_joined);
}

double mib(uint64_t b) { return static_cast<double>(b) / 1048576.0; }

// ---------------------------------------------------------------- main

apps::OptionTable make_table(Settings& s) {
  apps::OptionTable t;
  t.add({"broadcasts", "N", "100000", "broadcasts, each of a size drawn from --sizes, the algorithms in turn",
         [&](std::string_view v) { s.broadcasts = apps::parse_uint(v, "--broadcasts", 1'000'000'000); }});
  t.add({"stream-messages", "M", "1000000", "messages of the stream beside them (0: no stream)",
         [&](std::string_view v) { s.stream_messages = apps::parse_uint(v, "--stream-messages", 1'000'000'000'000); }});
  t.add({"nodes", "P", "8", "members, 2..64",
         [&](std::string_view v) { s.nodes = static_cast<uint32_t>(apps::parse_uint(v, "--nodes", 64)); }});
  const auto range = [](std::string_view v, const char* what, uint64_t* lo, uint64_t* hi) {
    const size_t colon = v.find(':');
    if (colon == std::string_view::npos) throw UsageError(std::string(what) + ": LO:HI, e.g. 1:1M");
    *lo = apps::parse_size(v.substr(0, colon), what);
    *hi = apps::parse_size(v.substr(colon + 1), what);
    if (*lo == 0 || *lo > *hi) throw UsageError(std::string(what) + ": needs 0 < LO <= HI");
  };
  t.add({"sizes", "LO:HI", "1:1M", "broadcast sizes, log-uniform between LO and HI (at most 64M)",
         [&, range](std::string_view v) { range(v, "--sizes", &s.size_lo, &s.size_hi); }});
  t.add({"message-sizes", "LO:HI", "1:4K", "stream message sizes, log-uniform (at most 1M)",
         [&, range](std::string_view v) { range(v, "--message-sizes", &s.msg_lo, &s.msg_hi); }});
  t.add({"algo", "LIST", "all", "the algorithms the broadcasts take in turn: 'all' or a list, e.g. 'chain,symmetric'",
         [&](std::string_view v) { s.algos = std::string(v); }});
  t.add({"faults", "SPEC", s.faults_text, "faults on every member's port, as lanecast bench --faults takes them",
         [&](std::string_view v) { s.faults_text = std::string(v); }});
  t.add({"seed", "S", "1", "seed of the sizes, roots, bytes and (unless --faults says seed=) the faults",
         [&](std::string_view v) { s.seed = apps::parse_uint(v, "--seed", UINT64_MAX); }});
  t.add({"timeout", "S", "120", "a broadcast not done, or a stream not delivered, this long after it could: a hang",
         [&](std::string_view v) { s.timeout_s = apps::parse_double(v, "--timeout", 1, 86'400); }});
  return t;
}

int run(int argc, char** argv) {
  Settings s;
  apps::OptionTable table = make_table(s);
  if (table.parse(argc, argv, 1)) {
    std::cout << "usage: soak [options]\n\n"
                 "Broadcasts of mixed sizes over every algorithm and a stream beside them, on the in-process\n"
                 "fabric with faults on every port; checks every byte, prints what was delivered, resent and\n"
                 "dropped, and the RSS at the start, middle and end.\n\noptions:\n"
              << table.help() << "\nfaults:\n" << apps::fault_text_help();
    return 0;
  }
  if (s.nodes < 2) throw UsageError("--nodes must be 2..64");
  if (s.size_hi > (64u << 20)) throw UsageError("--sizes: at most 64M");
  if (s.msg_hi > (1u << 20)) throw UsageError("--message-sizes: at most 1M");
  s.faults = apps::parse_fault_text(s.faults_text, "--faults");
  if (s.faults_text.find("seed=") == std::string::npos) s.faults.seed = s.seed;

  std::vector<std::string> algos;
  for (const auto& a : algos::algorithms())
    if (s.algos == "all" || ("," + s.algos + ",").find("," + std::string(a.name) + ",") != std::string::npos)
      algos.emplace_back(a.name);
  if (algos.empty()) throw UsageError("--algo: no known algorithm in '" + s.algos + "'");
  GroupOptions go;
  go.nodes = s.nodes;
  go.algo = "chain";
  go.max_message_bytes = s.size_hi;
  go.faults = s.faults;
  go.streams.fanout = 2;
  go.streams.window_bytes = std::max<uint64_t>(4u << 20, 4 * s.msg_hi);
  EngineOptions eo;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, (LocalGroup::memory_bytes(go) >> 20) * 2 + 256));
  Engine engine(eo);
  auto g = engine.create_local_group(go);

  std::printf("# soak: %" PRIu64 " broadcasts of %s..%s (log-uniform) over %zu algorithms in turn, roots at random; "
              "a stream of %" PRIu64 " messages of %s..%s beside them; %u members on the fabric, %u polling core(s); seed %" PRIu64 "\n",
              s.broadcasts, apps::format_size(s.size_lo).c_str(), apps::format_size(s.size_hi).c_str(), algos.size(),
              s.stream_messages, apps::format_size(s.msg_lo).c_str(), apps::format_size(s.msg_hi).c_str(), s.nodes,
              engine.polling_cores(), s.seed);
  std::printf("# faults: %s\n", engine::describe_faults(s.faults).c_str());
  std::fflush(stdout);

  std::vector<std::vector<std::byte>> bufs(s.nodes, std::vector<std::byte>(s.size_hi));
  for (auto& b : bufs) std::fill(b.begin(), b.end(), std::byte{0});  // touched: the RSS counts them from the start
  const StreamPlan plan{s.seed, s.msg_lo, s.msg_hi};
  std::vector<StreamTally> stream(s.nodes);
  for (Rank r = 0; r < s.nodes; ++r)
    g->member(r).on_message([t = &stream[r], &plan](const StreamMessage& m) { t->take(m, plan); });
  const Rank publisher = 1;
  Publisher pub = g->member(publisher).open_stream(0);

  const uint64_t rss_start = rss_bytes();
  const auto t0 = std::chrono::steady_clock::now();
  std::string publish_error;
  std::thread publishing([&] {
    if (s.stream_messages > 0) publish_error = publish(pub, plan, s.stream_messages, s.timeout_s);
  });

  BroadcastTally b;
  b.expected_bytes.assign(s.nodes, 0);
  std::mt19937_64 rng(s.seed);
  uint64_t rss_middle = 0;
  for (uint64_t i = 0; i < s.broadcasts && b.error.empty(); ++i) {
    const std::string& algo = algos[i % algos.size()];
    const Rank root = static_cast<Rank>(rng() % s.nodes);
    const uint64_t size = mixed_size(rng, s.size_lo, s.size_hi);
    const std::string err = broadcast_once(*g, root, size, algo, bufs, apps::pattern_seed(s.seed, size, i), s.timeout_s);
    if (!err.empty()) {
      b.error = "broadcast " + std::to_string(i) + " (" + algo + ", " + std::to_string(size) + " B, root " +
                std::to_string(root) + "): " + err;
      break;
    }
    ++b.done;
    b.bytes += size;
    for (Rank r = 0; r < s.nodes; ++r)
      if (r != root) b.expected_bytes[r] += size;
    if (i + 1 == s.broadcasts / 2) rss_middle = rss_bytes();
    if (s.broadcasts >= 10 && (i + 1) % (s.broadcasts / 10) == 0) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("#   %" PRIu64 " broadcasts, %" PRIu64 " stream messages on the slowest member, %.1f s, RSS %.1f MiB\n",
                  i + 1,
                  std::min_element(stream.begin(), stream.end(), [](const StreamTally& a, const StreamTally& c) {
                    return a.delivered.load() < c.delivered.load();
                  })->delivered.load(),
                  secs, mib(rss_bytes()));
      std::fflush(stdout);
    }
  }
  const double broadcast_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  publishing.join();
  // Every member delivers the stream's last message, or it hung.
  auto last_progress = std::chrono::steady_clock::now();
  for (uint64_t seen = 0;;) {
    uint64_t least = UINT64_MAX, sum = 0;
    bool failed = false;
    for (const StreamTally& t : stream) {
      least = std::min(least, t.delivered.load());
      sum += t.delivered.load();
      failed = failed || t.failed.load();
    }
    if (failed || least >= s.stream_messages || !publish_error.empty()) break;
    if (sum != seen) seen = sum, last_progress = std::chrono::steady_clock::now();
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::duration<double>(s.timeout_s)) break;
    std::this_thread::sleep_for(1ms);
  }
  const double total_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t rss_end = rss_bytes();
  if (rss_middle == 0) rss_middle = rss_end;

  // Exactly once: each member took each byte of each broadcast once, and
  // each message of the stream once, in order.
  bool bytes_once = b.error.empty();
  for (Rank r = 0; r < s.nodes; ++r)
    bytes_once = bytes_once && node_counters(g->member(r)).delivered_bytes.get() == b.expected_bytes[r];
  std::printf("broadcasts: %" PRIu64 " of %" PRIu64 " done in %.1f s, %.1f MiB from the roots; delivered exactly once "
              "and byte-identical on every member: %s\n",
              b.done, s.broadcasts, broadcast_secs, mib(b.bytes), bytes_once ? "yes" : "NO");
  if (!b.error.empty()) std::printf("  %s\n", b.error.c_str());
  for (Rank r = 0; r < s.nodes && b.error.empty(); ++r)
    if (node_counters(g->member(r)).delivered_bytes.get() != b.expected_bytes[r])
      std::printf("  rank %u delivered %" PRIu64 " bytes where %" PRIu64 " were due\n", r,
                  node_counters(g->member(r)).delivered_bytes.get(), b.expected_bytes[r]);
  bool stream_ok = publish_error.empty();
  std::printf("stream: %" PRIu64 " messages from rank %u, delivered on each member:", s.stream_messages, publisher);
  for (const StreamTally& t : stream) {
    std::printf(" %" PRIu64, t.delivered.load());
    stream_ok = stream_ok && !t.failed.load() && t.delivered.load() == s.stream_messages;
  }
  for (Rank r = 0; r < s.nodes; ++r)
    stream_ok = stream_ok && node_counters(g->member(r)).streams.stream_msgs_delivered.get() == s.stream_messages;
  std::printf("; exactly once, in order and intact on every member: %s (%.1f s)\n", stream_ok ? "yes" : "NO", total_secs);
  if (!publish_error.empty()) std::printf("  %s\n", publish_error.c_str());
  for (Rank r = 0; r < s.nodes; ++r)
    if (stream[r].failed.load()) std::printf("  rank %u: %s\n", r, stream[r].error.c_str());
  print_counters(*g);
  if (!bytes_once || !stream_ok) print_members(*g);
  const double growth = rss_middle > 0 ? 100.0 * (static_cast<double>(rss_end) - static_cast<double>(rss_middle)) /
                                             static_cast<double>(rss_middle)
                                       : 0;
  std::printf("rss: start %.1f MiB, middle %.1f MiB, end %.1f MiB (end - middle: %+.2f%%; flat within 5%%: %s), "
              "peak %.1f MiB\n",
              mib(rss_start), mib(rss_middle), mib(rss_end), growth, growth <= 5 ? "yes" : "NO",
              mib(status_bytes("VmHWM")));
  std::printf("time: %.1f s\n", total_secs);
  // The group goes before the tallies its members' handlers write.
  pub = Publisher();
  g.reset();
  return bytes_once && stream_ok ? 0 : 1;
}

}  // namespace
}  // namespace lanecast::soak

int main(int argc, char** argv) {
  try {
    return lanecast::soak::run(argc, argv);
  } catch (const lanecast::apps::UsageError& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "soak: %s\n", e.what());
    return 3;
  }
}
