// Zero-copy forwarding, proven by what a forwarding node does rather than by
// a counter it keeps: watched from outside (a port decorator), the payload
// buffer a forwarder transmits for a segment is the very one it received, and
// its own payload pool lends nothing while it forwards. The same checks run
// once more against a deliberately copying forward path
// (NodeConfig::test_copy_forwarded_payloads) and must catch it: a test that
// could not fail would prove nothing.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/wire/wire.h"
#include "tests/engine/node_harness.h"
#include "tests/engine/port_decorator.h"

namespace lanecast::engine {
namespace {

// Passes everything through to the fabric's port and remembers, per segment
// of each data frame, which payload buffer came in and which went out.
class PayloadWatcher final : public test::PortDecorator {
 public:
  using PortDecorator::PortDecorator;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override {
    const uint16_t n = in_.rx_burst(lane, frames, max);
    for (uint16_t i = 0; i < n; ++i) note(frames[i], received);
    return n;
  }
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    for (uint16_t i = 0; i < count; ++i) note(frames[i], sent);  // before the port owns them
    return in_.tx_burst(lane, frames, count);
  }
  // segment -> the payload buffer (the mbuf after the header mbuf)
  std::map<uint32_t, const rte_mbuf*> received, sent;

 private:
  void note(const rte_mbuf* m, std::map<uint32_t, const rte_mbuf*>& into) {
    wire::Parsed p;
    if (wire::parse(m, in_.link_header_bytes(), &p) != wire::Verdict::Ok) return;
    if (p.type != wire::FrameType::Data || p.data.payload_len == 0) return;
    into.emplace(p.data.segment, m->next);  // the first copy of each segment
  }
};

struct Findings {
  std::vector<std::string> problems;
  uint32_t forwarders = 0;
};

// An 8-node chain of `size` bytes; every forwarder must send on exactly the
// payload buffers it received and take nothing from its own pool.
Findings run_chain(bool copying, uint64_t size) {
  test::NodeHarness::Options o;
  o.nodes = 8;
  o.pool_per_node = true;
  o.node.segment_bytes = 1400;
  o.node.max_message_bytes = size;
  o.node.test_copy_forwarded_payloads = copying;
  std::vector<PayloadWatcher*> watch(o.nodes);
  o.wrap = [&](uint32_t r, drivers::Port& inner) {
    auto w = std::make_unique<PayloadWatcher>(inner);
    watch[r] = w.get();
    return std::unique_ptr<drivers::Port>(std::move(w));
  };
  test::NodeHarness h(o);
  std::vector<std::vector<std::byte>> bufs(o.nodes, std::vector<std::byte>(size));
  std::mt19937_64 rng(7);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());

  // Run the broadcast by hand to watch every pool's use at every step.
  std::vector<unsigned> most_in_use(o.nodes, 0);
  Findings f;
  for (uint32_t r = 0; r < o.nodes; ++r) {
    Submission s;
    s.op = 1;
    s.root = 0;
    s.algo = algos::Algo::Chain;
    s.buffer = bufs[r].data();
    s.size = size;
    h.node(r).submit(s);
  }
  auto all_done = [&] {
    for (uint32_t r = 0; r < o.nodes; ++r)
      if (!h.node(r).completions().ready(1)) return false;
    return true;
  };
  for (int i = 0; i < 200'000 && !all_done(); ++i) {
    h.step();
    for (uint32_t r = 0; r < o.nodes; ++r)
      most_in_use[r] = std::max(most_in_use[r], rte_mempool_in_use_count(h.payload_pool(r)));
  }
  if (!all_done() || !test::all_equal(bufs, 0)) {
    f.problems.push_back("the broadcast did not complete with the root's bytes");
    return f;
  }
  const uint32_t segments = static_cast<uint32_t>((size + 1399) / 1400);
  for (uint32_t r = 1; r + 1 < o.nodes; ++r) {  // ranks 1..6 receive and forward
    ++f.forwarders;
    const PayloadWatcher& w = *watch[r];
    if (w.sent.size() != segments || w.received.size() != segments)
      f.problems.push_back("rank " + std::to_string(r) + " did not forward every segment once");
    uint32_t other_buffer = 0;
    for (const auto& [seg, out] : w.sent) {
      auto in = w.received.find(seg);
      if (in == w.received.end() || in->second != out) ++other_buffer;
    }
    if (other_buffer > 0)
      f.problems.push_back("rank " + std::to_string(r) + " sent " + std::to_string(other_buffer) +
                           " segments on a buffer other than the one it received");
    if (most_in_use[r] != 0)
      f.problems.push_back("rank " + std::to_string(r) + " took up to " + std::to_string(most_in_use[r]) +
                           " payload buffers of its own while forwarding");
  }
  // The root copies each segment once, into buffers of its own pool.
  if (most_in_use[0] == 0) f.problems.push_back("the root's pool lent nothing: the check watches the wrong pool");
  if (h.node(0).counters().root_copy_bytes.get() != size) f.problems.push_back("the root copied more than once");
  return f;
}

TEST(ZeroCopy, AForwarderSendsTheBuffersItReceivedAndAllocatesNone) {
  const Findings f = run_chain(/*copying=*/false, 1 << 20);
  EXPECT_EQ(f.forwarders, 6u);
  for (const auto& p : f.problems) ADD_FAILURE() << p;
}

// The checks above against a forward path that copies each payload into a
// fresh buffer: they must report it (identity lost, the forwarder's pool used).
TEST(ZeroCopy, TheChecksCatchACopyingForwardPath) {
  const Findings f = run_chain(/*copying=*/true, 1 << 20);
  bool identity = false, pool = false;
  for (const auto& p : f.problems) {
    identity = identity || p.find("on a buffer other than") != std::string::npos;
    pool = pool || p.find("payload buffers of its own") != std::string::npos;
  }
  EXPECT_TRUE(identity) << "a copying forwarder went unnoticed by the identity check";
  EXPECT_TRUE(pool) << "a copying forwarder went unnoticed by the pool check";
}

}  // namespace
}  // namespace lanecast::engine
