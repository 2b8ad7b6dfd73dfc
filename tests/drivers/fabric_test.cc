// The in-process fabric, in virtual time: routing by MAC and lane, loss,
// latency, rate, buffer overflow, flooding with shared buffers, options.
#include "drivers/fabric/fabric.h"

#include <gtest/gtest.h>
#include <rte_ethdev.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "tests/drivers/test_env.h"

namespace lanecast::drivers {
namespace {

using test::frame_id;
using test::make_frame;
using test::pool;
using test::PoolGuard;

Fabric::Options opts(uint32_t nodes, uint16_t lanes = 1) {
  Fabric::Options o;
  o.nodes = nodes;
  o.lanes = lanes;
  o.pool = pool();
  return o;
}

// Sends `count` frames node src -> dst on `lane` (ids first..), all taken.
void send(Fabric& f, uint32_t src, const PeerAddress& dst, uint16_t lane, uint32_t first, uint32_t count,
          uint16_t bytes = 64) {
  std::vector<rte_mbuf*> m(count);
  for (uint32_t i = 0; i < count; ++i) {
    m[i] = make_frame(dst, f.address(src), first + i, bytes);
    ASSERT_NE(m[i], nullptr);
  }
  ASSERT_EQ(f.port(src).tx_burst(lane, m.data(), static_cast<uint16_t>(count)), count);
}

std::vector<rte_mbuf*> receive(Fabric& f, uint32_t node, uint16_t lane) {
  std::vector<rte_mbuf*> out;
  rte_mbuf* b[32];
  uint16_t n;
  while ((n = f.port(node).rx_burst(lane, b, 32)) > 0) out.insert(out.end(), b, b + n);
  return out;
}

std::vector<uint32_t> ids_and_free(const std::vector<rte_mbuf*>& frames) {
  std::vector<uint32_t> ids;
  for (rte_mbuf* m : frames) {
    ids.push_back(frame_id(m));
    rte_pktmbuf_free(m);
  }
  return ids;
}

TEST(Fabric, DeliversByMacToTheRightNodeOnTheSenderLane) {
  PoolGuard guard;
  {
    Fabric f(opts(3, 2));
    EXPECT_EQ(f.address(2), ethernet::node_mac(2, 0));
    EXPECT_EQ(f.port(2).address(), f.address(2));
    EXPECT_EQ(f.port(0).lanes(), 2);
    EXPECT_THROW(f.address(3), std::out_of_range);
    EXPECT_EQ(f.next_event_ns(), UINT64_MAX);

    send(f, 0, f.address(2), 1, 10, 3, 100);
    send(f, 1, f.address(0), 0, 20, 2);
    EXPECT_NE(f.next_event_ns(), UINT64_MAX);
    EXPECT_EQ(f.poll(0), 3u + 2 + 3 + 2);  // moved, then delivered
    EXPECT_EQ(f.next_event_ns(), UINT64_MAX);

    auto to2 = receive(f, 2, 1);
    ASSERT_EQ(to2.size(), 3u);
    for (rte_mbuf* m : to2) EXPECT_TRUE(f.port(2).accepts(rte_pktmbuf_mtod(m, const uint8_t*)));
    EXPECT_EQ(ids_and_free(to2), (std::vector<uint32_t>{10, 11, 12}));
    EXPECT_EQ(ids_and_free(receive(f, 0, 0)), (std::vector<uint32_t>{20, 21}));
    EXPECT_TRUE(receive(f, 2, 0).empty());
    EXPECT_TRUE(receive(f, 1, 0).empty());
    EXPECT_TRUE(receive(f, 1, 1).empty());
    EXPECT_TRUE(receive(f, 0, 1).empty());
    const auto c = f.counters();
    EXPECT_EQ(c.switched, 5u);
    EXPECT_EQ(c.bytes, 3u * 100 + 2 * 64);
    EXPECT_EQ(c.lost + c.queue_drops + c.unknown_destination + c.malformed, 0u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, UnknownDestinationAndMalformedFramesAreDroppedAndCounted) {
  PoolGuard guard;
  {
    auto o = opts(3);
    o.max_frame_bytes = 1000;
    Fabric f(o);
    send(f, 0, ethernet::node_mac(9, 0), 0, 1, 2);  // no node 9
    const uint8_t stranger[6] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55};
    send(f, 0, ethernet::to_peer(stranger), 0, 3, 1);
    send(f, 0, f.address(1), 0, 4, 1, 1001);  // above max_frame_bytes
    rte_mbuf* runt = rte_pktmbuf_alloc(pool());
    ASSERT_NE(rte_pktmbuf_append(runt, 10), nullptr);
    ASSERT_EQ(f.port(0).tx_burst(0, &runt, 1), 1);
    f.poll(0);
    for (uint32_t n = 0; n < 3; ++n) EXPECT_TRUE(receive(f, n, 0).empty());
    const auto c = f.counters();
    EXPECT_EQ(c.unknown_destination, 3u);
    EXPECT_EQ(c.malformed, 2u);
    EXPECT_EQ(c.switched, 0u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// Sends n frames 0 -> 1 in ring-sized batches; returns the ids received.
std::vector<uint32_t> run_lossy(uint64_t seed, double loss, uint32_t n, Fabric::Counters* c) {
  auto o = opts(2);
  o.loss = loss;
  o.seed = seed;
  Fabric f(o);
  std::vector<uint32_t> got;
  for (uint32_t sent = 0; sent < n;) {
    const uint32_t batch = std::min<uint32_t>(500, n - sent);
    send(f, 0, f.address(1), 0, sent, batch);
    sent += batch;
    while (f.poll(0) > 0) {
      const auto ids = ids_and_free(receive(f, 1, 0));
      got.insert(got.end(), ids.begin(), ids.end());
    }
  }
  *c = f.counters();
  return got;
}

TEST(Fabric, LossIsWithinBoundsAndReproducibleForASeed) {
  PoolGuard guard;
  Fabric::Counters a, b;
  // LANECAST_SEED=<n> replays another seed; the bounds are 500 +- 9 standard
  // deviations, so they hold for any seed.
  const char* env = std::getenv("LANECAST_SEED");
  const uint64_t seed = env != nullptr ? std::strtoull(env, nullptr, 0) : 20261122;
  std::printf("loss test seed %llu\n", static_cast<unsigned long long>(seed));
  const auto got_a = run_lossy(seed, 0.05, 10000, &a);
  const auto got_b = run_lossy(seed, 0.05, 10000, &b);
  SCOPED_TRACE("seed " + std::to_string(seed));
  EXPECT_GE(a.lost, 300u);
  EXPECT_LE(a.lost, 700u);
  EXPECT_EQ(a.lost + a.switched, 10000u);
  EXPECT_EQ(got_a.size(), a.switched);
  EXPECT_TRUE(std::is_sorted(got_a.begin(), got_a.end()));  // one link keeps order
  EXPECT_EQ(got_a, got_b);                                  // same seed, same frames lost
  EXPECT_EQ(a.lost, b.lost);
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, NothingArrivesBeforeTheLatency) {
  PoolGuard guard;
  {
    auto o = opts(2);
    o.latency_ns = 5000;
    Fabric f(o);
    send(f, 0, f.address(1), 0, 1, 4);
    EXPECT_EQ(f.poll(1000), 4u);  // taken by the switch, none delivered
    EXPECT_EQ(f.next_event_ns(), 6000u);
    EXPECT_TRUE(receive(f, 1, 0).empty());
    EXPECT_EQ(f.poll(5999), 0u);
    EXPECT_TRUE(receive(f, 1, 0).empty());
    EXPECT_EQ(f.poll(6000), 4u);
    EXPECT_EQ(ids_and_free(receive(f, 1, 0)), (std::vector<uint32_t>{1, 2, 3, 4}));
    EXPECT_EQ(f.next_event_ns(), UINT64_MAX);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, RateSerialisesFramesStoreAndForward) {
  PoolGuard guard;
  {
    auto o = opts(2);
    o.rate_mbit = 1000;
    o.latency_ns = 1000;
    Fabric f(o);
    send(f, 0, f.address(1), 0, 0, 100, 1500);
    // Event-driven virtual time: jump to each next event, note arrivals.
    std::vector<uint64_t> arrival;
    uint64_t now = 0;
    for (int steps = 0; arrival.size() < 100 && steps < 10000; ++steps) {
      f.poll(now);
      for (rte_mbuf* m : receive(f, 1, 0)) {
        EXPECT_EQ(frame_id(m), arrival.size());
        arrival.push_back(now);
        rte_pktmbuf_free(m);
      }
      const uint64_t next = f.next_event_ns();
      if (next == UINT64_MAX) break;
      now = std::max(now + 1, next);
    }
    ASSERT_EQ(arrival.size(), 100u);
    const uint64_t frame_ns = (1500 + ethernet::kWireOverheadBytes) * 8;  // 12192 ns at 1 Gbit/s
    EXPECT_EQ(arrival.front(), 2 * frame_ns + 1000);  // uplink, downlink, latency
    EXPECT_GE(arrival.back() - arrival.front(), 100 * 12'000u - 12'000u);
    EXPECT_GE(arrival.back() - arrival.front(), 99 * frame_ns);
    EXPECT_LE(arrival.back() - arrival.front(), 99 * frame_ns + 99);  // no idle gaps
    EXPECT_EQ(f.counters().switched, 100u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, TwoSendersShareTheReceiverDownlink) {
  PoolGuard guard;
  {
    auto o = opts(3);
    o.rate_mbit = 1000;
    Fabric f(o);
    send(f, 0, f.address(2), 0, 0, 10, 1500);
    send(f, 1, f.address(2), 0, 100, 10, 1500);
    uint64_t now = 0, last = 0;
    size_t got = 0;
    while (now != UINT64_MAX) {
      f.poll(now);
      const size_t n = ids_and_free(receive(f, 2, 0)).size();
      if (n > 0) last = now;
      got += n;
      now = f.next_event_ns();
    }
    EXPECT_EQ(got, 20u);
    const uint64_t frame_ns = (1500 + ethernet::kWireOverheadBytes) * 8;
    EXPECT_GE(last, 21 * frame_ns);  // 20 frames through one downlink, after one uplink frame
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, OutputBufferOverflowIsCounted) {
  PoolGuard guard;
  {
    auto o = opts(2);
    o.queue_frames = 64;
    o.latency_ns = 1'000'000;
    Fabric f(o);
    send(f, 0, f.address(1), 0, 0, 200);
    for (int i = 0; i < 10; ++i) f.poll(0);
    auto c = f.counters();
    EXPECT_EQ(c.queue_drops, 136u);
    EXPECT_EQ(c.switched, 0u);
    f.poll(1'000'000);
    EXPECT_EQ(ids_and_free(receive(f, 1, 0)).size(), 64u);
    EXPECT_EQ(f.counters().switched, 64u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, FullReceiveRingKeepsFramesForTheNextPoll) {
  PoolGuard guard;
  {
    auto o = opts(2);
    o.ring_size = 64;  // holds 63
    Fabric f(o);
    for (uint32_t i = 0; i < 5; ++i) {  // nobody receives yet
      send(f, 0, f.address(1), 0, 30 * i, 30);
      f.poll(0);
    }
    EXPECT_EQ(f.counters().switched, 63u);
    EXPECT_EQ(f.next_event_ns(), 0u);  // waiting frames: poll again at once
    std::vector<uint32_t> ids;
    while (ids.size() < 150) {
      const auto got = ids_and_free(receive(f, 1, 0));
      ASSERT_FALSE(got.empty());
      ids.insert(ids.end(), got.begin(), got.end());
      f.poll(1);
    }
    std::vector<uint32_t> want;
    for (uint32_t i = 0; i < 150; ++i) want.push_back(i);
    EXPECT_EQ(ids, want);
    const auto c = f.counters();
    EXPECT_EQ(c.switched, 150u);
    EXPECT_EQ(c.queue_drops, 0u);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, GroupAddressesAreFloodedWithSharedBuffersAndNoLeak) {
  PoolGuard guard;
  {
    Fabric f(opts(4, 2));
    const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x07};
    for (uint32_t n = 0; n < 3; ++n) ASSERT_EQ(f.port(n).join_group(0, ethernet::to_peer(group)), "");
    send(f, 0, ethernet::broadcast(), 1, 42, 1, 300);
    send(f, 3, ethernet::to_peer(group), 0, 43, 1, 80);
    f.poll(0);
    EXPECT_EQ(f.counters().replicated, 2u + 2);
    EXPECT_EQ(f.counters().switched, 3u + 3);
    EXPECT_TRUE(receive(f, 0, 1).empty());  // not back to the sender
    EXPECT_TRUE(receive(f, 3, 0).empty());

    std::vector<rte_mbuf*> copies;
    for (uint32_t n = 1; n < 4; ++n) {
      auto got = receive(f, n, 1);
      ASSERT_EQ(got.size(), 1u) << "node " << n;
      copies.push_back(got[0]);
    }
    // One receiver holds the frame itself, the others clones of it: three
    // mbuf headers, one data buffer whose refcount is three.
    rte_mbuf* direct = nullptr;
    for (rte_mbuf* m : copies) {
      EXPECT_EQ(m->pkt_len, 300u);
      EXPECT_EQ(frame_id(m), 42u);
      EXPECT_TRUE(f.port(1).accepts(rte_pktmbuf_mtod(m, const uint8_t*)));
      if (!RTE_MBUF_CLONED(m)) direct = m;
    }
    ASSERT_NE(direct, nullptr);
    EXPECT_EQ(rte_mbuf_refcnt_read(direct), 3);
    for (rte_mbuf* m : copies) {
      if (m != direct) { EXPECT_EQ(rte_mbuf_from_indirect(m), direct); }
    }
    for (rte_mbuf* m : copies) EXPECT_EQ(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(direct, uint8_t*));
    rte_pktmbuf_free(copies[0]);
    rte_pktmbuf_free(copies[1]);
    EXPECT_EQ(rte_mbuf_refcnt_read(direct), 1);
    rte_pktmbuf_free(copies[2]);

    // The group frame from node 3 went to lane 0 of nodes 0, 1, 2.
    for (uint32_t n = 0; n < 3; ++n) EXPECT_EQ(ids_and_free(receive(f, n, 0)), (std::vector<uint32_t>{43}));
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// Nodes 1..nodes-1 join `group`; returns node 0's frame to it, built as the
// engine builds one: a header buffer of `header_bytes` chained to a payload
// buffer of `payload_bytes` patterned bytes (*payload). Null (a failure
// reported) when a buffer is missing.
rte_mbuf* chained_group_frame(Fabric& f, uint32_t nodes, const uint8_t (&group)[6], uint16_t header_bytes,
                              uint16_t payload_bytes, rte_mbuf** payload) {
  for (uint32_t n = 1; n < nodes; ++n) EXPECT_EQ(f.port(n).join_group(0, ethernet::to_peer(group)), "");
  rte_mbuf* head = make_frame(ethernet::to_peer(group), f.address(0), 77, header_bytes);
  *payload = rte_pktmbuf_alloc(pool());
  if (head == nullptr || *payload == nullptr) {
    ADD_FAILURE() << "no buffer";
    return nullptr;
  }
  auto* bytes = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(*payload, payload_bytes));
  for (uint32_t i = 0; i < payload_bytes; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  EXPECT_EQ(rte_pktmbuf_chain(head, *payload), 0);
  return head;
}

// Node 0 sends `head`; the switch makes `copies` copies of it and drops none.
void switch_group_frame(Fabric& f, rte_mbuf* head, uint64_t copies) {
  ASSERT_EQ(f.port(0).tx_burst(0, &head, 1), 1);
  f.poll(0);
  EXPECT_EQ(f.counters().replicated, copies);
  EXPECT_EQ(f.counters().pool_drops, 0u);
}

// The one frame each of nodes 1..nodes-1 received (fewer: a failure reported).
std::vector<rte_mbuf*> one_frame_each(Fabric& f, uint32_t nodes) {
  std::vector<rte_mbuf*> got;
  for (uint32_t n = 1; n < nodes; ++n) {
    auto r = receive(f, n, 0);
    EXPECT_EQ(r.size(), 1u) << "node " << n;
    got.insert(got.end(), r.begin(), r.end());
  }
  return got;
}

// A frame as the engine sends it - a header buffer chained to a payload
// buffer - reaches each receiver as a header buffer of its own, its bytes the
// sender's, chained to the one payload buffer: a receiver keeps the payload
// (as from a unicast sender), so the copies hold no indirect buffer, and the
// payload's count is one per receiver. Freed in any order, nothing is left.
TEST(Fabric, ChainedGroupFramesShareThePayloadBehindHeadersOfTheirOwn) {
  PoolGuard guard;
  {
    Fabric f(opts(5));
    const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x09};
    rte_mbuf* payload = nullptr;
    rte_mbuf* head = chained_group_frame(f, 5, group, 90, 1000, &payload);
    ASSERT_NE(head, nullptr);
    std::vector<uint8_t> header_bytes(rte_pktmbuf_mtod(head, uint8_t*), rte_pktmbuf_mtod(head, uint8_t*) + head->data_len);
    switch_group_frame(f, head, 3);
    const std::vector<rte_mbuf*> got = one_frame_each(f, 5);
    ASSERT_EQ(got.size(), 4u);
    std::set<rte_mbuf*> headers;
    for (rte_mbuf* m : got) {
      headers.insert(m);
      EXPECT_FALSE(RTE_MBUF_CLONED(m));
      EXPECT_EQ(m->nb_segs, 2);
      EXPECT_EQ(m->pkt_len, 1090u);
      EXPECT_EQ(m->next, payload);
      EXPECT_EQ(std::vector<uint8_t>(rte_pktmbuf_mtod(m, uint8_t*), rte_pktmbuf_mtod(m, uint8_t*) + m->data_len),
                header_bytes);
    }
    EXPECT_EQ(headers.size(), 4u);
    EXPECT_EQ(rte_mbuf_refcnt_read(payload), 4);
    for (size_t i : {2, 0, 3, 1}) rte_pktmbuf_free(got[i]);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// A chained group frame whose header does not fit the switch's buffers
// (the engine's never is: its headers are about 100 bytes) is cloned for
// each receiver instead: every copy still carries the sender's bytes, and
// every buffer goes back to its pool.
TEST(Fabric, ChainedGroupFramesWithHeadersLargerThanTheSwitchsBuffersAreCloned) {
  PoolGuard guard;
  rte_mempool* small = rte_pktmbuf_pool_create("fab_small_hdr", 63, 0, 0, RTE_PKTMBUF_HEADROOM + 64, SOCKET_ID_ANY);
  ASSERT_NE(small, nullptr);
  {
    Fabric::Options o = opts(4);
    o.pool = small;
    Fabric f(o);
    const uint8_t group[6] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x0a};
    rte_mbuf* payload = nullptr;
    rte_mbuf* head = chained_group_frame(f, 4, group, 90, 500, &payload);  // a 90-byte header: over 64
    ASSERT_NE(head, nullptr);
    std::vector<uint8_t> sent(head->pkt_len);
    ASSERT_NE(rte_pktmbuf_read(head, 0, head->pkt_len, sent.data()), nullptr);
    switch_group_frame(f, head, 2);
    const std::vector<rte_mbuf*> got = one_frame_each(f, 4);
    ASSERT_EQ(got.size(), 3u);
    size_t clones = 0;
    for (rte_mbuf* m : got) {
      clones += RTE_MBUF_CLONED(m) ? 1 : 0;
      std::vector<uint8_t> seen(m->pkt_len);
      ASSERT_EQ(m->pkt_len, sent.size());
      const void* at = rte_pktmbuf_read(m, 0, m->pkt_len, seen.data());
      ASSERT_NE(at, nullptr);
      if (at != seen.data()) std::memcpy(seen.data(), at, seen.size());
      EXPECT_EQ(seen, sent);
    }
    EXPECT_EQ(clones, 2u);  // the third receiver has the original
    for (size_t i : {1, 2, 0}) rte_pktmbuf_free(got[i]);
    EXPECT_EQ(rte_mempool_in_use_count(small), 0u);
  }
  rte_mempool_free(small);
  EXPECT_EQ(guard.now(), guard.start());
}

// A group frame reaches the ports that joined its address on that lane, and
// no other; leaving stops it; the copies not made are counted.
TEST(Fabric, GroupFramesReachOnlyThePortsThatJoined) {
  PoolGuard guard;
  {
    Fabric f(opts(4, 2));
    GroupAddressSeed key;
    key.bytes[0] = 0x5a;
    key.bytes[5] = 9;
    const PeerAddress g0 = f.port(0).group_address(key, 0), g1 = f.port(0).group_address(key, 1);
    EXPECT_FALSE(g0 == g1);
    ASSERT_EQ(f.port(1).join_group(0, g0), "");
    ASSERT_EQ(f.port(2).join_group(1, g1), "");
    EXPECT_NE(f.port(3).join_group(0, f.address(2)), "");  // a unicast address is no group
    send(f, 0, g0, 0, 1, 1);
    send(f, 0, g1, 1, 2, 1);
    f.poll(0);
    EXPECT_EQ(ids_and_free(receive(f, 1, 0)), (std::vector<uint32_t>{1}));
    EXPECT_EQ(ids_and_free(receive(f, 2, 1)), (std::vector<uint32_t>{2}));
    EXPECT_TRUE(receive(f, 2, 0).empty());
    EXPECT_TRUE(receive(f, 3, 0).empty());
    EXPECT_TRUE(receive(f, 3, 1).empty());
    EXPECT_EQ(f.counters().not_joined, 2u + 2);  // g0: nodes 2, 3; g1: nodes 1, 3
    EXPECT_EQ(f.counters().replicated, 0u);
    // Two joins of one address take two leaves.
    ASSERT_EQ(f.port(1).join_group(0, g0), "");
    f.port(1).leave_group(0, g0);
    send(f, 0, g0, 0, 3, 1);
    f.poll(0);
    EXPECT_EQ(ids_and_free(receive(f, 1, 0)), (std::vector<uint32_t>{3}));
    f.port(1).leave_group(0, g0);
    send(f, 0, g0, 0, 4, 1);
    f.poll(0);
    EXPECT_TRUE(receive(f, 1, 0).empty());
    EXPECT_EQ(f.counters().not_joined, 4u + 2 + 3);
  }
  EXPECT_EQ(guard.now(), guard.start());
}

// The engine's forwarded frames: a header mbuf chained to a shared payload.
TEST(Fabric, ChainedFramesAreFloodedWithoutLeaks) {
  PoolGuard guard;
  {
    Fabric f(opts(3));
    rte_mbuf* payload = rte_pktmbuf_alloc(pool());
    ASSERT_NE(rte_pktmbuf_append(payload, 1000), nullptr);
    rte_mbuf* h = make_frame(ethernet::broadcast(), f.address(0), 5, 30);
    ASSERT_EQ(rte_pktmbuf_chain(h, payload), 0);
    ASSERT_EQ(f.port(0).tx_burst(0, &h, 1), 1);
    f.poll(0);
    for (uint32_t n = 1; n < 3; ++n) {
      auto got = receive(f, n, 0);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0]->pkt_len, 1030u);
      EXPECT_EQ(got[0]->nb_segs, 2);
      EXPECT_EQ(ids_and_free(got), (std::vector<uint32_t>{5}));
    }
  }
  EXPECT_EQ(guard.now(), guard.start());
}

TEST(Fabric, BadOptionsThrowWithClearMessages) {
  auto expect_throw = [](Fabric::Options o, const std::string& text) {
    try {
      Fabric f(o);
      ADD_FAILURE() << "no throw, wanted: " << text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
  };
  auto o = opts(0);
  expect_throw(o, "fabric: nodes must be 1..65536 (got 0)");
  o = opts(2, 0);
  expect_throw(o, "lanes must be 1..16");
  o = opts(2, 17);
  expect_throw(o, "lanes must be 1..16 (got 17)");
  o = opts(2);
  o.loss = 1.0;
  expect_throw(o, "loss must be in [0, 1)");
  o.loss = -0.01;
  expect_throw(o, "loss must be in [0, 1)");
  o = opts(2);
  o.rate_mbit = -5;
  expect_throw(o, "rate must be");
  o = opts(2);
  o.queue_frames = 0;
  expect_throw(o, "queue_frames must be");
  o = opts(2);
  o.ring_size = 100;
  expect_throw(o, "ring_size must be a power of two");
  o = opts(2);
  o.max_frame_bytes = 59;
  expect_throw(o, "max_frame_bytes must be at least 60");
  o = opts(2);
  o.pool = nullptr;
  expect_throw(o, "fabric: mempool missing");
}

TEST(Fabric, ManyFabricsOneAfterAnotherReleaseEverything) {
  PoolGuard guard;
  const uint16_t ports_before = rte_eth_dev_count_avail();
  for (int round = 0; round < 3; ++round) {
    auto o = opts(4, 2);
    o.latency_ns = 1'000'000;
    Fabric f(o);
    EXPECT_EQ(rte_eth_dev_count_avail(), ports_before);  // ring ports are not ethdevs
    send(f, 0, f.address(1), 0, 0, 20);
    send(f, 2, ethernet::broadcast(), 1, 0, 20);
    send(f, 3, f.address(2), 1, 0, 5);  // left in the tx ring
    f.poll(0);  // frames left in delay lines and rings: the destructor frees them
  }
  EXPECT_EQ(rte_eth_dev_count_avail(), ports_before);
  EXPECT_EQ(guard.now(), guard.start());
}

// Members are ring ports, not ethdevs: a fabric is not bound by the 32
// ethdevs Debian's DPDK allows a process.
TEST(Fabric, MoreMembersThanAProcessHasEthdevs) {
  PoolGuard guard;
  auto o = opts(1024);
  o.ring_size = 64;
  o.queue_frames = 16;
  Fabric f(o);
  send(f, 1023, f.address(0), 0, 7, 3);
  send(f, 0, f.address(1023), 0, 9, 2);
  f.poll(0);
  EXPECT_EQ(ids_and_free(receive(f, 0, 0)), (std::vector<uint32_t>{7, 8, 9}));
  EXPECT_EQ(ids_and_free(receive(f, 1023, 0)), (std::vector<uint32_t>{9, 10}));
}

}  // namespace
}  // namespace lanecast::drivers
