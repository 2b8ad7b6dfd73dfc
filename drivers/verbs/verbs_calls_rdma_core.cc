// The seam bound to rdma-core: libibverbs and librdmacm. Plain functions
// where verbs.h has static inline functions or macros (the datapath calls
// go straight to the provider's function table, as they would inline).
#include <poll.h>

#include "drivers/verbs/verbs_calls.h"

namespace lanecast::drivers::verbs {

namespace {

int query_port(ibv_context* c, uint8_t port, ibv_port_attr* a) { return ibv_query_port(c, port, a); }
int query_gid_ex(ibv_context* c, uint32_t port, uint32_t index, ibv_gid_entry* e) {
  return ibv_query_gid_ex(c, port, index, e, 0);
}
ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t len, int access) { return ibv_reg_mr(pd, addr, len, access); }
ibv_cq* create_cq(ibv_context* c, int entries, ibv_comp_channel* ch) { return ibv_create_cq(c, entries, nullptr, ch, 0); }
int req_notify_cq(ibv_cq* cq, int solicited_only) { return ibv_req_notify_cq(cq, solicited_only); }
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) { return ibv_post_send(qp, wr, bad); }
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) { return ibv_post_recv(qp, wr, bad); }
int poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return ibv_poll_cq(cq, n, wc); }
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) { return ibv_attach_mcast(qp, gid, lid); }
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid) { return ibv_detach_mcast(qp, gid, lid); }
int wait_cm_event(rdma_event_channel* ch, int timeout_ms) {
  pollfd p{ch->fd, POLLIN, 0};
  const int r = ::poll(&p, 1, timeout_ms);
  return r < 0 ? -1 : (r > 0 ? 1 : 0);
}

}  // namespace

const VerbsCalls& rdma_core_calls() {
  static const VerbsCalls calls{
      "rdma-core",
      ibv_get_device_list,
      ibv_free_device_list,
      ibv_get_device_name,
      ibv_open_device,
      ibv_close_device,
      ibv_query_device,
      query_port,
      query_gid_ex,
      ibv_alloc_pd,
      ibv_dealloc_pd,
      reg_mr,
      ibv_dereg_mr,
      create_cq,
      ibv_destroy_cq,
      ibv_create_qp,
      ibv_modify_qp,
      ibv_destroy_qp,
      ibv_create_ah,
      ibv_destroy_ah,
      attach_mcast,
      detach_mcast,
      ibv_create_comp_channel,
      ibv_destroy_comp_channel,
      req_notify_cq,
      ibv_get_cq_event,
      ibv_ack_cq_events,
      post_send,
      post_recv,
      poll_cq,
      rdma_create_event_channel,
      rdma_destroy_event_channel,
      rdma_create_id,
      rdma_destroy_id,
      rdma_bind_addr,
      rdma_join_multicast,
      rdma_leave_multicast,
      wait_cm_event,
      rdma_get_cm_event,
      rdma_ack_cm_event,
  };
  return calls;
}

}  // namespace lanecast::drivers::verbs
