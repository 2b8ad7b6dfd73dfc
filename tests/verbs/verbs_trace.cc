// Prints the verbs calls the driver makes, in order, for one broadcast over
// ports on the UD model: set-up (device, queue pairs, registration, address
// handles, the multicast join), one mcast_chain broadcast of 5 000 bytes to
// three members; then each queue pair's posted and completed
// receives. A model's trace - what the driver asked of the library - not a
// record of an adapter. Exits 1 if the broadcast fails.
//
//   verbs_trace [--algo NAME] [--size BYTES] [--nodes N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "algos/registry.h"
#include "tests/verbs/verbs_harness.h"

int main(int argc, char** argv) {
  using namespace lanecast;
  std::string algo = "mcast_chain";
  size_t size = 5000;
  uint32_t nodes = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--algo")) algo = argv[i + 1];
    else if (!std::strcmp(argv[i], "--size")) size = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--nodes")) nodes = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    else {
      std::fprintf(stderr, "usage: verbs_trace [--algo NAME] [--size BYTES] [--nodes N]\n");
      return 2;
    }
  }
  const auto a = algos::algo_by_name(algo);
  if (!a || nodes < 2 || nodes > 64 || size == 0 || size > (64u << 20)) {
    std::fprintf(stderr, "verbs_trace: bad --algo, --nodes (2..64) or --size\n");
    return 2;
  }
  test::VerbsHarness::Options o;
  o.nodes = nodes;
  o.node.segment_bytes = 1900;
  o.node.max_message_bytes = size;
  o.model.trace = true;
  o.rq_depth = 64;
  o.sq_depth = 64;
  auto h = std::make_unique<test::VerbsHarness>(o);
  std::printf("== set-up: %u members on the UD model (one device each, one UD QP per member)\n", nodes);
  for (const std::string& l : h->model().trace()) std::printf("%s\n", l.c_str());
  h->model().clear_trace();

  std::vector<std::vector<std::byte>> bufs(nodes, std::vector<std::byte>(size));
  std::mt19937_64 rng(1);
  for (auto& b : bufs[0]) b = static_cast<std::byte>(rng());
  const auto recs = h->broadcast(0, *a, bufs);
  bool ok = true;
  for (uint32_t r = 0; r < nodes; ++r) ok = ok && recs[r].op == 1 && bufs[r] == bufs[0];
  std::printf("\n== one %s broadcast of %zu bytes from member 0: %s\n", algo.c_str(), size,
              ok ? "every member holds the root's bytes" : "FAILED");
  for (const std::string& l : h->model().trace()) std::printf("%s\n", l.c_str());

  std::printf("\n== receives per queue pair (member, qpn, posted, completed; the port's own view)\n");
  std::printf("%-7s %-9s %8s %10s %12s %12s\n", "member", "qpn", "posted", "completed", "port posted",
              "port done");
  for (uint32_t r = 0; r < nodes; ++r) {
    const auto q = h->model().qp_counts(h->port(r).qpn(0));
    const auto c = h->port(r).counters();
    std::printf("%-7u 0x%-7x %8llu %10llu %12llu %12llu\n", r, h->port(r).qpn(0),
                static_cast<unsigned long long>(q.posted_recvs), static_cast<unsigned long long>(q.completed_recvs),
                static_cast<unsigned long long>(c.rx_posted), static_cast<unsigned long long>(c.rx_completed));
  }
  h->model().clear_trace();
  h.reset();
  return ok ? 0 : 1;
}
