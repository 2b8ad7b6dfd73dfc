// The verbs port on a real adapter, through rdma-core: two ports (two UD
// queue pairs) on the first device ibv_devices lists - or the one named by
// LANECAST_VERBS_DEVICE - carry broadcasts between two engine members, both
// polled by this thread on the real clock; every byte is checked and a table
// of the rate reached is printed. Hardware multicast is joined when the
// subnet administrator (or the RoCE network) allows, else emulated, and the
// table says which. Without a device it skips, saying why: this is the only
// test in the tree that proves anything about hardware, and it needs some.
//
//   meson test -C build verbs_hardware --verbose   (SKIP, exit 77, without a device)
#include <gtest/gtest.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "drivers/verbs/verbs_port.h"
#include "engine/node/node.h"
#include "tests/engine/eal_env.h"

namespace lanecast::test {
namespace {

using drivers::verbs::VerbsPort;

std::string device_or_skip_reason(std::string* device) {
  const drivers::verbs::VerbsCalls& v = drivers::verbs::rdma_core_calls();
  int n = 0;
  ibv_device** list = v.get_device_list(&n);
  if (list == nullptr || n == 0) {
    if (list != nullptr) v.free_device_list(list);
    return "no RDMA device (ibv_get_device_list found none): this test needs an InfiniBand or RoCE adapter";
  }
  const char* want = std::getenv("LANECAST_VERBS_DEVICE");
  *device = want != nullptr ? want : v.get_device_name(list[0]);
  v.free_device_list(list);
  return "";
}

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

TEST(VerbsHardware, TwoPortsOnOneAdapterCarryBroadcastsByteForByte) {
  std::string device;
  if (std::string why = device_or_skip_reason(&device); !why.empty()) GTEST_SKIP() << why;
  start_eal();
  rte_mempool* rx = rte_pktmbuf_pool_create("hw_rx", 16383, 256, 0, RTE_PKTMBUF_HEADROOM + 4096 + 40, SOCKET_ID_ANY);
  rte_mempool* payload = rte_pktmbuf_pool_create("hw_payload", 65535, 256, 0, RTE_PKTMBUF_HEADROOM + 4096, SOCKET_ID_ANY);
  rte_mempool* header = rte_pktmbuf_pool_create("hw_header", 16383, 256, 0, RTE_PKTMBUF_HEADROOM + 192, SOCKET_ID_ANY);
  ASSERT_TRUE(rx && payload && header);
  std::vector<std::unique_ptr<VerbsPort>> ports;
  for (int i = 0; i < 2; ++i) {
    VerbsPort::Options o;
    o.device = device;
    o.rx_pool = rx;
    ports.push_back(std::make_unique<VerbsPort>(o));
  }
  const uint32_t mtu = ports[0]->capabilities().mtu_bytes;
  std::vector<drivers::PeerAddress> addrs{ports[0]->address(), ports[1]->address()};
  std::vector<std::unique_ptr<engine::Node>> nodes;
  for (uint32_t r = 0; r < 2; ++r) {
    engine::NodeConfig nc;
    nc.rank = r;
    nc.nodes = 2;
    nc.segment_bytes = mtu - 128;  // lanecast's headers within the path MTU
    nc.max_message_bytes = 64u << 20;
    for (int i = 0; i < 16; ++i) nc.address_seed.bytes[i] = static_cast<uint8_t>(std::rand());
    nodes.push_back(std::make_unique<engine::Node>(nc, *ports[r], engine::Pools{payload, header}, addrs));
  }
  std::printf("%s, MTU %u, %s, multicast %s\n", ports[0]->name().c_str(), mtu,
              ports[0]->capabilities().roce ? "RoCE" : "InfiniBand",
              nodes[0]->multicast_fallback().empty() ? "joined" : ("emulated: " + nodes[0]->multicast_fallback()).c_str());
  std::printf("%-12s %12s %10s %10s\n", "algorithm", "bytes", "us", "Gbit/s");
  uint32_t op = 0;
  for (algos::Algo algo : {algos::Algo::Chain, algos::Algo::McastChain}) {
    for (size_t size : {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20}) {
      std::vector<std::vector<std::byte>> bufs(2, std::vector<std::byte>(size));
      std::mt19937_64 rng(op);
      for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
      ++op;
      for (uint32_t r = 0; r < 2; ++r) {
        engine::Submission s;
        s.op = op;
        s.root = 0;
        s.algo = algo;
        s.buffer = bufs[r].data();
        s.size = size;
        nodes[r]->submit(s);
      }
      const uint64_t t0 = now_ns(), deadline = t0 + 30'000'000'000ull;
      while (!(nodes[0]->completions().ready(op) && nodes[1]->completions().ready(op)) && now_ns() < deadline)
        for (auto& n : nodes) n->poll(now_ns());
      const double us = static_cast<double>(now_ns() - t0) / 1e3;
      ASSERT_TRUE(nodes[1]->completions().ready(op)) << "no completion within 30 s";
      EXPECT_EQ(nodes[1]->completions().record(op).error, engine::OpError::None);
      EXPECT_EQ(bufs[1], bufs[0]);
      std::printf("%-12s %12zu %10.0f %10.2f\n", std::string(algos::algo_info(algo).name).c_str(), size, us,
                  static_cast<double>(size) * 8 / us / 1e3);
    }
  }
  nodes.clear();
  ports.clear();
  rte_mempool_free(rx);
  rte_mempool_free(payload);
  rte_mempool_free(header);
}

}  // namespace
}  // namespace lanecast::test

// Exit 77 without a device: meson (and automake) report the test SKIPPED.
int main(int argc, char** argv) {
  std::string device;
  if (std::string why = lanecast::test::device_or_skip_reason(&device); !why.empty()) {
    std::printf("SKIP: %s\n", why.c_str());
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
