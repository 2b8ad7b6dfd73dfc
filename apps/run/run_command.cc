#include "apps/run/run_command.h"

#include <csignal>
#include <cstdio>
#include <cstring>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "apps/common/options.h"
#include "apps/common/pattern.h"
#include "engine/clock.h"
#include "engine/lanecast.h"

namespace lanecast::apps {
namespace {

struct RunConfig {
  std::string config;
  int64_t rank = -1;
  std::vector<uint64_t> sizes{1 << 20};
  uint32_t iters = 3;
  uint32_t root = 0;
  uint64_t seed = 1;
  uint32_t cores = 0;
  bool serve = false;
  bool show_endpoints = false;
};

const char* kUsage =
    "usage: lanecast run --config FILE --rank R [--sizes LIST] [--iters K] [--root R]\n"
    "                    [--seed S] [--serve] [--show-endpoints] [--cores C]\n"
    "\n"
    "Runs this process as member R of the group FILE describes (config/groups/):\n"
    "opens the member's port, finds the other members by the file's bootstrap\n"
    "(static addresses, or hellos on the wire), then takes part in K broadcasts\n"
    "of each size from the root. Every member runs the same command with its own\n"
    "rank. The data is a pattern every member can compute, so each checks every\n"
    "byte it received; a line per size gives this member's time from posting to\n"
    "completion (avg and min; the root's includes every member's acknowledgement).\n"
    "With --serve the schedule repeats until SIGINT or SIGTERM (an appliance).\n"
    "Exit status: 0 all verified, 1 a broadcast failed or a byte differed,\n"
    "2 bad usage or group file, 3 the engine, its port or the bootstrap failed.\n"
    "\n";

OptionTable make_table(RunConfig& c) {
  OptionTable t;
  t.add({"config", "FILE", "", "the group file (TOML; format in config/groups/README.md)",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "this member's rank in the group file",
         [&](std::string_view v) { c.rank = static_cast<int64_t>(parse_uint(v, "--rank", 1023)); }});
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
  t.add({"show-endpoints", "", "", "print every member's link address as the bootstrap found it",
         [&](std::string_view) { c.show_endpoints = true; }});
  t.add({"cores", "C", "auto", "polling cores (default: one per usable CPU but one, 1..2)",
         [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  return t;
}

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop.store(true); }

struct SizeResult {
  double sum_us = 0, min_us = 1e300;
  uint32_t done = 0;
  std::string error;
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

}  // namespace

int run_main(int argc, char** argv) {
  RunConfig c;
  const OptionTable table = make_table(c);
  if (table.parse(argc, argv, 1)) {
    std::fputs(kUsage, stdout);
    std::fputs(table.help().c_str(), stdout);
    return 0;
  }
  if (c.config.empty()) throw UsageError("--config FILE is required (see lanecast run --help)");
  if (c.rank < 0) throw UsageError("--rank R is required (see lanecast run --help)");
  const GroupSpec spec = load_group_file(c.config);  // invalid_argument: file:line, exit 2
  if (c.rank >= static_cast<int64_t>(spec.members.size()))
    throw UsageError("--rank " + std::to_string(c.rank) + ": " + c.config + " has ranks 0.." +
                     std::to_string(spec.members.size() - 1));
  if (c.root >= spec.members.size())
    throw UsageError("--root " + std::to_string(c.root) + " is outside the group of " +
                     std::to_string(spec.members.size()));
  const uint64_t max_size = *std::max_element(c.sizes.begin(), c.sizes.end());
  if (max_size > spec.max_message_bytes)
    throw UsageError("--sizes: " + format_size(max_size) + " exceeds the group's max_message of " +
                     format_size(spec.max_message_bytes));

  EngineOptions eo;
  eo.polling_cores = c.cores;
  eo.memory_mb = static_cast<uint32_t>(std::max<uint64_t>(512, (3 * spec.max_message_bytes >> 20) + 512));
  Engine engine(eo);
  const uint64_t t0 = engine::now_ns();
  auto g = engine.join(spec, static_cast<Rank>(c.rank));
  std::printf("# lanecast run: group %s, rank %u of %u, epoch %u, bootstrap %s in %.1f ms, segment %u B, %u polling core(s)\n",
              spec.name.c_str(), g->rank(), g->size(), g->epoch(), spec.bootstrap.c_str(),
              static_cast<double>(engine::now_ns() - t0) / 1e6, g->caps().segment_bytes, engine.polling_cores());
  if (c.show_endpoints) std::fputs(g->endpoints().c_str(), stdout);
  std::printf("%10s %6s %12s %12s %9s\n", "size", "iters", "avg_us", "min_us", "verified");
  std::fflush(stdout);

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::vector<std::byte> buf(max_size);
  uint64_t round = 0;
  do {
    for (uint64_t size : c.sizes) {
      SizeResult r;
      for (uint32_t i = 0; i < c.iters && r.error.empty(); ++i) run_one(*g, c, buf, size, round * c.iters + i, r);
      if (!r.error.empty()) {
        std::printf("%10s  FAILED: %s\n", format_size(size).c_str(), r.error.c_str());
        std::fprintf(stderr, "lanecast run: rank %u: %s\n", g->rank(), r.error.c_str());
        return 1;
      }
      std::printf("%10s %6u %12.1f %12.1f %9s\n", format_size(size).c_str(), r.done, r.sum_us / r.done, r.min_us,
                  "yes");
      std::fflush(stdout);
    }
    ++round;
  } while (c.serve && !g_stop.load());
  return 0;
}

}  // namespace lanecast::apps
