// A member's streams (engine/stream/streams.h), alone, on a host that
// stands in for the node (stream_host.h): a publisher's messages cut into a
// batch owed to each child, the frame of an owed batch and its books, and
// a failure told to the host once.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstring>
#include <memory>
#include <tuple>
#include <vector>

#include "engine/stream/batch_format.h"
#include "engine/stream/streams.h"
#include "tests/engine/eal_env.h"

namespace lanecast::engine::stream {
namespace {

constexpr uint16_t kLink = 14;

// Records what the streams ask of the node.
class Host final : public StreamHost {
 public:
  explicit Host(rte_mempool* pool) : pool_(pool) {}
  rte_mbuf* alloc_frame(const drivers::PeerAddress&, uint16_t header_bytes, uint8_t** body) override {
    rte_mbuf* h = rte_pktmbuf_alloc(pool_);
    if (h == nullptr) return nullptr;
    *body = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(h, kLink + header_bytes)) + kLink;
    return h;
  }
  rte_mbuf* attach_payload(rte_mbuf* h, rte_mbuf* payload) override {
    rte_mbuf_refcnt_update(payload, 1);
    h->next = payload;
    h->nb_segs = 2;
    h->pkt_len += payload->pkt_len;
    return h;
  }
  rte_mbuf* detach_payload(rte_mbuf* m, uint32_t offset) override {
    rte_pktmbuf_adj(m, static_cast<uint16_t>(offset));
    return m;
  }
  bool seal_ok(const uint8_t*, uint32_t, const wire::Parsed&) override { return true; }
  bool lane_room(uint16_t, uint32_t, uint64_t, bool) override { return true; }
  void push(uint16_t, rte_mbuf* m) override { pushed.push_back(m); }
  bool owe_batch(algos::Rank child, uint32_t batch_low, uint16_t slot) override {
    owed.emplace_back(child, batch_low, slot);
    return true;
  }
  void grow_runs(uint32_t extra) override { runs += extra; }
  void internal_error() override { internal = true; }
  void streams_failed(uint64_t, OpError err, algos::Rank peer) override {
    ++failures;
    error = err;
    error_peer = peer;
  }

  std::vector<std::tuple<algos::Rank, uint32_t, uint16_t>> owed;
  std::vector<rte_mbuf*> pushed;
  uint32_t runs = 0;
  bool internal = false;
  int failures = 0;
  OpError error = OpError::None;
  algos::Rank error_peer = algos::kNoRank;

 private:
  rte_mempool* pool_;
};

struct Fixture {
  Fixture() : pool(test::test_pool("streams_part")), host(pool), addrs(4) {
    cfg.rank = 0;
    cfg.nodes = 4;
    cfg.segment_bytes = 1400;
    cfg.streams.fanout = 2;
    cfg.streams.window_batches = 16;
    cfg.streams.window_bytes = 4096;
    cfg.streams.delivery_bytes = 4096;
    streams = std::make_unique<Streams>(cfg, host, counters,
                                        Streams::SharedCounters{root_copy, delivered, alloc_failures, bad_crc});
    Streams::Frames f;
    f.link_bytes = kLink;
    f.payload_pool = pool;
    f.addrs = addrs.data();
    streams->connect(f);
  }
  // A publisher of stream 0 holding `n` messages of `len` bytes, handed over.
  PublisherShared* publish(uint32_t n, uint32_t len) {
    auto p = std::make_unique<PublisherShared>();
    p->ring_mem = aligned_bytes(RecordRing::bytes_for(cfg.streams.window_bytes));
    p->ring = RecordRing::init(p->ring_mem.get(), cfg.streams.window_bytes);
    RecordRing ring(p->ring);
    for (uint32_t i = 0; i < n; ++i) {
      uint8_t* at = ring.reserve(8 + len, 0);
      const uint64_t ts = 1000 + i;
      std::memcpy(at, &ts, 8);
      std::memset(at + 8, static_cast<int>(i), len);
      ring.commit();
    }
    PublisherShared* raw = p.get();
    EXPECT_TRUE(streams->offer(std::move(p)));
    return raw;
  }

  rte_mempool* pool;
  Host host;
  std::vector<drivers::PeerAddress> addrs;
  Streams::Config cfg;
  StreamCounters counters;
  Counter root_copy, delivered, alloc_failures, bad_crc;
  std::unique_ptr<Streams> streams;
};

TEST(StreamsPart, APublishersMessagesBecomeOneBatchOwedToEachChild) {
  Fixture f;
  EXPECT_FALSE(f.streams->waiting());
  f.publish(3, 100);
  EXPECT_TRUE(f.streams->waiting()) << "handed over, adopted at the core's next turn";
  f.streams->pump(5000);
  EXPECT_FALSE(f.streams->waiting());
  EXPECT_EQ(f.host.runs, 16u * 2) << "a window of runs per child";
  EXPECT_EQ(f.counters.stream_msgs_published.get(), 3u);
  EXPECT_EQ(f.counters.stream_batches_formed.get(), 1u) << "everything waiting fits one frame";
  EXPECT_EQ(f.root_copy.get(), 300u);
  using Owed = std::tuple<algos::Rank, uint32_t, uint16_t>;
  EXPECT_EQ(f.host.owed, (std::vector<Owed>{{1, 0, 0}, {2, 0, 0}})) << "batch 0 of slot 0 to rank 0's two children";
  EXPECT_EQ(f.streams->owed(), 2u);
  EXPECT_TRUE(f.streams->busy());
  EXPECT_FALSE(f.host.internal);
  ASSERT_TRUE(f.streams->holds(0, 0));
  EXPECT_EQ(f.streams->batch_bytes(0, 0), 3u * (kHeadBytes + 100));
}

TEST(StreamsPart, AnOwedBatchsFrameCarriesTheHeldPayloadAndItsBooksMove) {
  Fixture f;
  f.publish(2, 50);
  f.streams->pump(5000);
  rte_mbuf* m = f.streams->build_frame(1, 0, 0, 0, /*seq=*/7, 0);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->pkt_len, kLink + wire::kDataHeaderBytes + 2 * (kHeadBytes + 50));
  EXPECT_EQ(m->nb_segs, 2) << "the payload by reference";
  f.streams->sent(0, 1, 0);
  EXPECT_EQ(f.streams->owed(), 1u);
  EXPECT_EQ(f.streams->unacked(), 1u);
  EXPECT_EQ(f.counters.stream_batches_tx.get(), 1u);
  f.streams->acked(1);
  EXPECT_EQ(f.streams->unacked(), 0u);
  EXPECT_EQ(f.streams->build_frame(1, 0, 0, 5, 8, 0), nullptr) << "a batch never formed";
  rte_pktmbuf_free(m);
}

TEST(StreamsPart, AFailureIsToldToTheHostOnceAndToEveryPublisher) {
  Fixture f;
  PublisherShared* p = f.publish(1, 10);
  f.streams->pump(5000);
  ASSERT_EQ(f.streams->owed(), 2u);
  f.streams->fail(6000, OpError::PeerSilent, 2);
  EXPECT_TRUE(f.streams->failed());
  EXPECT_EQ(f.host.failures, 1);
  EXPECT_EQ(f.host.error, OpError::PeerSilent);
  EXPECT_EQ(f.host.error_peer, 2u);
  EXPECT_EQ(f.streams->error(), OpError::PeerSilent);
  EXPECT_EQ(f.streams->error_peer(), 2u);
  EXPECT_EQ(f.streams->owed(), 0u) << "the host dropped what the channels owed";
  EXPECT_EQ(p->error.load(), static_cast<uint8_t>(OpError::PeerSilent));
  EXPECT_EQ(f.streams->due_ns(), 6000u) << "the parents are told at the next turn";
  f.streams->fail(7000, OpError::NoProgress, 3);
  EXPECT_EQ(f.host.failures, 1);
  EXPECT_EQ(f.streams->error(), OpError::PeerSilent);
}

}  // namespace
}  // namespace lanecast::engine::stream
