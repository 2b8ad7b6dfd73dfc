// FrameBuilder: set-up, and the copy a port without chains needs.
#include "engine/node/frame_builder.h"

#include <rte_mbuf.h>

#include <cstring>

namespace lanecast::engine {

FrameBuilder::FrameBuilder(drivers::Port& port, rte_mempool* header_pool, rte_mempool* payload_pool,
                           wire::Origin origin, bool sealed, Counters counters)
    : port_(port),
      header_pool_(header_pool),
      payload_pool_(payload_pool),
      origin_(origin),
      link_bytes_(port.link_header_bytes()),
      chained_(port.caps().tx_chained),
      counters_(counters) {
  if (rte_pktmbuf_priv_flags(header_pool) & RTE_PKTMBUF_POOL_F_PINNED_EXT_BUF) header_ol_flags_ = RTE_MBUF_F_EXTERNAL;
  if (sealed) {
    seal_flag_ = wire::kFlagSealed;
    hdr_data_ += wire::seal_bytes(wire::FrameType::Data);
    hdr_ack_ += wire::seal_bytes(wire::FrameType::Ack);
    hdr_failed_ += wire::seal_bytes(wire::FrameType::Failed);
  }
}

uint64_t FrameBuilder::header_rearm() {
  rte_mbuf m{};
  m.data_off = RTE_PKTMBUF_HEADROOM;
  rte_mbuf_refcnt_set(&m, 1);
  m.nb_segs = 1;
  m.port = RTE_MBUF_PORT_INVALID;
  uint64_t rearm;
  std::memcpy(&rearm, &m.rearm_data, sizeof rearm);
  return rearm;
}

// A port that cannot transmit chains gets one buffer holding header and
// payload: a copy, counted (tx_flatten_bytes), so the zero-copy promise is
// visibly off on such a port.
rte_mbuf* FrameBuilder::flatten(rte_mbuf* chained) {
  rte_mbuf* flat = rte_pktmbuf_alloc(payload_pool_);
  void* dst = flat == nullptr ? nullptr : rte_pktmbuf_append(flat, static_cast<uint16_t>(chained->pkt_len));
  if (dst == nullptr) {
    if (flat != nullptr) rte_pktmbuf_free(flat);
    rte_pktmbuf_free(chained);
    counters_.tx_alloc_failures.add();
    return nullptr;
  }
  uint8_t* at = static_cast<uint8_t*>(dst);
  for (const rte_mbuf* s = chained; s != nullptr; s = s->next) {
    std::memcpy(at, rte_pktmbuf_mtod(s, const void*), s->data_len);
    at += s->data_len;
  }
  counters_.tx_flatten_bytes.add(chained->pkt_len - chained->data_len);
  rte_pktmbuf_free(chained);
  return flat;
}

}  // namespace lanecast::engine
