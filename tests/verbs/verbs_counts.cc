// What the verbs port asks of the adapter per frame, counted on the UD model
// for every algorithm: frames sent, ibv_post_send calls (doorbells) and send
// completions per frame (one signalled send per burst), inline sends, and on
// the receive side ibv_post_recv calls per receive. Counts of calls - what
// the driver does - not times: the model says nothing about an adapter's
// speed ("virt ms" is the harness's virtual time, 1 us per round of polls:
// long only where losses waited for a timeout). "dropped": datagrams that
// found no receive posted. Exits 1 if a broadcast fails.
//
//   verbs_counts [--nodes N] [--size BYTES] [--lanes L] [--rq DEPTH]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "algos/registry.h"
#include "tests/verbs/verbs_harness.h"

namespace {

uint64_t calls_named(const std::vector<std::string>& trace, const char* prefix) {
  uint64_t n = 0;
  for (const std::string& l : trace) n += l.rfind(prefix, 0) == 0;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lanecast;
  uint32_t nodes = 8;
  size_t size = 1 << 20;
  uint16_t lanes = 1;
  uint32_t rq = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--nodes")) nodes = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    else if (!std::strcmp(argv[i], "--size")) size = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--lanes")) lanes = static_cast<uint16_t>(std::strtoul(argv[i + 1], nullptr, 10));
    else if (!std::strcmp(argv[i], "--rq")) rq = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    else {
      std::fprintf(stderr, "usage: verbs_counts [--nodes N] [--size BYTES] [--lanes L] [--rq DEPTH]\n");
      return 2;
    }
  }
  if (nodes < 2 || nodes > 64 || size == 0 || size > (64u << 20) || lanes < 1 || lanes > 4 || rq < 64 || rq > 4096) {
    std::fprintf(stderr, "verbs_counts: --nodes 2..64, --size 1..64M, --lanes 1..4, --rq 64..4096\n");
    return 2;
  }
  std::printf("%u members x %u lane(s), %zu bytes, 1900-byte segments, receive queues of %u, on the UD model\n", nodes,
              lanes, size, rq);
  std::printf("%-18s %8s %8s %8s %9s %8s %9s %7s %9s %9s %9s %8s\n", "algorithm", "virt ms", "frames", "doorbell", "frames/db", "send CQE",
              "CQE/frame", "inline", "recv", "post_recv", "recv/call", "dropped");
  bool ok = true;
  for (const algos::AlgoInfo& a : algos::algorithms()) {
    test::VerbsHarness::Options o;
    o.nodes = nodes;
    o.lanes = lanes;
    o.node.segment_bytes = 1900;
    o.node.max_message_bytes = size;
    o.model.trace = true;
    o.rq_depth = rq;
    o.rx_buffers = 2 * rq * lanes + 1023;
    test::VerbsHarness h(o);
    h.model().clear_trace();
    std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(size));
    std::mt19937_64 rng(static_cast<uint64_t>(a.id));
    for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
    const uint64_t t0 = h.now();
    const auto recs = h.broadcast(0, a.id, bufs, 20'000'000);
    const double virtual_ms = static_cast<double>(h.now() - t0) / 1e6;
    bool done = true;
    for (uint32_t r = 0; r < nodes; ++r) done = done && recs[r].op == 1 && bufs[r] == bufs[0];
    if (!done) {
      std::printf("%s: FAILED (a member without the root's bytes)\n", std::string(a.name).c_str());
    }
    ok = ok && done;
    for (int i = 0; i < 50; ++i) h.step();  // the last completions read, the queues refilled
    uint64_t frames = 0, cqe = 0, inl = 0, recv = 0;
    for (uint32_t r = 0; r < nodes; ++r) {
      const auto c = h.port(r).counters();
      frames += c.tx_posted, cqe += c.tx_completions, inl += c.tx_inline, recv += c.rx_completed;
    }
    const auto& t = h.model().trace();
    const uint64_t doorbells = calls_named(t, "ibv_post_send("), post_recv = calls_named(t, "ibv_post_recv(");
    std::printf("%-18s %8.1f %8llu %8llu %9.1f %8llu %9.3f %7llu %9llu %9llu %9.1f %8llu\n", std::string(a.name).c_str(), virtual_ms,
                static_cast<unsigned long long>(frames), static_cast<unsigned long long>(doorbells),
                doorbells ? static_cast<double>(frames) / static_cast<double>(doorbells) : 0.0,
                static_cast<unsigned long long>(cqe), frames ? static_cast<double>(cqe) / static_cast<double>(frames) : 0.0,
                static_cast<unsigned long long>(inl), static_cast<unsigned long long>(recv),
                static_cast<unsigned long long>(post_recv),
                post_recv ? static_cast<double>(recv) / static_cast<double>(post_recv) : 0.0,
                static_cast<unsigned long long>(h.model().counters().rnr_drops));
  }
  if (!ok) std::printf("a broadcast FAILED\n");
  return ok ? 0 : 1;
}
