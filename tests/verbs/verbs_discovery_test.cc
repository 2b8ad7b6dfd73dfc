// The discovery bootstrap over verbs ports on the UD model: members on
// threads of their own send hellos to the group's hello multicast group
// (there is no broadcast on InfiniBand), hear each lane of every other
// member from its queue pair, and merge a member's lanes into the one
// address its port names itself by. A model of UD semantics, not an adapter.
#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "drivers/verbs/verbs_port.h"
#include "engine/bootstrap/wire_discovery.h"
#include "engine/group/lane_port.h"
#include "tests/engine/eal_env.h"
#include "tests/verbs/locked_calls.h"
#include "tests/verbs/ud_model.h"

namespace lanecast::test {
namespace {

using drivers::verbs::VerbsPort;

TEST(VerbsDiscovery, MembersFindEachOtherOverTheHelloGroupAndMergeTheirLanes) {
  start_eal();
  constexpr uint32_t kMembers = 3;
  constexpr uint16_t kLanes = 2;
  drivers::verbs::model::UdModel m({});
  const drivers::verbs::VerbsCalls& calls = drivers::verbs::model::locked_calls(m.calls());
  rte_mempool* rx = rte_pktmbuf_pool_create("vd_rx", 4095, 0, 0, RTE_PKTMBUF_HEADROOM + 4096 + 64, SOCKET_ID_ANY);
  rte_mempool* hello = rte_pktmbuf_pool_create("vd_hello", 1023, 0, 0, RTE_PKTMBUF_HEADROOM + 256, SOCKET_ID_ANY);
  ASSERT_TRUE(rx && hello);
  GroupSpec spec;
  spec.name = "verbs_discovery";
  spec.id = 77;
  spec.bootstrap = "discovery";
  spec.lanes = kLanes;
  spec.bootstrap_timeout_ms = 20000;
  std::vector<std::unique_ptr<VerbsPort>> ports;
  for (uint32_t r = 0; r < kMembers; ++r) {
    VerbsPort::Options o;
    o.device = m.add_device();
    o.lanes = kLanes;
    o.rx_pool = rx;
    o.calls = &calls;
    o.rq_depth = 64;
    o.sq_depth = 64;
    ports.push_back(std::make_unique<VerbsPort>(o));
    MemberSpec ms;
    ms.rank = r;
    ms.lanes.assign(kLanes, "verbs:" + o.device + ":1");
    spec.members.push_back(ms);
  }
  std::vector<engine::bootstrap::EndpointTable> tables(kMembers);
  std::vector<std::string> errors(kMembers);
  std::vector<std::thread> threads;
  engine::bootstrap::DiscoveryOptions fast;
  fast.interval_ns = 1'000'000;
  for (uint32_t r = 0; r < kMembers; ++r)
    threads.emplace_back([&, r] {
      try {
        engine::bootstrap::Endpoint mine;
        mine.rank = r;
        mine.lanes.assign(kLanes, ports[r]->address());
        mine.incarnation = 1000 + r;
        tables[r] = engine::bootstrap::make_wire_discovery(spec, *ports[r], hello, fast)->exchange(mine);
        for (auto& e : tables[r].members)
          if (std::string why = engine::merge_verbs_lanes(&e.lanes); !why.empty()) errors[r] = why;
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (uint32_t r = 0; r < kMembers; ++r) {
    ASSERT_EQ(errors[r], "") << "member " << r;
    EXPECT_EQ(tables[r].epoch, tables[0].epoch);
    for (uint32_t p = 0; p < kMembers; ++p)
      for (uint16_t l = 0; l < kLanes; ++l)
        EXPECT_EQ(tables[r].members[p].lanes[l], ports[p]->address()) << "member " << r << " sees " << p;
  }
  // Hellos went by multicast (the hello group, joined and left again).
  EXPECT_GT(m.counters().copies_delivered, m.counters().datagrams_sent);
  ports.clear();
  EXPECT_EQ(m.live_objects(), 0u);
  rte_mempool_free(rx);
  rte_mempool_free(hello);
}

}  // namespace
}  // namespace lanecast::test
