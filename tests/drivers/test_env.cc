#include "tests/drivers/test_env.h"

#include <gtest/gtest.h>
#include <rte_eal.h>
#include <rte_errno.h>

#include <cstdio>
#include <cstdlib>

namespace lanecast::drivers::test {
namespace {

rte_mempool* g_pool = nullptr;

class Eal : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* args[] = {"drivers_test", "-l",           "0",  "--no-huge",      "-m", "256", "--no-pci",
                          "--no-shconf",  "--no-telemetry", "--log-level=error"};
    if (rte_eal_init(static_cast<int>(std::size(args)), const_cast<char**>(args)) < 0) {
      std::fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
      std::abort();
    }
    g_pool = rte_pktmbuf_pool_create("drv_test_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (g_pool == nullptr) {
      std::fprintf(stderr, "mempool: %s\n", rte_strerror(rte_errno));
      std::abort();
    }
  }
  void TearDown() override {
    rte_mempool_free(g_pool);
    g_pool = nullptr;
    rte_eal_cleanup();
  }
};

[[maybe_unused]] ::testing::Environment* const g_env = ::testing::AddGlobalTestEnvironment(new Eal);

}  // namespace

rte_mempool* pool() { return g_pool; }

}  // namespace lanecast::drivers::test
