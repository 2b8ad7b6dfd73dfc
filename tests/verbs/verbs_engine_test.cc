// The engine over verbs ports on the UD model: every algorithm delivers
// every byte to every member, multicast losing half its datagrams is
// repaired, and a receive queue run dry is counted and comes back. Against
// a model of UD semantics (tests/verbs/ud_model.h), not an adapter.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "algos/registry.h"
#include "engine/auth/epoch_keys.h"
#include "engine/stream/stream_state.h"
#include "tests/engine/port_decorator.h"
#include "tests/verbs/verbs_harness.h"

namespace lanecast::test {
namespace {

using drivers::verbs::VerbsPort;

std::vector<std::vector<std::byte>> buffers(uint32_t nodes, size_t size, uint64_t seed) {
  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(size));
  std::mt19937_64 rng(seed);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
  return bufs;
}

bool every_member_done(const std::vector<engine::CompletionRecord>& recs, uint32_t op) {
  for (const auto& r : recs)
    if (r.op != op || r.error != engine::OpError::None) return false;
  return true;
}

VerbsHarness::Options options(uint32_t nodes, uint16_t lanes, uint64_t max_message) {
  VerbsHarness::Options o;
  o.nodes = nodes;
  o.lanes = lanes;
  o.node.segment_bytes = 1900;  // + lanecast's headers, within the 2048-byte datagrams
  o.node.max_message_bytes = max_message;
  return o;
}

TEST(VerbsEngine, EveryAlgorithmDeliversEveryByteOverModelPorts) {
  VerbsHarness h(options(8, 2, 1 << 20));
  uint32_t op = 0;
  for (const algos::AlgoInfo& a : algos::algorithms()) {
    for (size_t size : {size_t{2}, size_t{300'000}}) {
      SCOPED_TRACE(std::string(a.name) + " " + std::to_string(size) + " B");
      auto bufs = buffers(8, size, 7 + op);
      const algos::Rank root = static_cast<algos::Rank>(op % 8);
      if (root != 0) std::swap(bufs[0], bufs[root]);
      const auto recs = h.broadcast(root, a.id, bufs);
      ++op;
      EXPECT_TRUE(every_member_done(recs, op));
      for (uint32_t r = 0; r < 8; ++r) EXPECT_EQ(bufs[r], bufs[root]) << "member " << r;
    }
  }
  // Nothing was refused by the model or the port on the way.
  const auto c = h.model().counters();
  EXPECT_EQ(c.prot_errors, 0u);
  EXPECT_EQ(c.mtu_errors, 0u);
  EXPECT_EQ(c.qkey_drops, 0u);
  for (uint32_t r = 0; r < 8; ++r) {
    const VerbsPort::Counters pc = h.port(r).counters();
    EXPECT_EQ(pc.tx_unresolved + pc.tx_errors + pc.rx_errors + pc.tx_too_many_segments, 0u) << "member " << r;
    EXPECT_GT(pc.tx_posted, 0u);
  }
  // mcast_chain multicast for real: the model copied group datagrams.
  EXPECT_GT(c.copies_delivered, c.datagrams_sent);
}

TEST(VerbsEngine, MulticastLosingHalfItsDatagramsIsRepaired) {
  VerbsHarness::Options o = options(6, 1, 1 << 20);
  o.model.multicast_loss = 0.5;
  o.model.seed = 5;
  VerbsHarness h(o);
  for (uint32_t i = 0; i < 6; ++i) EXPECT_TRUE(h.node(i).multicast_fallback().empty()) << h.node(i).multicast_fallback();
  auto bufs = buffers(6, 600'000, 3);
  const auto recs = h.broadcast(0, algos::Algo::McastChain, bufs, 2'000'000);
  EXPECT_TRUE(every_member_done(recs, 1));
  for (uint32_t r = 1; r < 6; ++r) EXPECT_EQ(bufs[r], bufs[0]) << "member " << r;
  const auto c = h.model().counters();
  EXPECT_GT(c.loss_drops, 100u);  // about half of 316 segments x 5 members
  uint64_t datagrams = 0;
  for (uint32_t r = 1; r < 6; ++r) datagrams += h.node(r).counters().rx_datagrams.get();
  EXPECT_GT(datagrams, 0u);  // the other half came by multicast
}

TEST(VerbsEngine, AReceiveQueueRunDryIsCountedAndComesBack) {
  // A member that stops polling while the root sends (a stalled core):
  // its adapter consumes the posted receives, then drops what arrives (no
  // receive posted). The port counts the queue found empty, the engine
  // repairs the lost frames, and the queue is full again afterwards.
  VerbsHarness::Options o = options(4, 1, 2 << 20);
  o.rq_depth = 64;
  VerbsHarness h(o);
  h.pause(2, 20, 3000);  // member 2 skips steps 20..3000
  auto bufs = buffers(4, 1 << 20, 9);
  const auto recs = h.broadcast(0, algos::Algo::Chain, bufs, 4'000'000);
  EXPECT_TRUE(every_member_done(recs, 1));
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(bufs[r], bufs[0]) << "member " << r;
  const VerbsPort::Counters c = h.port(2).counters();
  EXPECT_GT(c.rq_empty, 0u);
  EXPECT_GT(c.rq_low, 0u);
  EXPECT_GT(h.model().qp_counts(h.port(2).qpn(0)).rnr_drops, 0u);
  uint64_t retransmits = 0;
  for (uint32_t r = 0; r < 4; ++r) retransmits += h.node(r).counters().tx_retransmits.get();
  EXPECT_GT(retransmits, 0u);
  // Recovered: idle again, every member's queue is full to within one
  // burst of receives (they are posted 32 at a time).
  for (int i = 0; i < 100; ++i) h.step();
  for (uint32_t r = 0; r < 4; ++r) EXPECT_GT(h.port(r).receives_posted(0), 64u - 32u) << "member " << r;
  auto again = buffers(4, 100'000, 10);
  EXPECT_TRUE(every_member_done(h.broadcast(0, algos::Algo::Chain, again), 2));
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(again[r], again[0]);
}

// Seals and streams live in the frame, not in the link header: a group
// with a key broadcasts over verbs ports as over Ethernet (every frame
// sealed and opened), and a stream reaches every member in order - over
// its tree of channels and over multicast.
TEST(VerbsEngine, SealedFramesAndStreamsWorkUnchanged) {
  for (bool multicast : {false, true}) {
    SCOPED_TRACE(multicast ? "stream over multicast" : "stream over its tree");
    VerbsHarness::Options o = options(4, 1, 1 << 20);
    const auto key = AuthKey::from_hex(std::string(64, '7'), "test");
    o.node.group_id = 3;
    o.node.epoch = 9;
    o.node.auth = std::make_shared<const engine::auth::EpochKeys>(engine::auth::derive_formation_keys(*key, 3, 9, {}));
    o.node.streams.multicast = multicast;
    VerbsHarness h(o);
    auto bufs = buffers(4, 200'000, 12);
    EXPECT_TRUE(every_member_done(h.broadcast(0, algos::Algo::Bintree, bufs), 1));
    for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(bufs[r], bufs[0]);

    std::vector<std::vector<std::string>> got(4);
    for (uint32_t r = 0; r < 4; ++r)
      h.node(r).streams().set_message_handler([&got, r](const engine::stream::DeliveredHead&, const uint8_t* p, uint32_t n) {
        got[r].emplace_back(reinterpret_cast<const char*>(p), n);
      });
    auto pub = std::make_unique<engine::stream::PublisherShared>();
    pub->index = 0;
    pub->ring_mem = engine::stream::aligned_bytes(engine::stream::RecordRing::bytes_for(1 << 16));
    pub->ring = engine::stream::RecordRing::init(pub->ring_mem.get(), 1 << 16);
    engine::stream::RecordRing ring(pub->ring);
    std::vector<std::string> sent;
    for (int i = 0; i < 200; ++i) {
      sent.push_back("message " + std::to_string(i) + std::string(static_cast<size_t>(i % 40), '.'));
      uint8_t* at = ring.reserve(static_cast<uint32_t>(8 + sent.back().size()), 0);
      ASSERT_NE(at, nullptr);
      const uint64_t stamp = 1000 + static_cast<uint64_t>(i);
      std::memcpy(at, &stamp, 8);
      std::memcpy(at + 8, sent.back().data(), sent.back().size());
      ring.commit();
    }
    const engine::stream::PublisherShared* shared = pub.get();
    ASSERT_TRUE(h.node(2).open_publisher(std::move(pub)));
    for (int i = 0; i < 200'000 && shared->stable_msgs.load() < sent.size(); ++i) h.step();
    EXPECT_EQ(shared->stable_msgs.load(), sent.size());
    for (uint32_t r : {0u, 1u, 3u}) EXPECT_EQ(got[r], sent) << "member " << r;
    uint64_t bad_tags = 0, sealed_refused = 0;
    for (uint32_t r = 0; r < 4; ++r) {
      bad_tags += h.node(r).counters().rx_bad_tag.get();
      sealed_refused += h.node(r).counters().rx_unsealed.get();
    }
    EXPECT_EQ(bad_tags + sealed_refused, 0u);
    if (multicast) {
      EXPECT_GT(h.node(2).counters().streams.stream_multicasts_tx.get(), 0u);
    }
  }
}

// Sends every data frame rank 0 seals for rank 1 to rank 2 as well, the
// handle pointing at rank 2, the sealed bytes as they were: what an
// attacker who captured the frame and sent it on to another member does.
class Readdresser final : public engine::test::PortDecorator {
 public:
  Readdresser(drivers::Port& inner, const drivers::PeerAddress& victim, const drivers::PeerAddress& other,
              rte_mempool* pool)
      : PortDecorator(inner), victim_addr_(victim), other_addr_(other), pool_(pool) {
    EXPECT_EQ(in_.register_pool(pool), "");  // the copies' buffers, as the adapter must read them
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    if (victim_.magic == 0) {  // the port learns its peers when the node is made, after this wraps it
      uint8_t h[64];
      in_.write_link_header(h, victim_addr_);
      std::memcpy(&victim_, h, sizeof victim_);
      in_.write_link_header(h, other_addr_);
      std::memcpy(&other_, h, sizeof other_);
    }
    for (uint16_t i = 0; i < count; ++i) {
      drivers::verbs::TxHeader h;
      std::memcpy(&h, rte_pktmbuf_mtod(frames[i], const void*), sizeof h);
      if (h.dest != victim_.dest) continue;
      rte_mbuf* copy = rte_pktmbuf_copy(frames[i], pool_, 0, UINT32_MAX);
      if (copy == nullptr) continue;
      rte_pktmbuf_mtod(copy, drivers::verbs::TxHeader*)->dest = other_.dest;  // the binding stays rank 1's
      if (in_.tx_burst(lane, &copy, 1) == 1) ++readdressed;
      else rte_pktmbuf_free(copy);
    }
    return in_.tx_burst(lane, frames, count);
  }
  uint64_t readdressed = 0;

 private:
  drivers::PeerAddress victim_addr_, other_addr_;
  rte_mempool* pool_;
  drivers::verbs::TxHeader victim_{}, other_{};
};

TEST(VerbsEngine, AFrameSealedForOneMemberDoesNotOpenAtAnother) {
  VerbsHarness::Options o = options(3, 1, 1 << 20);
  const auto key = AuthKey::from_hex(std::string(64, '3'), "test");
  o.node.group_id = 4;
  o.node.epoch = 2;
  o.node.auth = std::make_shared<const engine::auth::EpochKeys>(engine::auth::derive_formation_keys(*key, 4, 2, {}));
  start_eal();
  rte_mempool* spare = rte_pktmbuf_pool_create("readdress", 4095, 0, 0, RTE_PKTMBUF_HEADROOM + 2200, SOCKET_ID_ANY);
  ASSERT_NE(spare, nullptr);
  Readdresser* attacker = nullptr;
  o.wrap = [&](uint32_t rank, drivers::Port& inner,
               const std::vector<drivers::PeerAddress>& members) -> std::unique_ptr<drivers::Port> {
    if (rank != 0) return nullptr;
    auto p = std::make_unique<Readdresser>(inner, members[1], members[2], spare);
    attacker = p.get();
    return p;
  };
  VerbsHarness h(o);
  auto bufs = buffers(3, 100'000, 4);
  EXPECT_TRUE(every_member_done(h.broadcast(0, algos::Algo::Linear, bufs), 1));
  for (uint32_t r = 1; r < 3; ++r) EXPECT_EQ(bufs[r], bufs[0]);
  ASSERT_NE(attacker, nullptr);
  EXPECT_GT(attacker->readdressed, 0u);
  // Every readdressed frame reached rank 2 (the model delivers it) and none opened.
  EXPECT_EQ(h.node(2).counters().rx_bad_tag.get() + h.node(2).counters().rx_replayed.get() +
                h.node(2).counters().rx_stale_counter.get(),
            attacker->readdressed);
  EXPECT_GE(h.node(2).counters().rx_bad_tag.get(), 1u);
  rte_mempool_free(spare);
}

// Zero copy on verbs: a forwarding member sends each segment from the very
// receive buffer the adapter wrote it into - the payload mbuf chained behind
// its header comes from its port's receive pool, never from a copy.
class PayloadOrigin final : public engine::test::PortDecorator {
 public:
  PayloadOrigin(drivers::Port& inner, const rte_mempool* rx_pool) : PortDecorator(inner), rx_pool_(rx_pool) {}
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    for (uint16_t i = 0; i < count; ++i) {
      if (frames[i]->next == nullptr) continue;  // no payload (acks) or flattened
      (frames[i]->next->pool == rx_pool_ ? from_receive : elsewhere)++;
    }
    return in_.tx_burst(lane, frames, count);
  }
  uint64_t from_receive = 0, elsewhere = 0;

 private:
  const rte_mempool* rx_pool_;
};

TEST(VerbsEngine, AForwarderSendsTheBuffersItReceivedInto) {
  VerbsHarness::Options o = options(4, 1, 1 << 20);
  std::vector<PayloadOrigin*> watch(4, nullptr);
  o.wrap = [&](uint32_t rank, drivers::Port& inner,
               const std::vector<drivers::PeerAddress>&) -> std::unique_ptr<drivers::Port> {
    auto* vp = dynamic_cast<drivers::verbs::VerbsPort*>(&inner);
    if (vp == nullptr) return nullptr;
    auto p = std::make_unique<PayloadOrigin>(inner, vp->receive_pool());
    watch[rank] = p.get();
    return p;
  };
  VerbsHarness h(o);
  auto bufs = buffers(4, 500'000, 21);
  EXPECT_TRUE(every_member_done(h.broadcast(0, algos::Algo::Chain, bufs), 1));
  for (uint32_t r = 1; r < 4; ++r) EXPECT_EQ(bufs[r], bufs[0]);
  // Ranks 1 and 2 forward every segment (264 of 1900 bytes) from their receive buffers.
  for (uint32_t r : {1u, 2u}) {
    EXPECT_GE(watch[r]->from_receive, 264u) << "member " << r;
    EXPECT_EQ(watch[r]->elsewhere, 0u) << "member " << r;
  }
  EXPECT_EQ(watch[0]->from_receive, 0u);  // the root sends from its own payload buffers
  EXPECT_GE(watch[0]->elsewhere, 264u);
}

}  // namespace
}  // namespace lanecast::test
