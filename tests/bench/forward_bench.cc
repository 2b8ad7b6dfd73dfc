// One polling core forwarding and delivering segments between ring ports,
// with the full protocol: parse and check the header, the reliable channel
// (window, dedup, batched acks), the payload copied into the member's buffer
// while its CRC is checked (one pass), the chain machine, the zero-copy
// forward (a fresh header on the payload it received), tx burst. Rank 1 of a
// 3-node chain is measured; ranks 0 and 2 and the switch run in the same
// thread but outside the measured time.
//
// usage: forward_bench [SEGMENT_BYTES [SECONDS [MESSAGE_MIB [keyed]]]]   one table row per segment size
//
// keyed: the group has a key, so every frame carries seals - each member
// opens each frame's seal and checks the payload's (GMAC over the payload
// instead of its CRC) - as in a group file with a key.
//
// The message (4 MiB by default) sets the working set: the three members'
// buffers share this one core's caches, so past the cache each payload copy
// into the member's buffer runs at memory speed.
//
// Columns: frames rank 1 forwarded, its time inside poll(), frames per second
// of that time, TSC cycles per forwarded frame, payload bytes it copied to
// forward (flattening), the most payload buffers its own pool ever lent
// (0: every forwarded payload is the one it received), and the broadcasts
// whose every byte was compared with the root's and found equal, outside the
// measured time. The root sends two buffers of different bytes in turn, so a
// segment delivered to the wrong place, or not at all, leaves bytes of the
// other buffer (or the first fill) behind and fails the run.
//
// Built with meson -Dstage_cycles=true, a second table splits rank 1's
// cycles per forwarded frame by stage (engine/runtime/stage_cycles.h); each
// stage's share includes its marks' own cost (one rdtsc each).
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "engine/auth/epoch_keys.h"
#include "engine/runtime/clock.h"
#include "engine/runtime/eal.h"
#include "engine/node/node.h"
#include "engine/wire/wire.h"
#include "lanecast/group_spec.h"

using namespace lanecast;

namespace {

struct Result {
  uint32_t segment;
  uint64_t frames;  // data frames forwarded by rank 1
  double busy_s;    // rank 1's time inside poll()
  double mpps;
  double cycles_per_frame;
  uint64_t flatten_bytes;
  unsigned own_buffers;  // most payload buffers rank 1's own pool lent at once
  uint32_t verified;     // broadcasts whose every byte at ranks 1 and 2 equalled the root's
  engine::StageCycles stages;  // rank 1's, in a -Dstage_cycles=true build
};

rte_mempool* pool(const std::string& name, uint32_t n, uint32_t room) {
  rte_mempool* p = rte_pktmbuf_pool_create(name.c_str(), n, 256, 0, static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + room),
                                           SOCKET_ID_ANY);
  if (p == nullptr) {
    std::fprintf(stderr, "forward_bench: cannot create mempool %s\n", name.c_str());
    std::exit(3);
  }
  return p;
}

// Rank 1's turn, out of line: a profiler (perf, callgrind's
// --toggle-collect=*measured_poll*) can take this member apart from the others.
__attribute__((noinline)) uint32_t measured_poll(engine::Node& n, uint64_t now) { return n.poll(now); }

Result run(uint32_t segment, double seconds, uint64_t message, bool keyed) {
  const uint32_t nodes = 3;
  const uint64_t segs = (message + segment - 1) / segment;
  const std::string tag = std::to_string(segment);
  // The root's payload buffers, and a pool of the forwarder's own: it must
  // lend nothing while rank 1 only forwards.
  rte_mempool* root_payload = pool("fb_root" + tag, static_cast<uint32_t>(2 * segs + 1024), segment + 128);
  rte_mempool* own_payload = pool("fb_own" + tag, 1023, segment + 128);
  rte_mempool* header = pool("fb_hdr" + tag, 32767, 192);  // a sealed data header is 134 bytes
  drivers::Fabric::Options fo;
  fo.nodes = nodes;
  fo.max_frame_bytes = 14 + engine::wire::kDataHeaderBytes + 2 * engine::wire::kSealBytes + segment;
  fo.pool = header;
  auto fabric = std::make_unique<drivers::Fabric>(fo);
  std::vector<drivers::PeerAddress> addrs;
  for (uint32_t r = 0; r < nodes; ++r) addrs.push_back(fabric->address(r));
  std::vector<std::unique_ptr<engine::Node>> n;
  engine::NodeConfig nc;
  nc.nodes = nodes;
  nc.segment_bytes = segment;
  nc.max_message_bytes = message;
  if (keyed)
    nc.auth = std::make_shared<const engine::auth::EpochKeys>(
        engine::auth::derive_formation_keys(*AuthKey::from_hex(std::string(64, 'a'), "bench key"), nc.group_id, nc.epoch, {}));
  for (uint32_t r = 0; r < nodes; ++r) {
    nc.rank = r;
    const engine::Pools pools{r == 1 ? own_payload : root_payload, header};
    n.push_back(std::make_unique<engine::Node>(nc, fabric->port(r), pools, addrs));
  }
  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(message, std::byte{7}));
  std::vector<std::byte> roots[2] = {std::vector<std::byte>(message), std::vector<std::byte>(message)};
  for (uint64_t k = 0; k < 2; ++k)
    for (uint64_t i = 0; i < message; i += 8) {
      const uint64_t word = (k + 1) * 0x9E3779B97F4A7C15ull ^ i;
      std::memcpy(roots[k].data() + i, &word, std::min<uint64_t>(8, message - i));
    }
  uint32_t verified = 0;

  uint64_t busy = 0;
  unsigned own_most = 0;
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(seconds * static_cast<double>(hz));
  uint32_t op = 1;
  while (rte_get_tsc_cycles() < deadline) {
    std::vector<std::byte>& root_bytes = roots[op & 1];
    for (uint32_t r = 0; r < nodes; ++r) {
      engine::Submission s;
      s.op = op;
      s.root = 0;
      s.algo = algos::Algo::Chain;
      s.buffer = r == 0 ? root_bytes.data() : bufs[r].data();
      s.size = message;
      n[r]->submit(s);
    }
    auto done = [&] {
      for (auto& node : n)
        if (!node->completions().ready(op)) return false;
      return true;
    };
    for (uint64_t spins = 0; !done() && spins < 100'000'000; ++spins) {
      const uint64_t now = engine::now_ns();
      const uint64_t t0 = rte_rdtsc();
      measured_poll(*n[1], now);
      busy += rte_rdtsc() - t0;
      n[0]->poll(now);
      n[2]->poll(now);
      fabric->poll(now);
      own_most = std::max(own_most, rte_mempool_in_use_count(own_payload));
    }
    for (auto& node : n)
      if (!node->completions().ready(op) || node->completions().record(op).error != engine::OpError::None) {
        std::fprintf(stderr, "forward_bench: broadcast %u failed\n", op);
        std::exit(1);
      }
    for (uint32_t r = 1; r < nodes; ++r)
      if (std::memcmp(bufs[r].data(), root_bytes.data(), message) != 0) {
        std::fprintf(stderr, "forward_bench: broadcast %u: rank %u's bytes differ from the root's\n", op, r);
        std::exit(1);
      }
    ++verified;
    ++op;
  }
  const auto& c = n[1]->counters();
  Result res{segment, c.tx_data.get(), static_cast<double>(busy) / static_cast<double>(hz), 0, 0,
             c.tx_flatten_bytes.get(), own_most, verified, c.stages};
  res.mpps = static_cast<double>(res.frames) / res.busy_s / 1e6;
  res.cycles_per_frame = static_cast<double>(busy) / static_cast<double>(res.frames);
  n.clear();
  fabric.reset();
  rte_mempool_free(root_payload);
  rte_mempool_free(own_payload);
  rte_mempool_free(header);
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  engine::EalOptions eo;
  eo.memory_mb = 1024;
  eo.polling_cores = 1;
  engine::eal_start(eo);
  std::vector<uint32_t> segments{64, 1400};
  if (argc > 1) segments = {static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10))};
  const double seconds = argc > 2 ? std::strtod(argv[2], nullptr) : 2.0;
  const uint64_t message = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 4) << 20;
  const bool keyed = argc > 4 && std::string(argv[4]) == "keyed";
  if (segments[0] == 0 || segments[0] > 9000 || !(seconds > 0 && seconds <= 3600) || message == 0 ||
      message > (uint64_t{1} << 30) || (argc > 4 && !keyed)) {
    std::fprintf(stderr,
                 "usage: forward_bench [SEGMENT_BYTES (1..9000) [SECONDS (0..3600] [MESSAGE_MIB (1..1024) [keyed]]]]\n");
    return 2;
  }
  std::printf("%8s %12s %10s %10s %14s %14s %12s %9s\n", "segment", "forwarded", "busy_s", "Mpps", "cycles/frame",
              "copied_bytes", "own_buffers", "verified");
  std::vector<Result> results;
  for (uint32_t s : segments) {
    const Result r = run(s, seconds, message, keyed);
    std::printf("%8u %12" PRIu64 " %10.3f %10.3f %14.1f %14" PRIu64 " %12u %9u\n", r.segment, r.frames, r.busy_s, r.mpps,
                r.cycles_per_frame, r.flatten_bytes, r.own_buffers, r.verified);
    results.push_back(r);
  }
  if constexpr (engine::kStageCycles) {
    std::printf("\ncycles per forwarded frame by stage (rank 1)\n%-10s", "stage");
    for (const Result& r : results) std::printf(" %10u", r.segment);
    std::printf("\n");
    for (unsigned st = 0; st < static_cast<unsigned>(engine::Stage::kCount); ++st) {
      std::printf("%-10s", engine::stage_name(static_cast<engine::Stage>(st)));
      for (const Result& r : results)
        std::printf(" %10.1f", static_cast<double>(engine::stage_cycles(r.stages, static_cast<engine::Stage>(st))) /
                                   static_cast<double>(r.frames));
      std::printf("\n");
    }
    std::printf("%-10s", "total");
    for (const Result& r : results) {
      uint64_t sum = 0;
      for (unsigned st = 0; st < static_cast<unsigned>(engine::Stage::kCount); ++st)
        sum += engine::stage_cycles(r.stages, static_cast<engine::Stage>(st));
      std::printf(" %10.1f", static_cast<double>(sum) / static_cast<double>(r.frames));
    }
    std::printf("\n");
  }
  return 0;
}
