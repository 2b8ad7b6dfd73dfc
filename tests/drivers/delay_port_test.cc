// DelayPort: a frame from a delayed source is delivered its delay after it
// arrived, not before; frames from other sources pass at once; each source's
// frames stay in order; the port says when the next held frame is due; frames
// still held when it goes are freed. Virtual time throughout.
#include "drivers/delay/delay_port.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <memory>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/ring/ring_port.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::pool;
using test::fake_clock;
using test::mac;

struct Rig {
  RingPort* ring = nullptr;
  std::unique_ptr<DelayPort> port;
  explicit Rig(uint32_t queue_frames = 64) {
    RingPort::Options o;
    o.mac = mac(1);
    o.name = "delay_me";
    o.ring_size = 256;
    auto inner = std::make_unique<RingPort>(o);
    ring = inner.get();
    DelayOptions d;
    d.clock = &fake_clock;
    d.queue_frames = queue_frames;
    d.delay_ns_of_source = {{mac(2), 2'000'000}, {mac(3), 500'000}};
    port = std::make_unique<DelayPort>(std::move(inner), d);
  }
  // A frame from `from` arrives now, tagged with `tag` in its first payload byte.
  void arrive(uint8_t from, uint8_t tag) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool());
    ASSERT_NE(m, nullptr);
    uint8_t* h = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, 15));
    ASSERT_NE(h, nullptr);
    ring->write_link_header(h, mac(1));
    const PeerAddress src = mac(from);
    for (int i = 0; i < 6; ++i) h[6 + i] = src.bytes[i];  // the source, as the sender's port wrote it
    h[14] = tag;
    ASSERT_EQ(rte_ring_enqueue(ring->rx_ring(0), m), 0);
  }
  // Tags of what the port delivers now.
  std::vector<int> take() {
    std::vector<int> tags;
    rte_mbuf* got[32];
    const uint16_t n = port->rx_burst(0, got, 32);
    for (uint16_t i = 0; i < n; ++i) {
      tags.push_back(rte_pktmbuf_mtod(got[i], uint8_t*)[14]);
      rte_pktmbuf_free(got[i]);
    }
    return tags;
  }
};

TEST(DelayPort, HoldsEachSourceForItsDelayInOrder) {
  test::fake_now = 1'000'000;
  Rig r;
  r.arrive(2, 1);  // 2 ms
  r.arrive(9, 2);  // unknown source: no delay
  r.arrive(3, 3);  // 0.5 ms
  r.arrive(2, 4);
  EXPECT_EQ(r.take(), std::vector<int>{2});
  EXPECT_EQ(r.port->held_until_ns(), 1'500'000u);
  test::fake_now = 1'499'999;
  EXPECT_TRUE(r.take().empty());
  test::fake_now = 1'500'000;
  EXPECT_EQ(r.take(), std::vector<int>{3});
  EXPECT_EQ(r.port->held_until_ns(), 3'000'000u);
  test::fake_now = 2'999'999;
  EXPECT_TRUE(r.take().empty());
  test::fake_now = 3'000'000;
  EXPECT_EQ(r.take(), (std::vector<int>{1, 4}));
  EXPECT_EQ(r.port->held_until_ns(), UINT64_MAX);
}

TEST(DelayPort, DeliversTheEarliestDueFirstAcrossSources) {
  test::fake_now = 0;
  Rig r;
  r.arrive(2, 1);  // due 2.0 ms
  EXPECT_TRUE(r.take().empty());
  test::fake_now = 1'600'000;
  r.arrive(3, 2);  // due 2.1 ms
  EXPECT_TRUE(r.take().empty());
  test::fake_now = 2'200'000;
  EXPECT_EQ(r.take(), (std::vector<int>{1, 2}));
}

TEST(DelayPort, AFullQueueLeavesFramesInTheInnerRingNotLost) {
  test::fake_now = 0;
  Rig r(64);
  for (int i = 0; i < 100; ++i) r.arrive(2, static_cast<uint8_t>(i));
  EXPECT_TRUE(r.take().empty());
  EXPECT_EQ(r.port->frames_held(), 64u);
  test::fake_now = 2'000'000;
  std::vector<int> all;
  for (int turn = 0; turn < 10; ++turn) {
    for (int t : r.take()) all.push_back(t);
    test::fake_now += 2'000'000;
  }
  ASSERT_EQ(all.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(all[i], i);
}

TEST(DelayPort, FreesWhatItStillHolds) {
  test::fake_now = 0;
  const unsigned before = rte_mempool_avail_count(pool());
  {
    Rig r;
    for (int i = 0; i < 10; ++i) r.arrive(2, 0);
    EXPECT_TRUE(r.take().empty());
    EXPECT_EQ(rte_mempool_avail_count(pool()), before - 10);
  }
  EXPECT_EQ(rte_mempool_avail_count(pool()), before);
}

TEST(DelayPort, RefusesASourceTwiceAndNoClock) {
  RingPort::Options o;
  o.mac = mac(1);
  o.name = "delay_bad";
  DelayOptions d;
  d.delay_ns_of_source = {{mac(2), 1}};
  EXPECT_THROW(DelayPort(std::make_unique<RingPort>(o), d), std::invalid_argument);
  d.clock = &fake_clock;
  d.delay_ns_of_source = {{mac(2), 1}, {mac(2), 2}};
  o.name = "delay_bad2";
  EXPECT_THROW(DelayPort(std::make_unique<RingPort>(o), d), std::invalid_argument);
}

}  // namespace
}  // namespace lanecast::drivers
