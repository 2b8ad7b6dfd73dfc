// HandoffPort: a lane driven by another core than the member's. Frames cross
// between the two through rings, each exactly once and in order; a full ring
// drops and counts (receive) or gives back (transmit), never loses a buffer;
// the member's core is woken when frames came.
#include "drivers/lanes/handoff_port.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/ring/ring_port.h"
#include "drivers/wake.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;

const uint8_t kMac[6] = {2, 0, 0, 0, 0, 7};

std::unique_ptr<RingPort> nic(const char* name, uint32_t ring_size) {
  RingPort::Options o;
  o.mac = ethernet::to_peer(kMac);
  o.name = name;
  o.ring_size = ring_size;
  return std::make_unique<RingPort>(o);
}

// Two threads: the lane's core moving frames, this one being the member (and
// the wire beyond the NIC). 20000 frames each way, in order, none lost.
TEST(HandoffPort, FramesCrossBetweenCoresInOrderExactlyOnce) {
  const unsigned before = rte_mempool_avail_count(pool());
  auto owned = nic("hop_a", 256);
  RingPort* wire = owned.get();
  HandoffPort p(std::move(owned), "hop_a", 256);
  std::atomic<bool> stop{false};
  std::thread lane([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      p.lane_rx();
      p.lane_tx();
    }
  });
  constexpr uint32_t kFrames = 20000;
  const PeerAddress me = ethernet::to_peer(kMac);
  uint32_t sent = 0, left_wire = 0, injected = 0, received = 0;
  std::vector<rte_mbuf*> pending;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while ((left_wire < kFrames || received < kFrames) && std::chrono::steady_clock::now() < deadline) {
    // Member transmits; what the ring refuses it keeps and offers again.
    if (pending.empty() && sent < kFrames) pending.push_back(make_frame(me, me, sent++));
    if (!pending.empty() && p.tx_burst(0, pending.data(), 1) == 1) pending.clear();
    // The wire takes what left the NIC.
    void* out;
    while (rte_ring_dequeue(wire->tx_ring(0), &out) == 0) {
      auto* m = static_cast<rte_mbuf*>(out);
      ASSERT_EQ(frame_id(m), left_wire) << "transmit out of order";
      ++left_wire;
      rte_pktmbuf_free(m);
    }
    // Frames arrive at the NIC; the member receives them.
    if (injected < kFrames) {
      rte_mbuf* m = make_frame(me, me, injected);
      if (rte_ring_enqueue(wire->rx_ring(0), m) == 0)
        ++injected;
      else
        rte_pktmbuf_free(m);
    }
    rte_mbuf* got[8];
    const uint16_t n = p.rx_burst(0, got, 8);
    for (uint16_t i = 0; i < n; ++i) {
      ASSERT_EQ(frame_id(got[i]), received) << "receive out of order";
      ++received;
      rte_pktmbuf_free(got[i]);
    }
  }
  stop = true;
  lane.join();
  EXPECT_EQ(left_wire, kFrames);
  EXPECT_EQ(received, kFrames);
  EXPECT_EQ(p.stats().rx_missed, 0u);  // the member kept up: nothing dropped
  EXPECT_EQ(rte_mempool_avail_count(pool()), before);
}

// The member's core, asleep, wakes when the lane's core handed it frames.
TEST(HandoffPort, ArrivalsWakeTheMembersCore) {
  auto owned = nic("hop_b", 64);
  RingPort* wire = owned.get();
  HandoffPort p(std::move(owned), "hop_b", 64);
  EXPECT_TRUE(p.caps().rx_wakeup);
  Waker member;
  p.attach_waker(&member);
  const PeerAddress me = ethernet::to_peer(kMac);
  ASSERT_EQ(rte_ring_enqueue(wire->rx_ring(0), make_frame(me, me, 1)), 0);
  member.begin_sleep();
  std::thread lane([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    p.lane_rx();
  });
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(member.sleep(5'000'000'000ull));
  member.end_sleep();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(4));
  lane.join();
  rte_mbuf* got;
  ASSERT_EQ(p.rx_burst(0, &got, 1), 1);
  EXPECT_EQ(frame_id(got), 1u);
  rte_pktmbuf_free(got);
  p.detach_waker();
}

// A member that does not keep up: the receive ring fills, later frames are
// dropped and counted (the reliable channel resends them), their buffers
// freed. A NIC that does not take frames: the lane keeps them, says it is
// due, and sends them in order once the NIC has room.
TEST(HandoffPort, FullRingsDropAndCountOrHoldBack) {
  const unsigned before = rte_mempool_avail_count(pool());
  {
    auto owned = nic("hop_c", 64);
    RingPort* wire = owned.get();
    HandoffPort p(std::move(owned), "hop_c", 16);
    const PeerAddress me = ethernet::to_peer(kMac);
    for (uint32_t i = 0; i < 40; ++i) {
      ASSERT_EQ(rte_ring_enqueue(wire->rx_ring(0), make_frame(me, me, i)), 0);
      if (i % 8 == 7) p.lane_rx();
    }
    EXPECT_EQ(p.stats().rx_missed, 40u - 16u);
    rte_mbuf* got[32];
    ASSERT_EQ(p.rx_burst(0, got, 32), 16);
    for (uint16_t i = 0; i < 16; ++i) EXPECT_EQ(frame_id(got[i]), i);
    rte_pktmbuf_free_bulk(got, 16);

    // Transmit: the NIC's ring holds 63; the member queues 16 more than that.
    std::vector<rte_mbuf*> out;
    for (uint32_t i = 0; i < 79; ++i) out.push_back(make_frame(me, me, i));
    uint32_t queued = 0;
    while (queued < out.size()) {
      queued += p.tx_burst(0, out.data() + queued, static_cast<uint16_t>(out.size() - queued));
      p.lane_tx();
    }
    for (int i = 0; i < 8; ++i) p.lane_tx();
    EXPECT_EQ(p.lane_next_due_ns(), 0u) << "frames held back: the lane's core must look again";
    uint32_t next = 0;
    void* m;
    for (int round = 0; round < 100 && next < out.size(); ++round) {
      while (rte_ring_dequeue(wire->tx_ring(0), &m) == 0) {
        EXPECT_EQ(frame_id(static_cast<rte_mbuf*>(m)), next++);
        rte_pktmbuf_free(static_cast<rte_mbuf*>(m));
      }
      p.lane_tx();
    }
    EXPECT_EQ(next, out.size());
    EXPECT_EQ(p.lane_next_due_ns(), UINT64_MAX);
    // Frames left in the rings when the port goes are freed with it.
    for (uint32_t i = 0; i < 5; ++i) ASSERT_EQ(rte_ring_enqueue(wire->rx_ring(0), make_frame(me, me, i)), 0);
    p.lane_rx();
    rte_mbuf* late = make_frame(me, me, 99);
    ASSERT_EQ(p.tx_burst(0, &late, 1), 1);
  }
  // The ring port itself frees what its own rings hold.
  EXPECT_EQ(rte_mempool_avail_count(pool()), before);
}

}  // namespace
}  // namespace lanecast::drivers
