// BacklogPort: the frames a member received before its port's decorators
// existed come up first, each on its lane and in order, ahead of what arrives
// later; a decorator stacked on it (here the delay of a distant site) meets
// them as it meets any frame; the core may not sleep while they wait; what is
// never received is freed, and a frame for a lane the port lacks is refused.
#include "drivers/backlog/backlog_port.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "drivers/delay/delay_port.h"
#include "drivers/ethernet.h"
#include "drivers/ring/ring_port.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;
using test::PoolGuard;
using test::fake_clock;
using test::mac;

std::unique_ptr<RingPort> ring_port(const char* name, RingPort** raw) {
  RingPort::Options o;
  o.lanes = 2;
  o.mac = mac(1);
  o.name = name;
  o.ring_size = 64;
  auto p = std::make_unique<RingPort>(o);
  *raw = p.get();
  return p;
}

// A frame from `from` arriving at the ring port on `lane` now.
void arrive(RingPort& ring, uint16_t lane, uint8_t from, uint32_t id) {
  rte_mbuf* m = make_frame(mac(1), mac(from), id);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(rte_ring_enqueue(ring.rx_ring(lane), m), 0);
}

std::vector<uint32_t> take(Port& p, uint16_t lane, uint16_t max = 32) {
  rte_mbuf* b[32];
  const uint16_t n = p.rx_burst(lane, b, max);
  std::vector<uint32_t> ids;
  for (uint16_t i = 0; i < n; ++i) {
    ids.push_back(frame_id(b[i]));
    rte_pktmbuf_free(b[i]);
  }
  return ids;
}

TEST(BacklogPort, HandsUpTheBacklogFirstPerLaneThenWhatArrives) {
  PoolGuard guard;
  {
    RingPort* ring = nullptr;
    std::vector<BacklogPort::Frame> early;
    for (uint32_t id = 1; id <= 3; ++id) early.push_back({make_frame(mac(1), mac(2), id), 0});
    early.push_back({make_frame(mac(1), mac(2), 10), 1});
    BacklogPort port(ring_port("backlog_a", &ring), early);
    EXPECT_EQ(port.waiting(), 4u);
    EXPECT_EQ(port.held_until_ns(), 0u) << "the core must not sleep over frames it has";
    arrive(*ring, 0, 2, 4);
    arrive(*ring, 0, 2, 5);
    EXPECT_EQ(take(port, 0, 2), (std::vector<uint32_t>{1, 2})) << "a short burst takes the oldest";
    EXPECT_EQ(take(port, 0), (std::vector<uint32_t>{3, 4, 5})) << "the rest, then what came later, in one burst";
    EXPECT_EQ(port.held_until_ns(), 0u) << "lane 1's frame still waits";
    EXPECT_EQ(take(port, 1), (std::vector<uint32_t>{10}));
    EXPECT_EQ(port.waiting(), 0u);
    EXPECT_EQ(port.held_until_ns(), UINT64_MAX) << "drained: the port beneath's answer";
    EXPECT_TRUE(take(port, 0).empty());
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// The reason it exists: a distant member's early frames are held for the
// site's latency like its later ones, not handed over at once.
TEST(BacklogPort, ADecoratorAboveItMeetsTheBacklog) {
  PoolGuard guard;
  {
    test::fake_now = 1'000'000;
    RingPort* ring = nullptr;
    std::vector<BacklogPort::Frame> early = {{make_frame(mac(1), mac(3), 7), 0}, {make_frame(mac(1), mac(2), 8), 0}};
    DelayOptions d;
    d.clock = &fake_clock;
    d.delay_ns_of_source = {{mac(3), 500'000}};
    DelayPort port(std::make_unique<BacklogPort>(ring_port("backlog_b", &ring), early), d);
    EXPECT_EQ(port.held_until_ns(), 0u) << "the backlog beneath says: do not sleep";
    EXPECT_EQ(take(port, 0), (std::vector<uint32_t>{8})) << "the near member's frame passes at once";
    EXPECT_EQ(port.held_until_ns(), test::fake_now + 500'000) << "then the held frame's time";
    test::fake_now += 499'999;
    EXPECT_TRUE(take(port, 0).empty()) << "the distant member's early frame is held its latency";
    test::fake_now += 1;
    EXPECT_EQ(take(port, 0), (std::vector<uint32_t>{7}));
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(BacklogPort, FreesWhatWasNeverReceivedAndRefusesAFrameForAMissingLane) {
  PoolGuard guard;
  {
    RingPort* ring = nullptr;
    BacklogPort port(ring_port("backlog_c", &ring), {{make_frame(mac(1), mac(2), 1), 1}});
  }
  {
    RingPort* ring = nullptr;
    std::vector<BacklogPort::Frame> early = {{make_frame(mac(1), mac(2), 1), 0}, {make_frame(mac(1), mac(2), 2), 2}};
    EXPECT_THROW(BacklogPort(ring_port("backlog_d", &ring), early), std::invalid_argument);
  }
  EXPECT_EQ(guard.now(), guard.start()) << "the backlog's frames are freed either way";
}

}  // namespace
}  // namespace lanecast::drivers
