// One polling core forwarding segments between DPDK ring ports, with the full
// protocol: parse and verify both checksums, reliable channel (window, dedup,
// acks), the chain machine, zero-copy forward (fresh header + shared payload),
// tx burst. Rank 1 of a 3-node chain is measured; ranks 0 and 2 and the switch
// run in the same thread but outside the measured time.
//
// usage: forward_bench [SEGMENT_BYTES [SECONDS]]   prints one table row per size
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "engine/clock.h"
#include "engine/eal.h"
#include "engine/node.h"
#include "engine/wire.h"

using namespace lanecast;

namespace {

struct Result {
  uint32_t segment;
  uint64_t frames;       // data frames forwarded by rank 1
  uint64_t rx_frames;    // frames rank 1 received (data + acks)
  double busy_s;         // rank 1's time inside poll()
  double mpps;
  uint64_t copies;
};

Result run(uint32_t segment, double seconds) {
  const uint64_t message = 4u << 20;
  const uint32_t nodes = 3;
  const uint64_t segs = (message + segment - 1) / segment;
  rte_mempool* payload = rte_pktmbuf_pool_create(("fb_pay" + std::to_string(segment)).c_str(),
                                                 static_cast<uint32_t>(2 * segs + 1024), 256, 0,
                                                 static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + segment),
                                                 SOCKET_ID_ANY);
  rte_mempool* header = rte_pktmbuf_pool_create(("fb_hdr" + std::to_string(segment)).c_str(), 16383,
                                                256, 0, RTE_PKTMBUF_HEADROOM + 128, SOCKET_ID_ANY);
  if (!payload || !header) {
    std::fprintf(stderr, "forward_bench: cannot create mempools\n");
    std::exit(3);
  }
  drivers::Fabric::Options fo;
  fo.nodes = nodes;
  fo.lanes = 1;
  fo.rate_mbit = 0;
  fo.latency_ns = 0;
  fo.loss = 0;
  fo.seed = 1;
  fo.max_frame_bytes = 14 + engine::wire::kDataHeaderBytes + segment;
  fo.pool = payload;
  auto fabric = std::make_unique<drivers::Fabric>(fo);
  std::vector<drivers::PeerAddress> addrs;
  for (uint32_t r = 0; r < nodes; ++r) addrs.push_back(fabric->address(r));
  std::vector<std::unique_ptr<engine::Node>> n;
  engine::NodeConfig nc;
  nc.nodes = nodes;
  nc.segment_bytes = segment;
  nc.max_message_bytes = message;
  for (uint32_t r = 0; r < nodes; ++r) {
    nc.rank = r;
    n.push_back(std::make_unique<engine::Node>(nc, fabric->port(r), engine::Pools{payload, header}, addrs));
  }
  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(message, std::byte{7}));

  uint64_t busy = 0;
  const uint64_t hz = rte_get_tsc_hz();
  const uint64_t deadline = rte_get_tsc_cycles() + static_cast<uint64_t>(seconds * hz);
  uint32_t op = 1;
  while (rte_get_tsc_cycles() < deadline) {
    for (uint32_t r = 0; r < nodes; ++r) {
      engine::Submission s;
      s.op = op;
      s.root = 0;
      s.algo = algos::Algo::Chain;
      s.buffer = bufs[r].data();
      s.size = message;
      n[r]->submit(s);
    }
    uint32_t done = 0;
    for (uint64_t spins = 0; done < nodes && spins < 100'000'000; ++spins) {
      const uint64_t now = engine::now_ns();
      const uint64_t t0 = rte_rdtsc();
      n[1]->poll(now);
      busy += rte_rdtsc() - t0;
      n[0]->poll(now);
      n[2]->poll(now);
      fabric->poll(now);
      engine::CompletionRecord rec;
      for (auto& node : n)
        while (node->take_completion(&rec)) {
          if (rec.error != engine::OpError::None) {
            std::fprintf(stderr, "forward_bench: broadcast failed\n");
            std::exit(1);
          }
          ++done;
        }
    }
    ++op;
  }
  const auto& c = n[1]->counters();
  Result res{segment, c.tx_data.get(), c.rx_frames.get(), static_cast<double>(busy) / hz, 0,
             c.forward_copy_bytes.get()};
  res.mpps = static_cast<double>(res.frames) / res.busy_s / 1e6;
  n.clear();
  fabric.reset();
  rte_mempool_free(payload);
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
  std::printf("%8s %12s %12s %10s %10s %8s\n", "segment", "forwarded", "rx_frames", "busy_s",
              "Mpps", "copies");
  for (uint32_t s : segments) {
    const Result r = run(s, seconds);
    std::printf("%8u %12" PRIu64 " %12" PRIu64 " %10.3f %10.3f %8" PRIu64 "\n", r.segment, r.frames,
                r.rx_frames, r.busy_s, r.mpps, r.copies);
  }
  return 0;
}
