// The multicast loss decorator: drops its share of group frames, seeded and
// repeatable, counts each drop, and lets unicast and broadcast frames pass.
#include "drivers/loss/multicast_loss_port.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/fabric/fabric.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;
using test::PoolGuard;

// Node 0 sends 600 group frames, 100 unicast and 100 broadcast to node 1,
// which reads them through a MulticastLossPort; returns the group frames'
// ids that arrived.
std::vector<uint32_t> run(double loss, uint64_t seed, uint64_t* lost, uint32_t* others) {
  Fabric::Options o;
  o.nodes = 2;
  o.pool = pool();
  o.ring_size = 2048;
  Fabric f(o);
  MulticastLossPort rx(f.port(1), loss, seed);
  GroupAddressSeed key;
  key.bytes[1] = 0x42;
  const PeerAddress group = rx.group_address(key, 0);
  EXPECT_EQ(rx.join_group(0, group), "");
  std::vector<uint32_t> got;
  *others = 0;
  const auto drain = [&] {
    rte_mbuf* b[32];
    uint16_t n;
    while ((n = rx.rx_burst(0, b, 32)) > 0)
      for (uint16_t k = 0; k < n; ++k) {
        if (frame_id(b[k]) < 600) {
          got.push_back(frame_id(b[k]));
        } else {
          ++*others;
        }
        rte_pktmbuf_free(b[k]);
      }
  };
  for (uint32_t i = 0; i < 800; ++i) {
    const PeerAddress dst = i < 600 ? group : i < 700 ? f.address(1) : ethernet::broadcast();
    rte_mbuf* m = make_frame(dst, f.address(0), i, 64);
    EXPECT_EQ(f.port(0).tx_burst(0, &m, 1), 1);
    if (i % 16 == 15) f.poll(0);
    drain();
  }
  for (int spin = 0; spin < 4; ++spin) {
    f.poll(0);
    drain();
  }
  *lost = rx.lost();
  EXPECT_EQ(rx.stats().rx_lost_emulated, rx.lost());
  rx.leave_group(0, group);
  return got;
}

TEST(MulticastLossPort, DropsItsShareOfGroupFramesOnlyAndRepeatsForASeed) {
  PoolGuard guard;
  {
    uint64_t lost = 0, lost_again = 0;
    uint32_t others = 0, others_again = 0;
    const std::vector<uint32_t> got = run(0.5, 7, &lost, &others);
    EXPECT_EQ(got.size() + lost, 600u);
    EXPECT_GT(lost, 200u);
    EXPECT_LT(lost, 400u);
    EXPECT_EQ(others, 200u) << "unicast and broadcast frames are never dropped";
    EXPECT_EQ(run(0.5, 7, &lost_again, &others_again), got) << "the same seed drops the same frames";
    EXPECT_EQ(lost_again, lost);
    uint64_t none = 0;
    EXPECT_EQ(run(0, 7, &none, &others).size(), 600u);
    EXPECT_EQ(none, 0u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(MulticastLossPort, RefusesALossOfOneOrMore) {
  Fabric::Options o;
  o.nodes = 2;
  o.pool = pool();
  Fabric f(o);
  EXPECT_THROW(MulticastLossPort(f.port(0), 1.0, 1), std::invalid_argument);
  EXPECT_THROW(MulticastLossPort(f.port(0), -0.1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::drivers
