// Starts DPDK once per test binary, without hugepages or PCI devices.
#pragma once

#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include "engine/runtime/eal.h"

namespace lanecast::test {

inline void start_eal() {
  engine::EalOptions o;
  o.memory_mb = 512;
  o.polling_cores = 2;
  engine::eal_start(o);
}

// A small pool for hand-built frames.
inline rte_mempool* test_pool(const char* name, uint32_t n = 4095, uint16_t room = 2048 + RTE_PKTMBUF_HEADROOM) {
  start_eal();
  rte_mempool* p = rte_mempool_lookup(name);
  if (p == nullptr) p = rte_pktmbuf_pool_create(name, n, 0, 0, room, SOCKET_ID_ANY);
  return p;
}

}  // namespace lanecast::test
