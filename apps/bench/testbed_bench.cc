#include "apps/bench/testbed_bench.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <thread>

#include "apps/bench/member_processes.h"
#include "apps/bench/testbed_report.h"
#include "apps/common/file_tail.h"
#include "apps/common/options.h"
#include "apps/common/progress_line.h"
#include "apps/common/stop_signals.h"
#include "apps/testbed/bpffs.h"
#include "apps/testbed/member_group_file.h"
#include "apps/testbed/testbed_build.h"

namespace lanecast::apps {
namespace {

// XDP on a veth takes frames of one page: MTU 3504 with 4 KiB pages.
constexpr uint32_t kMaxXdpMtu = 3500;
// af_xdp is refused unless this is set (see the error below): whoever looks
// into why can still run it.
constexpr const char* kXdpAnyway = "LANECAST_XDP_ANYWAY";
constexpr auto kPoll = std::chrono::milliseconds(20);
constexpr double kProgressEveryS = 10;  // a line on stderr while the members run

// A directory of this run's files (the group file, every member's output),
// removed with everything in it when the run ends.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "lanecast-testbed-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("cannot make a directory like " + tmpl);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

Payload payload_of(const TestbedBenchConfig& c) {
  if (!c.member_command.empty()) return Payload{c.payload_bytes, c.payload_how};
  const uint64_t per_size = uint64_t{c.warmup} + (c.stream ? c.stream_messages : c.iters);
  uint64_t sum = 0;
  std::string sizes;
  for (uint64_t s : c.sizes) {
    sum += s;
    sizes += (sizes.empty() ? "" : " + ") + format_size(s);
  }
  Payload p;
  p.bytes = c.algos.size() * per_size * sum;
  p.how = std::to_string(c.algos.size()) + (c.algos.size() == 1 ? " algo" : " algos") + " x " +
          std::to_string(per_size) + (c.stream ? " messages" : " broadcasts") + " (warm-up and timed) x (" + sizes + ")";
  return p;
}

Argv member_argv(const TestbedBenchConfig& c, const std::string& self, const std::string& ns,
                 const std::string& group_file, uint32_t rank) {
  if (!c.member_command.empty()) {
    Argv a = {"ip", "netns", "exec", ns, self};
    a.insert(a.end(), c.member_command.begin(), c.member_command.end());
    a.insert(a.end(), {"--config", group_file, "--rank", std::to_string(rank)});
    return a;
  }
  Argv a = {"ip", "netns", "exec", ns, self, "bench", "--config", group_file, "--rank", std::to_string(rank),
            // Many processes on a few CPUs: an idle poller gives its CPU to the next hop's.
            "--yield-when-idle", "--algo", joined(c.algos), "--sizes", c.sizes_text, "--iters",
            std::to_string(c.iters), "--warmup", std::to_string(c.warmup), "--root", std::to_string(c.root), "--seed",
            std::to_string(c.seed)};
  if (c.cores != 0) a.insert(a.end(), {"--cores", std::to_string(c.cores)});
  if (c.progress_in_calls) a.insert(a.end(), {"--progress", "calls"});
  if (c.counters) a.push_back("--counters");
  if (c.json) a.push_back("--json");
  // Every member reads the same rules: the path made absolute (the members
  // start in another directory's namespace, not another file system).
  if (!c.auto_rules.empty())
    a.insert(a.end(), {"--auto-rules", std::filesystem::absolute(c.auto_rules).string()});
  if (c.stream) {
    a.insert(a.end(), {"--stream", "--messages", std::to_string(c.stream_messages)});
    if (c.msg_rate > 0) a.insert(a.end(), {"--msg-rate", std::to_string(c.msg_rate)});
  }
  return a;
}

void print_header(std::FILE* to, const TestbedBenchConfig& c, const testbed::TestbedSpec& t, double pace_mbit,
                  double bound_s, const std::string& group_file) {
  std::fprintf(to, "# lanecast %s --testbed: %u member processes, one in each namespace of testbed %s (%s..%s; "
              "lanecast testbed status --name %s while it runs)\n",
              c.member_command.empty() ? "bench" : c.member_command[0].c_str(), t.nodes, t.name.c_str(), testbed::node_ns(t.name, 0).c_str(),
              testbed::node_ns(t.name, t.nodes - 1).c_str(), t.name.c_str());
  std::fprintf(to, "# links: %u lane%s (a bridge each), tbf %u Mbit/s both ways (burst %u B; %s), MTU %u\n",
              t.lanes, t.lanes > 1 ? "s" : "", t.rate_mbit, testbed::burst_bytes(t), testbed::queues_text(t).c_str(), t.mtu);
  if (c.xdp)
    std::fprintf(to, "# ports: af_xdp on queue 0 - XDP transmit skips the node's qdisc, so the links are shaped on the "
                "bridge side only (the switch's downlinks); the uplinks hold to the rate by the members' pacing\n");
  else
    std::fprintf(to, "# ports: af_packet, qdisc_bypass=0 (every frame passes the node's tbf)%s\n",
                testbed::af_packet_ring_devargs(t.mtu).empty() ? "" : ", rings sized for the MTU");
  if (c.rate_control)
    std::fprintf(to, "# paced: each lane at the rate its controller finds (queueing delay, losses)%s\n",
                 pace_mbit > 0 ? (", at most " + std::to_string(static_cast<uint64_t>(pace_mbit)) + " Mbit/s").c_str()
                               : "; not told the links' rate");
  else if (pace_mbit > 0)
    std::fprintf(to, "# paced: each lane at %g Mbit/s, %u bytes per frame beyond it (tbf counts the frame alone)\n",
                pace_mbit, c.port_overhead);
  else
    std::fprintf(to, "# paced: no (frames pile up behind tbf)\n");
  std::fprintf(to, "# group file %s (discovery; peer timeout %g ms); the run may take %.0f s (--deadline)\n",
              group_file.c_str(), c.peer_timeout_ms, bound_s);
  std::fflush(to);
}

// The members' run, watched: rank 0's output streamed, every member's end
// noted. Ends when all ended; when a member failed and the others are
// still running twice the peer timeout later (plus room to exit); at the
// deadline; or on a stop signal (Stopped).
void watch(MemberProcesses& members, FileTail& rank0, double bound_s, double peer_timeout_ms, ProgressLine& progress) {
  const double grace_s = 3 * peer_timeout_ms / 1e3 + 10;  // detect (2x), linger (1x), exit
  double failed_at = -1;
  uint32_t failed_rank = 0;
  double next_show_s = kProgressEveryS;
  for (;;) {
    // Rank 0's rows go to stdout (a terminal's screen too): the line in
    // place comes off first, and is shown again at its next time.
    rank0.pump([&progress] { progress.clear(); });
    const size_t running = members.poll();
    if (const double now = members.elapsed_s(); now >= next_show_s && running > 0) {
      char text[160];
      std::snprintf(text, sizeof text, "bench --testbed: %.0f s (at most %.0f), %zu of %zu members running", now,
                    bound_s, running, members.members().size());
      progress.show(text);
      next_show_s = now + kProgressEveryS;
    }
    if (StopSignals::received() != 0) {
      members.kill_all("lanecast was stopped");
      StopSignals::throw_if_stopped();
    }
    if (running == 0) return;
    if (failed_at < 0)
      for (const auto& m : members.members())
        if (!m.running && !m.ok()) {
          failed_at = m.ended_s;
          failed_rank = m.rank;
          break;
        }
    const double now = members.elapsed_s();
    if (failed_at >= 0 && now > failed_at + grace_s) {
      char why[160];
      std::snprintf(why, sizeof why, "still running %.0f s after rank %u ended (peer timeout %g ms)", now - failed_at,
                    failed_rank, peer_timeout_ms);
      members.kill_all(why);
      return;
    }
    if (now > bound_s) {
      members.kill_all("the run's deadline of " + std::to_string(static_cast<long>(bound_s)) + " s passed");
      return;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

// After the first member that failed: when each other ended.
void print_failure_timing(std::FILE* to, const MemberProcesses& members, double peer_timeout_ms) {
  const MemberProcesses::Member* first = nullptr;
  for (const auto& m : members.members())
    if (!m.ok() && (first == nullptr || m.ended_s < first->ended_s)) first = &m;
  if (first == nullptr) return;
  double last = first->ended_s;
  for (const auto& m : members.members()) last = std::max(last, m.ended_s);
  std::fprintf(to, "# rank %u ended first (%s) %.2f s into the run; the last member ended %.0f ms later (peer timeout "
              "%g ms)\n",
              first->rank, first->how_ended().c_str(), first->ended_s, (last - first->ended_s) * 1e3, peer_timeout_ms);
}

}  // namespace

uint32_t testbed_rate_mbit(double rate_mbit) {
  if (rate_mbit < 1 || rate_mbit > UINT32_MAX || rate_mbit != static_cast<double>(static_cast<uint32_t>(rate_mbit)))
    throw UsageError("--rate with --testbed: whole Mbit/s, 1 or more (tbf's rate)");
  return static_cast<uint32_t>(rate_mbit);
}

double schedule_bound_s(const TestbedBenchConfig& c) {
  const double bytes_per_s = c.testbed.rate_mbit * 1e6 / 8;
  const uint32_t n = c.testbed.nodes;
  double per_algo = 0;
  for (uint64_t size : c.sizes) {
    const double one = 2.0 * (n - 1) * static_cast<double>(size) / bytes_per_s  // the message, N-1 times, twice
                       + 0.02 * n + 0.05;                                       // the barrier and the exchange
    per_algo += c.stream ? static_cast<double>(c.warmup + c.stream_messages) * (one - 0.02 * n - 0.05 + 50e-6) + 1
                         : (c.warmup + c.iters) * one;
  }
  // Start-up (EAL, the discovery bootstrap's 30 s at most), then a failure's
  // detection and every member's lingering.
  return 60 + c.algos.size() * per_algo + 3 * c.peer_timeout_ms / 1e3;
}

int bench_testbed(const TestbedBenchConfig& c) {
  testbed::TestbedSpec t = c.testbed;
  t.name = "lb" + std::to_string(::getpid() % 10'000'000);  // unique while this process runs
  testbed::check(t);
  // Measured here (Debian 12's DPDK 22.11, kernel 6.18, veths, EAL without
  // hugepages): af_xdp members form the group and carry small broadcasts,
  // but larger ones stall for good - a 1M broadcast after about 260 frames
  // (the sender's interface counts no more transmissions; retransmissions
  // never arrive), with the group's max_message raised to 8M (a pool of
  // 15000 buffers) 1M passes and 2M stalls after 32 frames; with a smaller
  // max_message (256K) not even the bootstrap's hellos get through. The PMD
  // takes its fill ring from the member's payload pool and registers that
  // pool as its umem; lanecast sizes the pool for af_packet. Neither the
  // wake-up socket (which XDP redirection bypasses) nor af_packet on one side
  // changes it.
  if (c.xdp && std::getenv(kXdpAnyway) == nullptr)
    throw UsageError(std::string("--xdp: af_xdp does not work on this testbed with DPDK 22.11: small broadcasts "
                                 "pass, larger ones stall for good (1M after about 260 frames) and with a small "
                                 "max_message the bootstrap fails; the PMD fills its rings from, and registers as its "
                                 "umem, the member's payload pool, which lanecast sizes for af_packet. Use the "
                                 "default af_packet ports, or set ") +
                     kXdpAnyway + "=1 to run it regardless");
  if (c.xdp && t.mtu > kMaxXdpMtu)
    throw UsageError("--xdp: MTU " + std::to_string(t.mtu) + " is too large; XDP on a veth takes at most " +
                     std::to_string(kMaxXdpMtu) + " (one page per frame)");
  if (c.root >= t.nodes)
    throw UsageError("--root " + std::to_string(c.root) + " is outside the testbed's " + std::to_string(t.nodes) +
                     " members");
  testbed::require_root("--testbed");
  // Told the links' rate unless the members are to find it.
  const double pace = c.port_rate_mbit >= 0 ? c.port_rate_mbit : c.rate_control ? 0 : t.rate_mbit;
  const double bound_s = c.deadline_s > 0 ? c.deadline_s : schedule_bound_s(c);

  const StopSignals stop;  // from here, a signal unwinds through every scope below
  const TempDir dir;
  const std::string group_file = dir.path() + "/group.toml";
  // With --json stdout carries one JSON object at the end; what a person
  // reads on the way goes to stderr.
  std::FILE* human = c.json ? stderr : stdout;
  print_header(human, c, t, pace, bound_s, group_file);
  ProgressLine progress(c.quiet);
  progress.show("bench --testbed: building " + std::to_string(t.nodes) + " namespaces, " + std::to_string(t.lanes) +
                (t.lanes == 1 ? " bridge" : " bridges") + ", tbf on every link");
  const auto setup_start = std::chrono::steady_clock::now();
  const testbed::TestbedScope scope(t, [&](uint32_t node) {
    progress.show("bench --testbed: building: node " + std::to_string(node + 1) + " of " + std::to_string(t.nodes));
  });
  {
    char text[128];
    std::snprintf(text, sizeof text, "bench --testbed: the testbed is up (%.1f s); starting %u members",
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count(), t.nodes);
    progress.show(text);
  }
  // The members do not see it (`ip netns exec` gives each a /sys of its
  // namespace), so libxdp loads its program without the dispatcher; mounted
  // all the same for the XDP tools one may run beside.
  if (c.xdp) std::fprintf(human, "# %s (the members' libxdp has its own /sys and loads no dispatcher)\n",
                         testbed::mount_bpffs_if_missing().c_str());

  testbed::MemberGroup g;
  g.name = "testbed-" + t.name;
  g.id = std::random_device{}() | 1;  // nonzero, and another run's frames are not this group's
  g.max_message = *std::max_element(c.sizes.begin(), c.sizes.end());
  // A stream's members exchange their figures (latency histograms) by
  // broadcasts after each size: at max_message 64 they went in 64-byte
  // pieces, about two thousand broadcasts the links' counters then counted
  // beside the stream's own frames.
  if (c.stream) g.max_message = std::max<uint64_t>(g.max_message, 64 << 10);
  g.peer_timeout_ms = c.peer_timeout_ms;
  g.port_rate_mbit = pace;
  g.port_overhead = c.port_overhead;
  g.rate_control = c.rate_control;
  g.window = c.window;
  g.segment = c.segment;
  g.xdp = c.xdp;
  g.mcast = c.mcast;
  g.stream_fanout = c.stream_fanout;
  g.stream_window = c.stream_window;
  g.stream_window_bytes = c.stream_window_bytes;
  g.stream_multicast = c.stream_multicast;
  g.key_file = c.key_file;
  std::ofstream file(group_file);
  file << testbed::member_group_toml(t, g);
  file.close();
  if (!file) throw std::runtime_error("cannot write the group file " + group_file);

  const std::vector<testbed::QdiscCounters> before = snapshot_links(t);
  MemberProcesses members(dir.path());
  // This binary for the members (inside `ip netns exec`, /proc/self/exe would be ip's).
  const std::string self = this_program();
  for (uint32_t r = 0; r < t.nodes; ++r) members.start(r, member_argv(c, self, testbed::node_ns(t.name, r), group_file, r));
  // Rank 0's table streams as it comes; its JSON is read whole at the end.
  std::FILE* rank0_to = c.json ? nullptr : stdout;
  FileTail rank0(members.members()[0].out_path, rank0_to);
  watch(members, rank0, bound_s, c.peer_timeout_ms, progress);
  progress.clear();
  rank0.finish();

  const std::vector<LinkRow> links = link_rows(t, before, snapshot_links(t));
  if (!c.json) {
    std::printf("\n");
    print_link_counters(links, c.xdp, c.root, payload_of(c));
  }
  if (c.counters)
    for (const auto& m : members.members())
      if (m.rank != 0) FileTail(m.out_path, stdout).finish();

  // The failed members in the order they ended: the cause first, then those
  // that failed because of it.
  std::vector<MemberProcesses::Member> ended = members.members();
  std::stable_sort(ended.begin(), ended.end(), [](const auto& a, const auto& b) { return a.ended_s < b.ended_s; });
  std::string failed;
  for (const auto& m : ended) {
    if (m.ok()) continue;
    const std::string said = error_lines(m);
    std::fprintf(human, "# rank %u: %s%s%s\n", m.rank, m.how_ended().c_str(), said.empty() ? "" : ": ", said.c_str());
    failed += (failed.empty() ? "" : "; ") + ("rank " + std::to_string(m.rank) + " " + m.how_ended()) +
              (said.empty() ? "" : ": " + said);
  }
  print_failure_timing(human, members, c.peer_timeout_ms);
  std::fflush(human);
  if (c.json) {
    std::ifstream out(members.members()[0].out_path);
    std::stringstream text;
    text << out.rdbuf();
    print_testbed_json(TestbedJson{&t, pace, text.str(), payload_of(c), links, c.root, failed});
  }
  if (failed.empty()) return 0;
  std::fprintf(stderr, "lanecast bench: the testbed run failed: %s\n", failed.c_str());
  return 1;
}

}  // namespace lanecast::apps
