// The seam between the verbs port and the verbs library: every call the port
// makes into libibverbs and librdmacm goes through one table of functions, as
// DPDK's mlx5 driver calls verbs through its "glue" table. The same driver
// code then runs against rdma-core (libibverbs_calls(), verbs_calls_rdma_core.cc)
// or against a test double: tests/verbs/ud_model.h, an in-process model of
// unreliable-datagram semantics that proves the driver's logic, not that it
// works on hardware.
//
// Types are rdma-core's own (<infiniband/verbs.h>, <rdma/rdma_cma.h>): a
// double allocates the structs it hands out and fills the fields a caller
// reads (qp->qp_num, cq->context, channel->fd, ...). Return conventions are
// the library's: a pointer or 0 on success; nullptr with errno set (open,
// alloc, reg, create_*), a positive errno value (query_*, modify_qp,
// destroy_*, dealloc_pd, dereg_mr, attach/detach, post_*), a negative count
// (poll_cq) or -1 with errno set (librdmacm's int calls) on failure.
// Several entries are static inline functions or macros in verbs.h
// (ibv_post_send, ibv_poll_cq, ibv_query_port, ibv_reg_mr, ibv_query_gid_ex):
// the rdma-core table wraps them in plain functions.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

namespace lanecast::drivers::verbs {

struct VerbsCalls {
  const char* name;  // "rdma-core", or the double's name: printed by the port

  // Devices.
  ibv_device** (*get_device_list)(int* count);
  void (*free_device_list)(ibv_device** list);
  const char* (*get_device_name)(ibv_device* device);
  ibv_context* (*open_device)(ibv_device* device);
  int (*close_device)(ibv_context* context);
  int (*query_device)(ibv_context* context, ibv_device_attr* attr);
  int (*query_port)(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  int (*query_gid_ex)(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry);

  // Protection domain, memory registration, completion queues, queue pairs.
  ibv_pd* (*alloc_pd)(ibv_context* context);
  int (*dealloc_pd)(ibv_pd* pd);
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, size_t length, int access);
  int (*dereg_mr)(ibv_mr* mr);
  ibv_cq* (*create_cq)(ibv_context* context, int entries, ibv_comp_channel* channel);  // channel may be null
  int (*destroy_cq)(ibv_cq* cq);
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr);
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int (*destroy_qp)(ibv_qp* qp);
  ibv_ah* (*create_ah)(ibv_pd* pd, ibv_ah_attr* attr);
  int (*destroy_ah)(ibv_ah* ah);
  int (*attach_mcast)(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
  int (*detach_mcast)(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);

  // Completion events: a sleeping core wakes when its receive CQ gets a
  // completion (the channel's descriptor turns readable; O_NONBLOCK set by
  // the port, so get_cq_event fails with EAGAIN when none is queued).
  ibv_comp_channel* (*create_comp_channel)(ibv_context* context);
  int (*destroy_comp_channel)(ibv_comp_channel* channel);
  int (*req_notify_cq)(ibv_cq* cq, int solicited_only);
  int (*get_cq_event)(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context);
  void (*ack_cq_events)(ibv_cq* cq, unsigned int events);

  // Datapath.
  int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
  int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
  int (*poll_cq)(ibv_cq* cq, int entries, ibv_wc* wc);

  // Multicast membership through the subnet administrator (librdmacm).
  rdma_event_channel* (*create_event_channel)();
  void (*destroy_event_channel)(rdma_event_channel* channel);
  int (*create_id)(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps);
  int (*destroy_id)(rdma_cm_id* id);
  int (*bind_addr)(rdma_cm_id* id, sockaddr* addr);
  int (*join_multicast)(rdma_cm_id* id, sockaddr* addr, void* context);
  int (*leave_multicast)(rdma_cm_id* id, sockaddr* addr);
  // Waits up to timeout_ms for an event on the channel: 1 ready, 0 timed
  // out, -1 error (errno). rdma_get_cm_event() itself blocks forever.
  int (*wait_cm_event)(rdma_event_channel* channel, int timeout_ms);
  int (*get_cm_event)(rdma_event_channel* channel, rdma_cm_event** event);
  int (*ack_cm_event)(rdma_cm_event* event);
};

// rdma-core's libibverbs and librdmacm (verbs_calls_rdma_core.cc).
const VerbsCalls& rdma_core_calls();

}  // namespace lanecast::drivers::verbs
