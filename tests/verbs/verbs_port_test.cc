// The verbs port's own logic against the UD model (tests/verbs/ud_model.h):
// set-up and teardown, zero-copy sends and receives, the handle in the
// headroom, who sent a frame, multicast joins, a receive queue run dry, a
// queue pair brought back from the error state, RoCE's GIDs. A model of UD
// semantics stands in for the adapter: these tests prove the driver's
// logic, not that it works on hardware.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/ethernet.h"
#include "drivers/wake.h"
#include "drivers/verbs/verbs_port.h"
#include "engine/group/lane_port.h"
#include "tests/engine/eal_env.h"
#include "tests/verbs/ud_model.h"

namespace lanecast::drivers::verbs {
namespace {

using model::UdModel;

rte_mempool* pool(const char* name, uint32_t n, uint32_t room) {
  return test::test_pool(name, n, static_cast<uint16_t>(RTE_PKTMBUF_HEADROOM + room));
}

struct Rig {
  explicit Rig(uint32_t ports, model::Options mo = {}, model::PortSpec spec = {}, uint32_t rq_depth = 128) {
    m = std::make_unique<UdModel>(mo);
    rx = pool("vp_rx", 4095, 4096 + kGrhBytes);
    hdr = pool("vp_hdr", 1023, 256);
    payload = pool("vp_payload", 1023, 4096);
    for (uint32_t i = 0; i < ports; ++i) {
      VerbsPort::Options o;
      o.device = m->add_device(spec);
      o.rx_pool = rx;
      o.calls = &m->calls();
      o.rq_depth = rq_depth;
      o.sq_depth = 128;
      p.push_back(std::make_unique<VerbsPort>(o));
    }
    std::vector<PeerAddress> all;
    for (auto& q : p) all.push_back(q->address());
    for (auto& q : p) {
      EXPECT_EQ(q->learn_peers(all.data(), all.size()), "");
      EXPECT_EQ(q->register_pool(hdr), "");
      EXPECT_EQ(q->register_pool(payload), "");
    }
  }
  ~Rig() {
    p.clear();
    EXPECT_EQ(m->live_objects(), 0u) << "the port left verbs objects behind";
  }

  // A frame as the engine builds one: a header mbuf (handle + `head`)
  // chained to a payload mbuf holding `body`.
  rte_mbuf* frame(uint32_t from, const PeerAddress& to, const std::string& head, const std::string& body) {
    rte_mbuf* h = rte_pktmbuf_alloc(hdr);
    const uint16_t link = p[from]->link_header_bytes();
    auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, static_cast<uint16_t>(link + head.size())));
    p[from]->write_link_header(at, to);
    std::memcpy(at + link, head.data(), head.size());
    if (!body.empty()) {
      rte_mbuf* b = rte_pktmbuf_alloc(payload);
      std::memcpy(rte_pktmbuf_append(b, static_cast<uint16_t>(body.size())), body.data(), body.size());
      rte_pktmbuf_chain(h, b);
    }
    return h;
  }
  std::vector<std::string> receive(uint32_t at, uint16_t lane = 0, std::vector<PeerAddress>* from = nullptr) {
    std::vector<std::string> got;
    rte_mbuf* b[32];
    for (int round = 0; round < 4; ++round) {
      const uint16_t n = p[at]->rx_burst(lane, b, 32);
      for (uint16_t i = 0; i < n; ++i) {
        const auto* d = rte_pktmbuf_mtod(b[i], const char*);
        got.emplace_back(d + kRxHeaderBytes, b[i]->data_len - kRxHeaderBytes);
        if (from != nullptr) {
          for (uint32_t s = 0; s < p.size(); ++s)
            if (p[at]->is_from(rte_pktmbuf_mtod(b[i], const uint8_t*), p[s]->address())) from->push_back(p[s]->address());
        }
        rte_pktmbuf_free(b[i]);
      }
    }
    return got;
  }

  std::unique_ptr<UdModel> m;
  rte_mempool *rx, *hdr, *payload;
  std::vector<std::unique_ptr<VerbsPort>> p;
};

TEST(VerbsPort, OpensAtRtsWithItsReceivesPostedAndLeavesNothingBehind) {
  Rig r(2);
  const VerbsPort& a = *r.p[0];
  EXPECT_EQ(a.name(), "verbs:model_0:1");
  EXPECT_EQ(a.receives_posted(0), 128u);
  EXPECT_EQ(r.m->qp_counts(a.qpn(0)).posted_recvs, 128u);
  const std::optional<Endpoint> e = to_endpoint(a.address());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->lid, r.m->lid_of("model_0"));
  EXPECT_EQ(e->qpn[0], a.qpn(0));
  EXPECT_EQ(std::memcmp(e->gid.raw, r.m->gid_of("model_0").raw, 16), 0);
  EXPECT_EQ(a.capabilities().mtu_bytes, 4096u);
  EXPECT_EQ(a.max_frame_bytes(), 32u + 4096u);
  EXPECT_EQ(a.link_header_bytes(), 32u);       // handle and sealed destination, never sent
  EXPECT_EQ(a.rx_link_header_bytes(), 48u);    // the GRH area and 8 bytes of headroom
  EXPECT_EQ(a.sealed_link_bytes(), 20u);
  EXPECT_EQ(describe(a.capabilities()),
            "InfiniBand, MTU 4096, inline 64 B, 4 scatter entries, 4096 work requests, 8 QPs per multicast group");
}

TEST(VerbsPort, AnAddressReadsAsGidLidAndQpns) {
  Rig r(1);
  const std::string text = engine::describe_lane_address(r.p[0]->address());
  char qpn[16];
  std::snprintf(qpn, sizeof qpn, "qpn 0x%x", r.p[0]->qpn(0));
  EXPECT_EQ(text.find("gid fe80::"), 0u) << text;
  EXPECT_NE(text.find(" lid " + std::to_string(r.m->lid_of("model_0")) + " qkey 0x1234567 "), std::string::npos) << text;
  EXPECT_NE(text.find(qpn), std::string::npos) << text;
  EXPECT_EQ(engine::describe_lane_address(ethernet::node_mac(1, 0)), "02:4c:43:00:01:00");  // others as before
}

TEST(VerbsPort, AChainedFrameArrivesWholeFromTheAddressItNames) {
  Rig r(3);
  const std::string head = "lanecast-header", body(3000, 'x');
  rte_mbuf* f = r.frame(0, r.p[1]->address(), head, body);
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  std::vector<PeerAddress> from;
  const auto got = r.receive(1, 0, &from);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], head + body);  // the handle is not sent; header and payload are, in order
  ASSERT_EQ(from.size(), 1u);
  EXPECT_EQ(from[0], r.p[0]->address());  // is_from names the sender and only it
  EXPECT_TRUE(r.receive(2).empty());
  // Zero copy: two scatter entries (header mbuf, payload mbuf), not inline,
  // and the frame's mbufs go back to their pools once the completion is read.
  EXPECT_EQ(r.p[0]->counters().tx_inline, 0u);
  const unsigned hdr_free = rte_mempool_avail_count(r.hdr);
  r.receive(0);  // reads the send completion
  EXPECT_EQ(rte_mempool_avail_count(r.hdr), hdr_free + 1);
  EXPECT_EQ(r.p[0]->counters().tx_completions, 1u);
}

TEST(VerbsPort, ASmallFrameGoesInlineAndIsFreedAtOnce) {
  Rig r(2);
  const unsigned free_before = rte_mempool_avail_count(r.hdr);
  rte_mbuf* f = r.frame(0, r.p[1]->address(), "ack", "");
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  EXPECT_EQ(rte_mempool_avail_count(r.hdr), free_before);
  EXPECT_EQ(r.p[0]->counters().tx_inline, 1u);
  EXPECT_EQ(r.receive(1), std::vector<std::string>{"ack"});
}

TEST(VerbsPort, APeerWithAnotherQkeyIsRefusedAtSetUp) {
  Rig r(2);
  Endpoint other = *to_endpoint(r.p[1]->address());
  other.qkey = 0x1111;
  const PeerAddress a = to_address(other);
  const std::string why = r.p[0]->learn_peers(&a, 1);
  EXPECT_NE(why.find("uses another Q_Key"), std::string::npos) << why;
}

TEST(VerbsPort, AFrameToAPeerNeverLearnedIsDroppedAndCounted) {
  Rig r(2);
  Endpoint stranger = *to_endpoint(r.p[1]->address());
  stranger.qpn[0] ^= 0x5;
  rte_mbuf* f = r.frame(0, to_address(stranger), "who", "");
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);  // taken, freed
  EXPECT_EQ(r.p[0]->counters().tx_unresolved, 1u);
  EXPECT_TRUE(r.receive(1).empty());
  EXPECT_EQ(r.m->counters().datagrams_sent, 0u);
}

TEST(VerbsPort, AFrameFromAnotherQueuePairIsNotFromThePeer) {
  Rig r(3);
  // Port 2 sends to port 1; port 1 must not take it for port 0's.
  rte_mbuf* f = r.frame(2, r.p[1]->address(), "forged", "");
  ASSERT_EQ(r.p[2]->tx_burst(0, &f, 1), 1);
  rte_mbuf* b[4];
  ASSERT_EQ(r.p[1]->rx_burst(0, b, 4), 1);
  const auto* h = rte_pktmbuf_mtod(b[0], const uint8_t*);
  EXPECT_FALSE(r.p[1]->is_from(h, r.p[0]->address()));
  EXPECT_TRUE(r.p[1]->is_from(h, r.p[2]->address()));
  EXPECT_EQ(r.p[1]->source_of(h).len, 26u);  // GID, LID, Q_Key, one lane's QPN
  rte_pktmbuf_free(b[0]);
}

TEST(VerbsPort, MulticastReachesEveryJoinedMemberButTheSender) {
  Rig r(4);
  GroupAddressSeed key;
  for (int i = 0; i < 16; ++i) key.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
  const PeerAddress g = r.p[0]->group_address(key, 0);
  ASSERT_TRUE(is_group_address(g));
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(r.p[i]->join_group(0, g), "") << i;  // port 3 stays out
  rte_mbuf* f = r.frame(0, g, "to all", std::string(1000, 'm'));
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  for (uint32_t i : {1u, 2u}) {
    std::vector<PeerAddress> from;
    EXPECT_EQ(r.receive(i, 0, &from), std::vector<std::string>{"to all" + std::string(1000, 'm')}) << i;
    EXPECT_EQ(from, std::vector<PeerAddress>{r.p[0]->address()});
  }
  EXPECT_TRUE(r.receive(0).empty());  // no loopback
  EXPECT_TRUE(r.receive(3).empty());  // not joined
  r.p[2]->leave_group(0, g);
  rte_mbuf* f2 = r.frame(0, g, "again", "");
  ASSERT_EQ(r.p[0]->tx_burst(0, &f2, 1), 1);
  EXPECT_EQ(r.receive(1).size(), 1u);
  EXPECT_TRUE(r.receive(2).empty());
}

TEST(VerbsPort, ARefusedJoinSaysWhyAndLeavesNothing) {
  model::Options mo;
  mo.fail_joins = true;
  Rig r(2, mo);
  GroupAddressSeed key{};
  const std::string why = r.p[0]->join_group(0, r.p[0]->group_address(key, 0));
  EXPECT_NE(why.find("join failed"), std::string::npos) << why;
}

TEST(VerbsPort, AQueueRunDryIsCountedAndRefilled) {
  Rig r(2, {}, {}, /*rq_depth=*/64);
  // 100 frames with nobody reading: 64 receives consumed, 36 dropped.
  for (int i = 0; i < 100; ++i) {
    rte_mbuf* f = r.frame(0, r.p[1]->address(), "f" + std::to_string(i), "");
    ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  }
  EXPECT_EQ(r.m->qp_counts(r.p[1]->qpn(0)).rnr_drops, 36u);
  const auto got = r.receive(1);
  ASSERT_EQ(got.size(), 64u);
  EXPECT_EQ(got.front(), "f0");
  EXPECT_EQ(got.back(), "f63");
  EXPECT_EQ(r.p[1]->counters().rq_empty, 1u);
  EXPECT_EQ(r.p[1]->counters().rq_low, 1u);
  EXPECT_EQ(r.p[1]->receives_posted(0), 64u);  // refilled
  rte_mbuf* f = r.frame(0, r.p[1]->address(), "after", "");
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  EXPECT_EQ(r.receive(1), std::vector<std::string>{"after"});
}

TEST(VerbsPort, AQueuePairInTheErrorStateIsBroughtBack) {
  Rig r(2);
  // A payload from a pool the port never registered: the adapter refuses
  // the send with a protection error and the QP goes to the error state.
  rte_mempool* stray = pool("vp_stray", 63, 4096);
  rte_mbuf* f = r.frame(0, r.p[1]->address(), "head", "");
  rte_mbuf* b = rte_pktmbuf_alloc(stray);
  std::memcpy(rte_pktmbuf_append(b, 500), std::string(500, 's').data(), 500);
  rte_pktmbuf_chain(f, b);
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  EXPECT_TRUE(r.receive(1).empty());
  r.receive(0);  // reads the error completion, then recovers
  r.receive(0);
  EXPECT_GE(r.p[0]->counters().tx_errors, 1u);
  EXPECT_EQ(r.p[0]->counters().qp_recovered, 1u);
  EXPECT_EQ(r.p[0]->receives_posted(0), 128u);
  rte_mbuf* ok = r.frame(0, r.p[1]->address(), "works", std::string(700, 'w'));
  ASSERT_EQ(r.p[0]->tx_burst(0, &ok, 1), 1);
  EXPECT_EQ(r.receive(1), std::vector<std::string>{"works" + std::string(700, 'w')});
  EXPECT_EQ(rte_mempool_avail_count(stray), 63u);  // the refused frame was freed
}

// Sleeping until a datagram arrives: once armed, the next receive
// completion makes the completion channel's descriptor readable (what the
// polling core's waker watches); disarming reads the events, and an
// unarmed port stays quiet.
TEST(VerbsPort, AnArrivalWakesAnArmedCore) {
  Rig r(2);
  VerbsPort& b = *r.p[1];
  EXPECT_TRUE(b.caps().rx_wakeup);
  Waker w;
  b.attach_waker(&w);
  auto readable = [&] {
    w.begin_sleep();
    const bool woke = w.sleep(1'000'000);  // 1 ms at most
    w.end_sleep();
    return woke;
  };
  auto send = [&](const std::string& text) {
    rte_mbuf* f = r.frame(0, b.address(), text, "");
    ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  };
  b.arm_wakeup();
  EXPECT_FALSE(readable());  // nothing arrived: the nap ran out
  send("wake up");
  EXPECT_TRUE(readable());
  b.disarm_wakeup();
  EXPECT_EQ(b.counters().wakeup_events, 1u);
  EXPECT_EQ(r.receive(1), std::vector<std::string>{"wake up"});
  send("not armed");  // not armed: no event, the core finds it when it polls
  EXPECT_FALSE(readable());
  EXPECT_EQ(r.receive(1), std::vector<std::string>{"not armed"});
  b.detach_waker();
}

TEST(VerbsPort, RoceSpeaksFromItsIpv4RoceV2Gid) {
  model::PortSpec roce;
  roce.roce = true;
  Rig r(3, {}, roce);
  const std::optional<Endpoint> e = to_endpoint(r.p[0]->address());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->lid, 0u);
  EXPECT_TRUE(is_ipv4_mapped(e->gid));
  EXPECT_TRUE(r.p[0]->capabilities().roce);
  rte_mbuf* f = r.frame(0, r.p[2]->address(), "over udp 4791", std::string(2000, 'r'));
  ASSERT_EQ(r.p[0]->tx_burst(0, &f, 1), 1);
  std::vector<PeerAddress> from;
  EXPECT_EQ(r.receive(2, 0, &from), std::vector<std::string>{"over udp 4791" + std::string(2000, 'r')});
  EXPECT_EQ(from, std::vector<PeerAddress>{r.p[0]->address()});  // from the IPv4 header's source
  GroupAddressSeed key{};
  key.bytes[0] = 9;
  const PeerAddress g = r.p[0]->group_address(key, 0);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(r.p[i]->join_group(0, g), "") << i;
  rte_mbuf* m = r.frame(1, g, "roce multicast", "");
  ASSERT_EQ(r.p[1]->tx_burst(0, &m, 1), 1);
  EXPECT_EQ(r.receive(0).size(), 1u);
  EXPECT_EQ(r.receive(2).size(), 1u);
}

TEST(VerbsPort, BadSetUpIsRefusedWithTheReason) {
  test::start_eal();
  UdModel m({});
  VerbsPort::Options o;
  o.calls = &m.calls();
  o.rx_pool = pool("vp_rx", 4095, 4096 + kGrhBytes);
  try {
    VerbsPort p(o);
    ADD_FAILURE() << "opened with no device";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no RDMA device"), std::string::npos) << e.what();
  }
  m.add_device();
  o.device = "mlx5_9";
  try {
    VerbsPort p(o);
    ADD_FAILURE() << "opened a device that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("there are: model_0"), std::string::npos) << e.what();
  }
  o.device = "";
  o.rx_pool = pool("vp_small", 63, 1024);
  EXPECT_THROW(VerbsPort{o}, std::invalid_argument);  // 1 KiB buffers cannot hold a 4 KiB datagram
  o.rx_pool = pool("vp_rx", 4095, 4096 + kGrhBytes);
  o.lanes = 5;
  EXPECT_THROW(VerbsPort{o}, std::invalid_argument);
  EXPECT_EQ(m.live_objects(), 0u);
}

}  // namespace
}  // namespace lanecast::drivers::verbs
