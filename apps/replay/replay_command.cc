// `lanecast replay --pcap FILE`: a capture's packets as one stream's
// messages to every member, paced against absolute time, the send-time
// error against the schedule measured, every member's deliveries checked
// against the file and, on request, recorded to pcap.
//
// In process (--nodes N, the default) the members check and record on their
// polling cores; as a member of a configured group (--config FILE --rank R)
// the publisher replays and every member checks what it takes with next().
#include "apps/replay/replay_command.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <functional>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "apps/bench/log_histogram.h"
#include "apps/bench/testbed_bench.h"
#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/replay/cpu_pin.h"
#include "apps/replay/pcap_source.h"
#include "apps/replay/pcap_writer.h"
#include "apps/replay/replay_schedule.h"
#include "engine/lanecast.h"
#include "engine/member_internals.h"

namespace lanecast::apps {
namespace {

using replay::PcapSource;
using replay::Timing;

struct ReplayConfig {
  std::string pcap;
  bool whole_frame = false;
  std::string filter;
  Timing timing;
  uint64_t loops = 1;
  uint32_t nodes = 8;
  Rank publisher = 0;
  bool verify = false;
  std::string record;  // in process: a directory (member-R.pcap each); a member: a file
  std::string link;    // record's link: "" = raw with --whole-frame, else udp
  bool json = false;
  bool counters = false;
  uint32_t cores = 0;
  double rate_mbit = 10'000;
  std::string config;
  std::optional<uint32_t> rank;
  uint64_t window_bytes = 0;  // 0: from the largest packet
  uint32_t testbed_nodes = 0; // --testbed N: a member process per namespace
  uint32_t mtu = 1500;
};

OptionTable make_table(ReplayConfig& c, int& timing_given) {
  OptionTable t;
  t.add({"pcap", "FILE", "", "the capture: pcap or pcapng, microsecond or nanosecond time stamps",
         [&](std::string_view v) { c.pcap = std::string(v); }});
  t.add({"whole-frame", "", "", "each packet as captured is a message (default: its UDP payload; other packets are skipped, counted)",
         [&](std::string_view) { c.whole_frame = true; }});
  t.add({"filter", "BPF", "", "only the packets this filter (tcpdump's syntax) takes",
         [&](std::string_view v) { c.filter = std::string(v); }});
  t.add({"speed", "X", "1", "send at the capture's own spacing divided by X (2: twice as fast)",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Speed, parse_double(v, "--speed", 1e-6, 1e9)};
           ++timing_given;
         }});
  t.add({"topspeed", "", "", "as fast as the stream takes them",
         [&](std::string_view) {
           c.timing = Timing{Timing::TopSpeed, 0};
           ++timing_given;
         }});
  t.add({"pps", "N", "", "N packets per second, evenly",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Pps, parse_double(v, "--pps", 1e-3, 1e9)};
           ++timing_given;
         }});
  t.add({"mbps", "N", "", "N Mbit/s of the messages' bytes",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Mbps, parse_double(v, "--mbps", 1e-3, 1e7)};
           ++timing_given;
         }});
  t.add({"loop", "N", "1", "replay the file N times (each loop's timing starts afresh)",
         [&](std::string_view v) { c.loops = parse_uint(v, "--loop", 1'000'000); }});
  t.add({"nodes", "N", "8", "members in this process, on the in-process fabric",
         [&](std::string_view v) { c.nodes = static_cast<uint32_t>(parse_uint(v, "--nodes", 1024)); }});
  t.add({"publisher", "R", "0", "the rank that replays",
         [&](std::string_view v) { c.publisher = static_cast<Rank>(parse_uint(v, "--publisher", 1023)); }});
  t.add({"verify", "", "", "check every member's messages against the file: count, order, bytes",
         [&](std::string_view) { c.verify = true; }});
  t.add({"record", "PATH", "", "write what each member delivered to pcap (nanosecond time stamps): in process a "
         "directory (member-R.pcap), with --config a file",
         [&](std::string_view v) { c.record = std::string(v); }});
  t.add({"link", "udp|raw", "udp (raw with --whole-frame)", "how --record writes messages: as UDP payloads, or as the frames themselves",
         [&](std::string_view v) {
           replay::parse_record_link(std::string(v));
           c.link = std::string(v);
         }});
  t.add({"config", "FILE", "", "run as member --rank of the group FILE describes (every member runs the same command)",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "with --config: this process's rank",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"testbed", "N", "", "one member process in each of N network namespaces, built for the run as `lanecast "
         "bench --testbed` builds them (root; --rate is then the links' tbf rate, default 200)",
         [&](std::string_view v) { c.testbed_nodes = static_cast<uint32_t>(parse_uint(v, "--testbed", 1'000'000)); }});
  t.add({"mtu", "M", "1500", "with --testbed: the links' MTU",
         [&](std::string_view v) { c.mtu = static_cast<uint32_t>(parse_uint(v, "--mtu", 9000)); }});
  t.add({"cores", "C", "auto", "polling cores", [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"rate", "MBIT", "10000", "in process: the fabric's link rate (0: unlimited)",
         [&](std::string_view v) { c.rate_mbit = parse_double(v, "--rate", 0, 1e7); }});
  t.add({"window-bytes", "BYTES", "auto", "the stream's window (default: 4M, or four times the largest packet)",
         [&](std::string_view v) { c.window_bytes = parse_size(v, "--window-bytes"); }});
  t.add({"json", "", "", "print the result as one JSON object", [&](std::string_view) { c.json = true; }});
  t.add({"counters", "", "", "every member's counters at the end", [&](std::string_view) { c.counters = true; }});
  return t;
}

const char* kUsage =
    "usage: lanecast replay --pcap FILE [--speed X | --topspeed | --pps N | --mbps N] [--loop N]\n"
    "                       [--nodes N] [--verify] [--record DIR] [--filter BPF] [--whole-frame] [--json]\n"
    "       lanecast replay --pcap FILE --config GROUP --rank R ...   (one member per process)\n"
    "\n"
    "Replays a capture to every member of a group as one stream: each packet's UDP\n"
    "payload (or, --whole-frame, the packet) is a message, published when the\n"
    "schedule says - against absolute time, not by sleeping between packets - and\n"
    "delivered to every member in order, exactly once. Prints the packets and how\n"
    "many were skipped (not UDP, fragments, truncated), the send-time error against\n"
    "the schedule (p50/p99/max), the messages each member delivered and, with\n"
    "--verify, whether every member's messages equal the file's (count, order,\n"
    "bytes). --record writes each member's deliveries as pcap, for tcpdump, Wireshark\n"
    "or a later replay. Exit status 0 when everything was delivered (and verified).\n"
    "\n";

uint64_t wait_until(uint64_t due) {
  for (;;) {
    const uint64_t now = clock_ns();
    if (now >= due) return now;
    // Sleep while far; spin the last 150 us (a sleep overshoots by tens of us).
    if (due - now > 250'000) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now - 150'000));
  }
}

// What one member delivered, checked against the file; kept for --record.
struct alignas(64) MemberLog {
  const PcapSource* src = nullptr;
  bool verify = false, record = false;
  uint64_t delivered = 0;
  uint64_t first_bad = UINT64_MAX;
  std::string error;
  std::vector<std::byte> recorded;     // each message's bytes, one after the other
  std::vector<std::pair<uint64_t, uint32_t>> times;  // its delivery time (monotonic) and length
  std::atomic<uint64_t> done{0};

  void take(uint64_t seq, std::span<const std::byte> data) {
    const uint64_t now = clock_ns();
    if (seq != delivered && error.empty())
      error = "message " + std::to_string(seq) + " where " + std::to_string(delivered) + " was due";
    if (verify && error.empty()) {
      const auto want = src->payload(seq % src->packets.size());
      if (want.size() != data.size() || std::memcmp(want.data(), data.data(), data.size()) != 0)
        error = "message " + std::to_string(seq) + " (packet " + std::to_string(seq % src->packets.size() + 1) +
                " of the file) differs: " + std::to_string(data.size()) + " bytes, the file has " +
                std::to_string(want.size());
    }
    if (record) {
      recorded.insert(recorded.end(), data.begin(), data.end());
      times.emplace_back(now, static_cast<uint32_t>(data.size()));
    }
    ++delivered;
    done.store(delivered, std::memory_order_release);
  }
};

struct Outcome {
  uint64_t published = 0, would_block = 0;
  LogHistogram error;  // send time - scheduled time
  double seconds = 0;
};

// The publisher's loop: every packet at its time, every loop re-anchored.
Outcome publish_all(Publisher& pub, const PcapSource& src, const Timing& timing, uint64_t loops,
                    const std::function<void()>& between) {
  const std::vector<uint64_t> offsets = replay::offsets_of(src, timing);
  Outcome o;
  const uint64_t start = clock_ns();
  for (uint64_t l = 0; l < loops; ++l) {
    const uint64_t anchor = clock_ns() + 200'000;  // room to reach the first packet's time
    for (size_t i = 0; i < src.packets.size(); ++i) {
      const uint64_t due = anchor + offsets[i];
      if (timing.kind != Timing::TopSpeed) wait_until(due);
      for (;;) {
        const uint64_t t = clock_ns();
        const PublishResult r = pub.publish(src.payload(i));
        if (r == PublishResult::Ok) {
          if (timing.kind != Timing::TopSpeed) o.error.add(t > due ? t - due : 0);
          break;
        }
        if (r != PublishResult::WouldBlock) throw std::runtime_error("replay: " + pub.status().message);
        ++o.would_block;
        between();
      }
      ++o.published;
    }
  }
  o.seconds = static_cast<double>(clock_ns() - start) / 1e9;
  return o;
}

void print_source(const ReplayConfig& c, const PcapSource& s) {
  std::printf("# lanecast replay: %s (%s, %s, %s time stamps): %" PRIu64 " packets read, %zu messages (%s)",
              c.pcap.c_str(), s.pcapng ? "pcapng" : "pcap", s.link.c_str(), s.nanosecond ? "nanosecond" : "microsecond",
              s.read, s.packets.size(), format_size(s.total_bytes()).c_str());
  if (s.not_udp || s.fragments || s.truncated || s.filtered_out)
    std::printf("; skipped: %" PRIu64 " not UDP, %" PRIu64 " fragments, %" PRIu64 " truncated, %" PRIu64
                " left out by the filter",
                s.not_udp, s.fragments, s.truncated, s.filtered_out);
  std::printf("\n# timing: %s, %" PRIu64 " loop%s\n", c.timing.describe().c_str(), c.loops, c.loops == 1 ? "" : "s");
}

replay::RecordLink record_link(const ReplayConfig& c) {
  return c.link.empty() ? (c.whole_frame ? replay::RecordLink::Raw : replay::RecordLink::Udp)
                        : replay::parse_record_link(c.link);
}

void write_record(const std::string& path, const MemberLog& m, replay::RecordLink link, Rank publisher) {
  replay::PcapWriter w(path, link);
  const int64_t to_real = replay::realtime_offset_ns();
  uint64_t at = 0;
  for (const auto& [t, len] : m.times) {
    w.write(static_cast<uint64_t>(static_cast<int64_t>(t) + to_real), publisher, 0,
            std::span(m.recorded.data() + at, len));
    at += len;
  }
  w.flush();
}

int replay_in_process(const ReplayConfig& c, const PcapSource& src, uint64_t window_bytes) {
  GroupOptions go;
  go.nodes = c.nodes;
  go.fabric.rate_mbit = c.rate_mbit;
  go.max_message_bytes = std::max<uint64_t>(1, window_bytes / 2);
  go.streams.window_bytes = window_bytes;
  go.streams.delivery_bytes = window_bytes;
  EngineOptions eo;
  eo.polling_cores = c.cores;
  // The polling cores never sleep while replaying: waking a sleeping core at
  // a publish puts it on the replaying thread's CPU for a moment, and the
  // next packet leaves late (p99 of the send error 10 ms instead of
  // microseconds, 8 members on 2 CPUs).
  eo.idle_sleep_max_ns = 0;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, (LocalGroup::memory_bytes(go) >> 20) * 2 + 256));
  Engine engine(eo);
  auto g = engine.create_local_group(go);
  std::vector<MemberLog> logs(c.nodes);
  const uint64_t total = c.loops * src.packets.size();
  for (Rank r = 0; r < c.nodes; ++r) {
    MemberLog& m = logs[r];
    m.src = &src;
    m.verify = c.verify;
    m.record = !c.record.empty();
    if (m.record) {
      m.recorded.reserve(c.loops * src.total_bytes());
      m.times.reserve(total);
    }
    g->member(r).on_message([&m](const StreamMessage& msg) { m.take(msg.seq, msg.data); });
  }
  Publisher pub = g->member(c.publisher).open_stream(0);
  const std::string placed = replay::keep_off(engine.poller_cpus());
  if (!c.json) {
    print_source(c, src);
    std::printf("# %u members in this process (fabric %g Mbit/s), rank %u replays, %u polling core%s; the replaying "
                "thread %s\n",
                c.nodes, c.rate_mbit, c.publisher, engine.polling_cores(), engine.polling_cores() == 1 ? "" : "s",
                placed.c_str());
    std::fflush(stdout);
  }
  const Outcome o = publish_all(pub, src, c.timing, c.loops, [] { std::this_thread::yield(); });
  const uint64_t give_up = clock_ns() + 60'000'000'000ull;
  for (auto& m : logs)
    while (m.done.load(std::memory_order_acquire) < total && m.error.empty() && clock_ns() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  uint64_t min_delivered = UINT64_MAX;
  std::string error;
  for (Rank r = 0; r < c.nodes; ++r) {
    const uint64_t d = logs[r].done.load(std::memory_order_acquire);
    min_delivered = std::min(min_delivered, d);
    if (!logs[r].error.empty() && error.empty()) error = "rank " + std::to_string(r) + ": " + logs[r].error;
    if (d < total && error.empty())
      error = "rank " + std::to_string(r) + ": " + std::to_string(d) + " of " + std::to_string(total) + " messages delivered";
  }
  const bool ok = error.empty();
  if (!c.record.empty()) {
    if (::mkdir(c.record.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("--record " + c.record + ": " + std::strerror(errno));
    for (Rank r = 0; r < c.nodes; ++r)
      write_record(c.record + "/member-" + std::to_string(r) + ".pcap", logs[r], record_link(c), c.publisher);
  }
  const bool timed = c.timing.kind != Timing::TopSpeed;
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1e3; };
  if (c.json) {
    std::printf("{\"pcap\": \"%s\", \"packets\": %zu, \"packets_read\": %" PRIu64 ", \"skipped\": %" PRIu64
                ", \"loops\": %" PRIu64 ", \"nodes\": %u, \"timing\": \"%s\", \"messages_published\": %" PRIu64
                ", \"messages_delivered_min\": %" PRIu64 ", \"seconds\": %.6f, \"messages_per_s\": %.1f, "
                "\"send_error_p50_us\": %.3f, \"send_error_p99_us\": %.3f, \"send_error_max_us\": %.3f, "
                "\"would_block\": %" PRIu64 ", \"verified\": %s%s%s%s}\n",
                c.pcap.c_str(), src.packets.size(), src.read, src.read - src.packets.size(), c.loops, c.nodes,
                c.timing.kind == Timing::TopSpeed ? "topspeed" : c.timing.kind == Timing::Speed ? "speed"
                : c.timing.kind == Timing::Pps ? "pps" : "mbps",
                o.published, min_delivered, o.seconds, o.seconds > 0 ? static_cast<double>(o.published) / o.seconds : 0,
                timed ? us(o.error.percentile(0.5)) : 0.0, timed ? us(o.error.percentile(0.99)) : 0.0,
                timed ? us(o.error.max()) : 0.0, o.would_block, ok && c.verify ? "true" : "false",
                ok ? "" : ", \"error\": \"", ok ? "" : error.c_str(), ok ? "" : "\"");
  } else {
    std::printf("%12s %12s %10s %12s %14s %14s %14s %11s %9s\n", "published", "delivered", "seconds", "msgs_per_s",
                "send_err_p50", "send_err_p99", "send_err_max", "would_block", "verified");
    char p50[32] = "-", p99[32] = "-", mx[32] = "-";
    if (timed) {
      std::snprintf(p50, sizeof p50, "%.1f us", us(o.error.percentile(0.5)));
      std::snprintf(p99, sizeof p99, "%.1f us", us(o.error.percentile(0.99)));
      std::snprintf(mx, sizeof mx, "%.1f us", us(o.error.max()));
    }
    std::printf("%12" PRIu64 " %12" PRIu64 " %10.3f %12.0f %14s %14s %14s %11" PRIu64 " %9s\n", o.published,
                min_delivered, o.seconds, o.seconds > 0 ? static_cast<double>(o.published) / o.seconds : 0, p50, p99,
                mx, o.would_block, !c.verify ? "-" : ok ? "yes" : "NO");
    if (!ok) std::printf("FAILED: %s\n", error.c_str());
    if (!c.record.empty())
      std::printf("# recorded: %s/member-0.pcap .. member-%u.pcap (%s, nanosecond time stamps)\n", c.record.c_str(),
                  c.nodes - 1, record_link(c) == replay::RecordLink::Udp ? "UDP payloads" : "frames");
  }
  if (c.counters)
    for (Rank r = 0; r < c.nodes; ++r) {
      std::printf("rank %u:", r);
      for (const auto& [name, v] : g->member(r).counters()) std::printf(" %s=%" PRIu64, name.c_str(), v);
      std::printf("\n");
    }
  return ok ? 0 : 1;
}

// One member per process: the publisher replays; every member takes its
// messages with next(), checks them, and records them.
int replay_member(const ReplayConfig& c, const PcapSource& src) {
  const GroupMember who = load_group_for(c.config, c.rank, c.publisher, 1);
  Engine engine(member_engine_options(who, c.cores, true, false));
  auto g = engine.join(who.spec, who.rank);
  Member& me = g->member();
  const bool publisher = g->rank() == c.publisher;
  MemberLog log;
  log.src = &src;
  log.verify = c.verify;
  log.record = !c.record.empty();
  const uint64_t total = c.loops * src.packets.size();
  StreamMessage m;
  Outcome o;
  Publisher pub;
  if (publisher) {
    pub = me.open_stream(0);
    const std::string placed = replay::keep_off(engine.poller_cpus());
    if (!c.json) {
      print_source(c, src);
      std::printf("# the replaying thread %s\n", placed.c_str());
    }
    o = publish_all(pub, src, c.timing, c.loops, [&] {
      if (me.next(m)) log.take(m.seq, m.data);
    });
  }
  const uint64_t give_up = clock_ns() + 120'000'000'000ull;
  while (log.delivered < total && log.error.empty() && me.stream_status().ok() && clock_ns() < give_up)
    if (me.next_for(m, std::chrono::milliseconds(10))) log.take(m.seq, m.data);
  const bool ok = log.error.empty() && log.delivered == total;
  // Leaving: the publisher once every member delivered everything (the
  // other members may be `lanecast record` processes: no barrier); the
  // others a moment after, so their last acks and reports go out.
  if (publisher) {
    while (pub.stable() < total && me.stream_status().ok() && clock_ns() < give_up)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } else {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  if (!c.record.empty()) {
    // A directory (replay --testbed gives every member the same one): a file per member in it.
    struct stat st{};
    const bool dir = ::stat(c.record.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    write_record(dir ? c.record + "/member-" + std::to_string(g->rank()) + ".pcap" : c.record, log, record_link(c),
                 c.publisher);
  }
  std::printf("rank %u: %" PRIu64 " of %" PRIu64 " messages delivered%s%s", g->rank(), log.delivered, total,
              c.verify ? (ok ? ", verified against the file" : "") : "", log.error.empty() ? "" : (": " + log.error).c_str());
  if (publisher && c.timing.kind != Timing::TopSpeed)
    std::printf("; published %" PRIu64 " in %.3f s, send error p50 %.1f us, p99 %.1f us, max %.1f us", o.published,
                o.seconds, o.error.percentile(0.5) / 1e3, o.error.percentile(0.99) / 1e3, o.error.max() / 1e3);
  std::printf("\n");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

// --testbed N: the members are `lanecast replay --config F --rank I`
// processes in the namespaces of a testbed built for the run (the bench's
// testbed machinery: apps/bench/testbed_bench.h).
int replay_testbed(const ReplayConfig& c, const OptionTable& table, const PcapSource& src) {
  for (const char* o : {"nodes", "config", "rank", "json", "window-bytes"})
    if (table.given(o)) throw UsageError("--" + std::string(o) + " does not apply to --testbed");
  TestbedBenchConfig t;
  t.testbed.nodes = c.testbed_nodes;
  t.testbed.mtu = c.mtu;
  if (table.given("rate")) t.testbed.rate_mbit = testbed_rate_mbit(c.rate_mbit);
  testbed::check(t.testbed);
  if (c.publisher >= c.testbed_nodes) throw UsageError("--publisher is outside the testbed's members");
  uint64_t largest = 1;
  for (const auto& p : src.packets) largest = std::max<uint64_t>(largest, p.len);
  t.sizes = {largest};
  t.root = c.publisher;
  char buf[PATH_MAX];
  const std::string pcap = ::realpath(c.pcap.c_str(), buf) ? buf : c.pcap;
  t.member_command = {"replay", "--pcap", pcap, "--publisher", std::to_string(c.publisher), "--loop",
                      std::to_string(c.loops)};
  switch (c.timing.kind) {
    case Timing::Speed: t.member_command.insert(t.member_command.end(), {"--speed", std::to_string(c.timing.value)}); break;
    case Timing::TopSpeed: t.member_command.push_back("--topspeed"); break;
    case Timing::Pps: t.member_command.insert(t.member_command.end(), {"--pps", std::to_string(c.timing.value)}); break;
    case Timing::Mbps: t.member_command.insert(t.member_command.end(), {"--mbps", std::to_string(c.timing.value)}); break;
  }
  if (c.whole_frame) t.member_command.push_back("--whole-frame");
  if (!c.filter.empty()) t.member_command.insert(t.member_command.end(), {"--filter", c.filter});
  if (c.verify) t.member_command.push_back("--verify");
  if (!c.link.empty()) t.member_command.insert(t.member_command.end(), {"--link", c.link});
  if (!c.record.empty()) {
    if (::mkdir(c.record.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("--record " + c.record + ": " + std::strerror(errno));
    const std::string dir = ::realpath(c.record.c_str(), buf) ? buf : c.record;
    t.member_command.insert(t.member_command.end(), {"--record", dir});
  }
  if (c.counters) t.member_command.push_back("--counters");
  const std::vector<uint64_t> offsets = replay::offsets_of(src, c.timing);
  const double schedule_s = offsets.empty() ? 0 : static_cast<double>(offsets.back()) / 1e9;
  t.deadline_s = 90 + static_cast<double>(c.loops) * (schedule_s + static_cast<double>(src.total_bytes()) * 8 /
                                                                      (t.testbed.rate_mbit * 1e6) * c.testbed_nodes);
  t.payload_bytes = c.loops * src.total_bytes();
  t.payload_how = std::to_string(c.loops) + " x " + std::to_string(src.packets.size()) + " messages of " + c.pcap;
  return bench_testbed(t);
}

}  // namespace

int replay_main(int argc, char** argv) {
  ReplayConfig c;
  int timing_given = 0;
  OptionTable table = make_table(c, timing_given);
  if (table.parse(argc, argv, 1)) {
    std::fputs(kUsage, stdout);
    std::fputs(table.help().c_str(), stdout);
    return 0;
  }
  if (c.pcap.empty()) throw UsageError("--pcap FILE is required (see lanecast replay --help)");
  if (timing_given > 1) throw UsageError("--speed, --topspeed, --pps and --mbps: one at most");
  if (c.nodes == 0) throw UsageError("--nodes must be at least 1");
  if (!c.config.empty() && table.given("nodes")) throw UsageError("--nodes does not apply to --config (the group file says)");
  if (c.config.empty() && !table.given("testbed") && c.publisher >= c.nodes)
    throw UsageError("--publisher " + std::to_string(c.publisher) + " is outside the group of " + std::to_string(c.nodes));
  const uint64_t window = c.window_bytes ? c.window_bytes : 4u << 20;
  const PcapSource src = replay::load_pcap(c.pcap, c.whole_frame, c.filter, window / 2 - 64);
  if (src.packets.empty()) throw std::runtime_error("--pcap " + c.pcap + ": no packet to replay (" +
                                                    std::to_string(src.read) + " read, none a message)");
  if (!c.config.empty()) return replay_member(c, src);
  if (table.given("testbed")) return replay_testbed(c, table, src);
  return replay_in_process(c, src, window);
}

}  // namespace lanecast::apps
