// The UD model itself (tests/verbs/ud_model.h), through the table's function
// pointers as the verbs port calls them: each semantic point of the header
// has a test here. These prove the model does what it says, not that
// hardware does it.
#include "tests/verbs/ud_model.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <infiniband/ib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanecast::drivers::verbs::model {
namespace {

constexpr uint32_t kQkey = 0x1234567;
constexpr size_t kSendArea = 512 * 1024;  // a Host's buffer: receives below, sends from here

ibv_device* device_at(const VerbsCalls& v, int index) {
  int n = 0;
  ibv_device** list = v.get_device_list(&n);
  ibv_device* d = index < n ? list[index] : nullptr;
  v.free_device_list(list);
  return d;
}

ibv_qp_cap caps(uint32_t send = 64, uint32_t recv = 64, uint32_t sge = 2, uint32_t inline_data = 0) {
  ibv_qp_cap c{};
  c.max_send_wr = send;
  c.max_recv_wr = recv;
  c.max_send_sge = c.max_recv_sge = sge;
  c.max_inline_data = inline_data;
  return c;
}

// One UD QP on one device, with one CQ for both queues and one registered buffer.
struct Host {
  Host(const VerbsCalls& calls, int device, ibv_qp_cap cap = caps(), int cq_entries = 1024, int sig_all = 0,
       bool events = false)
      : v(calls), buf(1 << 20) {
    ctx = v.open_device(device_at(v, device));
    pd = v.alloc_pd(ctx);
    if (events) channel = v.create_comp_channel(ctx);
    cq = v.create_cq(ctx, cq_entries, channel);
    mr = v.reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
    ibv_qp_init_attr init{};
    init.send_cq = init.recv_cq = cq;
    init.cap = cap;
    init.qp_type = IBV_QPT_UD;
    init.sq_sig_all = sig_all;
    qp = v.create_qp(pd, &init);
    if (!qp) throw std::runtime_error("create_qp failed");
  }
  uint32_t qpn() const { return qp->qp_num; }

  int modify(ibv_qp_state state, int mask, uint32_t qkey = kQkey) {
    ibv_qp_attr a{};
    a.qp_state = state;
    a.qkey = qkey;
    a.port_num = 1;
    return v.modify_qp(qp, &a, mask);
  }
  void up(uint32_t qkey = kQkey) {
    ASSERT_EQ(modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, qkey), 0);
    ASSERT_EQ(modify(IBV_QPS_RTR, IBV_QP_STATE), 0);
    ASSERT_EQ(modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }
  int recv(uint64_t wr_id, size_t offset, uint32_t len, uint32_t lkey = 0) {
    ibv_sge s{reinterpret_cast<uintptr_t>(buf.data() + offset), len, lkey ? lkey : mr->lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &s;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return v.post_recv(qp, &wr, &bad);
  }
  int send(ibv_ah* ah, uint32_t remote_qpn, uint32_t len, int flags = IBV_SEND_SIGNALED, uint32_t qkey = kQkey,
           uint64_t wr_id = 7, size_t offset = kSendArea) {
    ibv_sge s{reinterpret_cast<uintptr_t>(buf.data() + offset), len, mr->lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &s;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = static_cast<unsigned>(flags);
    wr.wr.ud = {ah, remote_qpn, qkey};
    ibv_send_wr* bad = nullptr;
    return v.post_send(qp, &wr, &bad);
  }
  std::vector<ibv_wc> poll(int max = 64) {
    std::vector<ibv_wc> wc(static_cast<size_t>(max));
    int n = v.poll_cq(cq, max, wc.data());
    wc.resize(n < 0 ? 0 : static_cast<size_t>(n));
    return wc;
  }
  ibv_ah* ah_to_lid(uint16_t lid) {
    ibv_ah_attr a{};
    a.dlid = lid;
    a.port_num = 1;
    return v.create_ah(pd, &a);
  }
  ibv_ah* ah_global(const ibv_gid& dgid, uint8_t sgid_index, uint16_t dlid = 0, uint8_t hop_limit = 1) {
    ibv_ah_attr a{};
    a.is_global = 1;
    a.grh.dgid = dgid;
    a.grh.sgid_index = sgid_index;
    a.grh.hop_limit = hop_limit;
    a.dlid = dlid;
    a.port_num = 1;
    return v.create_ah(pd, &a);
  }
  void fill(uint32_t len, uint8_t seed) {
    for (uint32_t i = 0; i < len; ++i) buf[kSendArea + i] = static_cast<uint8_t>(seed + i * 7);
  }
  void close(std::vector<ibv_ah*> ahs = {}) {
    for (ibv_ah* ah : ahs) EXPECT_EQ(v.destroy_ah(ah), 0);
    EXPECT_EQ(v.destroy_qp(qp), 0);
    EXPECT_EQ(v.dereg_mr(mr), 0);
    EXPECT_EQ(v.destroy_cq(cq), 0);
    if (channel) {
      EXPECT_EQ(v.destroy_comp_channel(channel), 0);
    }
    EXPECT_EQ(v.dealloc_pd(pd), 0);
    EXPECT_EQ(v.close_device(ctx), 0);
  }

  const VerbsCalls& v;
  std::vector<uint8_t> buf;
  ibv_comp_channel* channel = nullptr;
  ibv_context* ctx;
  ibv_pd* pd;
  ibv_cq* cq;
  ibv_mr* mr;
  ibv_qp* qp;
};

// Traced, so that every test also runs the trace's formatting of what it does.
UdModel::Options opts() {
  UdModel::Options o;
  o.trace = true;
  return o;
}

ibv_gid mgid(uint8_t last) {
  ibv_gid g{};
  g.raw[0] = 0xff;
  g.raw[1] = 0x12;
  g.raw[2] = 0x40;
  g.raw[3] = 0x1b;
  g.raw[15] = last;
  return g;
}

sockaddr_ib ib_address(const ibv_gid& gid) {
  sockaddr_ib a{};
  a.sib_family = AF_IB;
  std::memcpy(&a.sib_addr, gid.raw, 16);
  return a;
}

sockaddr_in ipv4_address(const char* text) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, text, &a.sin_addr);
  return a;
}

// Binds an id to the host's port and joins `group`: the join event, acked.
rdma_cm_event join(const VerbsCalls& v, rdma_event_channel* ch, rdma_cm_id** id, sockaddr* port, sockaddr* group) {
  EXPECT_EQ(v.create_id(ch, id, nullptr, RDMA_PS_UDP), 0);
  EXPECT_EQ(v.bind_addr(*id, port), 0);
  EXPECT_EQ(v.join_multicast(*id, group, reinterpret_cast<void*>(0x5eed)), 0);
  EXPECT_EQ(v.wait_cm_event(ch, 0), 1);
  rdma_cm_event* e = nullptr;
  EXPECT_EQ(v.get_cm_event(ch, &e), 0);
  rdma_cm_event copy = *e;
  EXPECT_EQ(v.ack_cm_event(e), 0);
  return copy;
}

TEST(UdModel, OnlyOneModelAtATimeAndCallsAfterItAreRefused) {
  const VerbsCalls* v = nullptr;
  {
    UdModel m(opts());
    EXPECT_THROW(UdModel second(opts()), std::logic_error);
    v = &m.calls();
    EXPECT_STREQ(v->name, "ud-model");
  }
  errno = 0;
  EXPECT_EQ(v->alloc_pd(nullptr), nullptr);
  EXPECT_EQ(errno, ENODEV);
  UdModel again(opts());  // the first one is gone
  EXPECT_EQ(again.live_objects(), 0u);
}

TEST(UdModel, DevicesListNamesAndIbPorts) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  EXPECT_EQ(m.add_device(), "model_0");
  EXPECT_EQ(m.add_device({false, IBV_MTU_2048}), "model_1");
  int n = -1;
  ibv_device** list = v.get_device_list(&n);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(list[2], nullptr);
  EXPECT_STREQ(v.get_device_name(list[1]), "model_1");
  ibv_context* ctx = v.open_device(list[1]);
  v.free_device_list(list);
  ASSERT_NE(ctx, nullptr);
  EXPECT_STREQ(v.get_device_name(ctx->device), "model_1");

  ibv_port_attr port{};
  ASSERT_EQ(v.query_port(ctx, 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.lid, 2);
  EXPECT_EQ(port.max_mtu, IBV_MTU_2048);
  EXPECT_EQ(port.active_mtu, IBV_MTU_2048);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_INFINIBAND);
  EXPECT_EQ(port.gid_tbl_len, 1);
  EXPECT_EQ(port.port_cap_flags, 0u);
  EXPECT_EQ(v.query_port(ctx, 2, &port), EINVAL);

  ibv_gid_entry e{};
  ASSERT_EQ(v.query_gid_ex(ctx, 1, 0, &e), 0);
  EXPECT_EQ(e.gid_type, IBV_GID_TYPE_IB);
  EXPECT_EQ(e.gid_index, 0u);
  EXPECT_EQ(e.port_num, 1u);
  const uint8_t expect[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x00, 0x02, 0xc9, 0x03, 0x00, 0x02, 0x02, 0x02};
  EXPECT_EQ(std::memcmp(e.gid.raw, expect, 16), 0);
  EXPECT_EQ(std::memcmp(m.gid_of("model_1").raw, expect, 16), 0);
  EXPECT_NE(std::memcmp(m.gid_of("model_0").raw, expect, 16), 0);  // per-device GUIDs
  EXPECT_EQ(v.query_gid_ex(ctx, 1, 1, &e), EINVAL);
  EXPECT_EQ(v.query_gid_ex(ctx, 2, 0, &e), EINVAL);

  ibv_device_attr dev{};
  ASSERT_EQ(v.query_device(ctx, &dev), 0);
  EXPECT_EQ(dev.max_qp_wr, 4096);
  EXPECT_EQ(dev.max_sge, 8);
  EXPECT_EQ(dev.max_cqe, 65536);
  EXPECT_EQ(dev.max_mcast_grp, 1024);
  EXPECT_EQ(dev.max_mcast_qp_attach, 8);
  EXPECT_EQ(dev.max_total_mcast_qp_attach, 8192);
  EXPECT_EQ(dev.phys_port_cnt, 1);
  EXPECT_EQ(dev.max_qp, 1 << 16);
  EXPECT_EQ(m.lid_of("model_0"), 1);
  EXPECT_EQ(v.close_device(ctx), 0);
  EXPECT_EQ(v.close_device(ctx), EINVAL);
  EXPECT_EQ(m.live_objects(), 0u);
}

TEST(UdModel, RocePortsHaveAV1AndAnIpv4MappedV2Gid) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device({true, IBV_MTU_1024});
  ibv_context* ctx = v.open_device(device_at(v, 1));
  ibv_port_attr port{};
  ASSERT_EQ(v.query_port(ctx, 1, &port), 0);
  EXPECT_EQ(port.lid, 0);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_EQ(port.gid_tbl_len, 2);
  ibv_gid_entry e{};
  ASSERT_EQ(v.query_gid_ex(ctx, 1, 0, &e), 0);
  EXPECT_EQ(e.gid_type, IBV_GID_TYPE_ROCE_V1);
  EXPECT_EQ(e.gid.raw[0], 0xfe);
  EXPECT_EQ(e.gid.raw[1], 0x80);
  ASSERT_EQ(v.query_gid_ex(ctx, 1, 1, &e), 0);
  EXPECT_EQ(e.gid_type, IBV_GID_TYPE_ROCE_V2);
  EXPECT_EQ(e.ndev_ifindex, 0u);
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 77, 0, 2};
  EXPECT_EQ(std::memcmp(e.gid.raw, mapped, 16), 0);
  EXPECT_EQ(v.query_gid_ex(ctx, 1, 2, &e), EINVAL);
  EXPECT_EQ(v.close_device(ctx), 0);
}

TEST(UdModel, MemoryRegionsHaveUniqueKeysAndAreCheckedWhenUsed) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0);
  alignas(64) static uint8_t other[4096];
  ibv_mr* mr2 = v.reg_mr(a.pd, other, sizeof other, 0);
  ASSERT_NE(mr2, nullptr);
  EXPECT_NE(mr2->lkey, a.mr->lkey);
  EXPECT_EQ(mr2->rkey, mr2->lkey);
  EXPECT_EQ(mr2->addr, other);
  EXPECT_EQ(mr2->length, sizeof other);
  EXPECT_EQ(mr2->pd, a.pd);
  EXPECT_EQ(mr2->context, a.ctx);
  EXPECT_EQ(v.dereg_mr(mr2), 0);
  EXPECT_EQ(v.dereg_mr(mr2), EINVAL);

  // A send whose sge lies past its MR: LOC_PROT_ERR, and the QP goes to ERR.
  a.up();
  ibv_ah* ah = a.ah_to_lid(1);
  ibv_sge s{reinterpret_cast<uintptr_t>(a.buf.data() + a.buf.size() - 8), 64, a.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud = {ah, a.qpn(), kQkey};
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(v.post_send(a.qp, &wr, &bad), 0);  // posted: the adapter finds the error
  auto wc = a.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(a.qp->state, IBV_QPS_ERR);
  EXPECT_EQ(m.counters().prot_errors, 1u);
  a.close({ah});
}

TEST(UdModel, CompletionQueuesHoldTheirEntriesInOrderAndOverrun) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  ibv_context* ctx = v.open_device(device_at(v, 0));
  errno = 0;
  EXPECT_EQ(v.create_cq(ctx, 65537, nullptr), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(v.close_device(ctx), 0);

  Host a(v, 0, caps(), 3);
  EXPECT_EQ(a.cq->cqe, 3);
  EXPECT_EQ(a.cq->context, a.ctx);
  a.up();
  ibv_ah* ah = a.ah_to_lid(1);
  for (uint64_t i = 0; i < 2; ++i) EXPECT_EQ(a.send(ah, 0xabcdef, 8, IBV_SEND_SIGNALED, kQkey, 100 + i), 0);
  auto wc = a.poll(1);  // at most what was asked, oldest first
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 100u);
  EXPECT_EQ(wc[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(wc[0].qp_num, a.qpn());
  wc = a.poll(8);
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 101u);
  for (uint64_t i = 0; i < 4; ++i) a.send(ah, 0xabcdef, 8, IBV_SEND_SIGNALED, kQkey, i);  // the 4th overruns
  EXPECT_EQ(m.counters().cq_overruns, 1u);
  ibv_wc one;
  EXPECT_EQ(v.poll_cq(a.cq, 1, &one), -1);
  EXPECT_EQ(v.poll_cq(a.cq, 1, &one), -1);
  a.close({ah});
}

TEST(UdModel, QueuePairsAreUdWithinTheDeviceLimits) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0, caps(256, 512, 2, 16));
  EXPECT_EQ(a.qp->state, IBV_QPS_RESET);
  EXPECT_EQ(a.qp->qp_type, IBV_QPT_UD);
  EXPECT_EQ(a.qp->send_cq, a.cq);
  EXPECT_EQ(a.qp->pd, a.pd);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = a.cq;
  init.qp_type = IBV_QPT_UD;
  init.cap = caps(1, 1, 1, 32);
  ibv_qp* b = v.create_qp(a.pd, &init);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(init.cap.max_inline_data, 64u);  // written back: the model's size
  EXPECT_LE(b->qp_num, 0xFFFFFFu);
  EXPECT_NE(b->qp_num, a.qpn() + 1);  // not consecutive
  EXPECT_NE(b->qp_num, a.qpn());
  for (auto [cap, type] : {std::pair{caps(4097), IBV_QPT_UD},
                           {caps(1, 1, 9), IBV_QPT_UD},
                           {caps(1, 1, 1, 65), IBV_QPT_UD},
                           {caps(), IBV_QPT_RC}}) {
    init.cap = cap;
    init.qp_type = type;
    errno = 0;
    EXPECT_EQ(v.create_qp(a.pd, &init), nullptr);
    EXPECT_EQ(errno, EINVAL);
  }
  init.qp_type = IBV_QPT_UD;
  init.cap = caps();
  init.send_cq = nullptr;
  EXPECT_EQ(v.create_qp(a.pd, &init), nullptr);
  EXPECT_EQ(v.destroy_qp(b), 0);
  EXPECT_EQ(v.destroy_qp(b), EINVAL);
  a.close();
}

TEST(UdModel, QueuePairStatesFollowTheUdTransitions) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0);
  const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  EXPECT_EQ(a.modify(IBV_QPS_RTR, IBV_QP_STATE), EINVAL);                 // RESET -> RTR
  EXPECT_EQ(a.modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PORT), EINVAL);  // attributes missing
  EXPECT_EQ(a.modify(IBV_QPS_INIT, init | IBV_QP_SQ_PSN), EINVAL);        // one too many
  ibv_qp_attr bad_port{};
  bad_port.qp_state = IBV_QPS_INIT;
  bad_port.port_num = 2;
  EXPECT_EQ(v.modify_qp(a.qp, &bad_port, init), EINVAL);
  EXPECT_EQ(a.modify(IBV_QPS_INIT, init), 0);
  EXPECT_EQ(a.qp->state, IBV_QPS_INIT);
  EXPECT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);  // INIT -> RTS
  EXPECT_EQ(a.modify(IBV_QPS_RTR, IBV_QP_STATE), 0);
  EXPECT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_STATE), EINVAL);  // no sq_psn
  EXPECT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  EXPECT_EQ(a.qp->state, IBV_QPS_RTS);

  // RTS -> RTS changes the Q_Key: datagrams with the old one are dropped.
  Host b(v, 0);
  b.up();
  ibv_ah* ah = b.ah_to_lid(1);
  EXPECT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_QKEY, 0x777), 0);
  a.recv(1, 0, 4096);
  b.send(ah, a.qpn(), 16, 0, kQkey);
  EXPECT_EQ(m.qp_counts(a.qpn()).qkey_drops, 1u);
  b.send(ah, a.qpn(), 16, 0, 0x777);
  EXPECT_EQ(m.counters().copies_delivered, 1u);

  EXPECT_EQ(a.modify(IBV_QPS_ERR, IBV_QP_STATE | IBV_QP_QKEY), EINVAL);  // to ERR: the state alone
  EXPECT_EQ(a.modify(IBV_QPS_ERR, IBV_QP_STATE), 0);
  EXPECT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), EINVAL);
  EXPECT_EQ(a.modify(IBV_QPS_RESET, IBV_QP_STATE), 0);
  EXPECT_EQ(a.qp->state, IBV_QPS_RESET);
  a.close();
  b.close({ah});
}

TEST(UdModel, ErrFlushesReceivesAndUnretiredSendsResetDiscardsThem) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0);
  a.up();
  ibv_ah* ah = a.ah_to_lid(1);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(a.recv(10 + i, i * 4096, 4096), 0);
  a.send(ah, 0xabcdef, 8, IBV_SEND_SIGNALED, kQkey, 20);  // completed: not flushed
  a.send(ah, 0xabcdef, 8, 0, kQkey, 21);                  // unsignaled, after it: flushed
  a.send(ah, 0xabcdef, 8, 0, kQkey, 22);
  ASSERT_EQ(a.poll().size(), 1u);
  ASSERT_EQ(a.modify(IBV_QPS_ERR, IBV_QP_STATE), 0);
  auto wc = a.poll();
  ASSERT_EQ(wc.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(wc[i].wr_id, 10u + i);
    EXPECT_EQ(wc[i].status, IBV_WC_WR_FLUSH_ERR);
    EXPECT_EQ(wc[i].opcode, IBV_WC_RECV);
  }
  EXPECT_EQ(wc[3].wr_id, 21u);
  EXPECT_EQ(wc[4].wr_id, 22u);
  EXPECT_EQ(wc[4].status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(m.qp_counts(a.qpn()).completed_recvs, 3u);
  EXPECT_EQ(m.qp_counts(a.qpn()).completed_sends, 3u);

  // RESET: what was posted is forgotten, without completions.
  ASSERT_EQ(a.modify(IBV_QPS_RESET, IBV_QP_STATE), 0);
  a.up();
  a.recv(30, 0, 4096);
  a.send(ah, 0xabcdef, 8, 0, kQkey, 31);
  ASSERT_EQ(a.modify(IBV_QPS_RESET, IBV_QP_STATE), 0);
  EXPECT_TRUE(a.poll().empty());
  a.close({ah});
}

TEST(UdModel, PostRecvChecksStateSgesAndQueueRoom) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0, caps(4, 2, 1));
  ibv_sge s[2] = {{reinterpret_cast<uintptr_t>(a.buf.data()), 64, a.mr->lkey},
                  {reinterpret_cast<uintptr_t>(a.buf.data() + 64), 64, a.mr->lkey}};
  ibv_recv_wr wr[3] = {};
  for (int i = 0; i < 3; ++i) {
    wr[i].wr_id = static_cast<uint64_t>(i);
    wr[i].sg_list = s;
    wr[i].num_sge = 1;
    wr[i].next = i < 2 ? &wr[i + 1] : nullptr;
  }
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(v.post_recv(a.qp, wr, &bad), EINVAL);  // RESET
  EXPECT_EQ(bad, &wr[0]);
  ASSERT_EQ(a.modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  wr[1].num_sge = 2;
  EXPECT_EQ(v.post_recv(a.qp, wr, &bad), EINVAL);  // wr 1 has more sges than max_recv_sge
  EXPECT_EQ(bad, &wr[1]);
  EXPECT_EQ(m.qp_counts(a.qpn()).posted_recvs, 1u);  // wr 0 stays posted
  wr[1].num_sge = 1;
  EXPECT_EQ(v.post_recv(a.qp, wr, &bad), ENOMEM);  // room for one more
  EXPECT_EQ(bad, &wr[1]);
  EXPECT_EQ(m.qp_counts(a.qpn()).posted_recvs, 2u);
  a.close();
}

TEST(UdModel, PostSendChecksStateOpcodeSgesInlineAndAh) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0, caps(8, 8, 1, 64));
  Host b(v, 0);
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  EXPECT_EQ(a.send(ah, b.qpn(), 8), EINVAL);  // RESET
  ASSERT_EQ(a.modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY), 0);
  ASSERT_EQ(a.modify(IBV_QPS_RTR, IBV_QP_STATE), 0);
  EXPECT_EQ(a.send(ah, b.qpn(), 8), EINVAL);  // RTR
  ASSERT_EQ(a.modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);

  alignas(64) static uint8_t unregistered[64];
  std::memset(unregistered, 0xab, sizeof unregistered);
  ibv_sge s{reinterpret_cast<uintptr_t>(unregistered), 64, 0xdead};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_INLINE;
  wr.wr.ud = {ah, b.qpn(), kQkey};
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(v.post_send(a.qp, &wr, &bad), EINVAL);  // not a UD opcode
  EXPECT_EQ(bad, &wr);
  wr.opcode = IBV_WR_SEND;
  wr.num_sge = 2;
  EXPECT_EQ(v.post_send(a.qp, &wr, &bad), EINVAL);  // over max_send_sge
  wr.num_sge = 1;
  s.length = 65;
  EXPECT_EQ(v.post_send(a.qp, &wr, &bad), EINVAL);  // over max_inline_data
  s.length = 64;
  ibv_ah* b_ah = b.ah_to_lid(1);
  wr.wr.ud.ah = b_ah;
  EXPECT_EQ(v.post_send(a.qp, &wr, &bad), EINVAL);  // an AH of another PD
  wr.wr.ud.ah = ah;
  // Inline: the bytes are taken from memory no MR covers, lkey unchecked.
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  ASSERT_EQ(v.post_send(a.qp, &wr, &bad), 0);
  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(std::memcmp(b.buf.data() + 40, unregistered, 64), 0);
  a.close({ah});
  b.close({b_ah});
}

TEST(UdModel, AddressHandlesNeedPortOneAGidOnRoceAndADlidWithoutGrh) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device({true, IBV_MTU_4096});
  Host ib(v, 0);
  Host roce(v, 1);
  ibv_ah_attr a{};
  a.port_num = 1;
  a.dlid = 5;
  errno = 0;
  EXPECT_EQ(v.create_ah(roce.pd, &a), nullptr);  // RoCE without a GRH
  EXPECT_EQ(errno, EINVAL);
  a.port_num = 2;
  EXPECT_EQ(v.create_ah(ib.pd, &a), nullptr);
  a.port_num = 1;
  a.dlid = 0;
  EXPECT_EQ(v.create_ah(ib.pd, &a), nullptr);  // IB, no GRH, no dlid
  a.is_global = 1;
  a.grh.sgid_index = 1;
  EXPECT_EQ(v.create_ah(ib.pd, &a), nullptr);  // one GID on IB
  EXPECT_EQ(errno, EINVAL);
  ibv_ah* ok = v.create_ah(roce.pd, &a);  // index 1 is RoCE's v2 GID
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->pd, roce.pd);
  EXPECT_EQ(ok->context, roce.ctx);
  EXPECT_EQ(v.destroy_ah(ok), 0);
  EXPECT_EQ(v.destroy_ah(ok), EINVAL);
  ib.close();
  roce.close();
}

TEST(UdModel, UnicastScattersThePayloadAfterTheGrhAreaAndCompletes) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device();
  Host a(v, 0), b(v, 1);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(m.lid_of("model_1"));
  // The receive in two pieces: 30 bytes, then the rest (the GRH area spans both).
  std::memset(b.buf.data(), 0xEE, 8192);
  ibv_sge s[2] = {{reinterpret_cast<uintptr_t>(b.buf.data()), 30, b.mr->lkey},
                  {reinterpret_cast<uintptr_t>(b.buf.data() + 4096), 4096, b.mr->lkey}};
  ibv_recv_wr rwr{};
  rwr.wr_id = 99;
  rwr.sg_list = s;
  rwr.num_sge = 2;
  ibv_recv_wr* rbad = nullptr;
  ASSERT_EQ(v.post_recv(b.qp, &rwr, &rbad), 0);
  a.fill(1078, 3);
  ibv_sge ss{reinterpret_cast<uintptr_t>(a.buf.data() + kSendArea), 1078, a.mr->lkey};
  ibv_send_wr wr{};
  wr.wr_id = 5;
  wr.sg_list = &ss;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND_WITH_IMM;
  wr.imm_data = htonl(0xfeed);
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.ud = {ah, b.qpn(), kQkey};
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(v.post_send(a.qp, &wr, &bad), 0);

  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 99u);
  EXPECT_EQ(wc[0].status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc[0].opcode, IBV_WC_RECV);
  EXPECT_EQ(wc[0].byte_len, 40u + 1078);
  EXPECT_EQ(wc[0].qp_num, b.qpn());
  EXPECT_EQ(wc[0].src_qp, a.qpn());
  EXPECT_EQ(wc[0].slid, m.lid_of("model_0"));
  EXPECT_EQ(wc[0].pkey_index, 0);
  EXPECT_EQ(wc[0].wc_flags, static_cast<unsigned>(IBV_WC_WITH_IMM));  // no GRH
  EXPECT_EQ(ntohl(wc[0].imm_data), 0xfeedu);
  // Not global: the 40 bytes of the GRH area as they were; the payload at 40.
  for (int i = 0; i < 30; ++i) ASSERT_EQ(b.buf[i], 0xEE);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(b.buf[4096 + i], 0xEE);
  EXPECT_EQ(std::memcmp(b.buf.data() + 4096 + 10, a.buf.data() + kSendArea, 1078), 0);
  EXPECT_EQ(b.buf[4096 + 10 + 1078], 0xEE);
  wc = a.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(wc[0].wr_id, 5u);
  EXPECT_EQ(m.counters().datagrams_sent, 1u);
  EXPECT_EQ(m.counters().copies_delivered, 1u);
  a.close({ah});
  b.close();
}

TEST(UdModel, AGlobalIbSenderWritesAGrh) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device();
  Host a(v, 0), b(v, 1);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_global(m.gid_of("model_1"), 0, 0, 7);  // routed by the GID
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  a.fill(100, 1);
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);
  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_TRUE(wc[0].wc_flags & IBV_WC_GRH);
  const uint8_t* g = b.buf.data();
  EXPECT_EQ(g[0], 0x60);
  EXPECT_EQ((g[4] << 8) | g[5], 12 + 8 + 100 + 4);  // BTH, DETH, payload, ICRC
  EXPECT_EQ(g[6], 0x1B);
  EXPECT_EQ(g[7], 7);
  EXPECT_EQ(std::memcmp(g + 8, m.gid_of("model_0").raw, 16), 0);
  EXPECT_EQ(std::memcmp(g + 24, m.gid_of("model_1").raw, 16), 0);
  EXPECT_EQ(std::memcmp(g + 40, a.buf.data() + kSendArea, 100), 0);
  a.close({ah});
  b.close();
}

TEST(UdModel, RoceV2OverIpv4WritesAnIpv4HeaderInTheLast20BytesAndV1AGrh) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device({true, IBV_MTU_4096});
  m.add_device({true, IBV_MTU_4096});
  Host a(v, 0), b(v, 1);
  a.up();
  b.up();
  ibv_ah* v2 = a.ah_global(m.gid_of("model_1", 1), 1, 0, 64);
  std::memset(b.buf.data(), 0xEE, 4096);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  a.fill(200, 9);
  ASSERT_EQ(a.send(v2, b.qpn(), 200), 0);
  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].slid, 0);
  EXPECT_TRUE(wc[0].wc_flags & IBV_WC_GRH);
  const uint8_t* g = b.buf.data();
  for (int i = 0; i < 20; ++i) ASSERT_EQ(g[i], 0xEE) << i;  // left as they were
  EXPECT_EQ(g[20], 0x45);
  EXPECT_EQ((g[22] << 8) | g[23], 20 + 8 + 12 + 8 + 200 + 4);
  EXPECT_EQ(g[28], 64);  // TTL
  EXPECT_EQ(g[29], 17);  // UDP
  const uint8_t src[4] = {10, 77, 0, 1}, dst[4] = {10, 77, 0, 2};
  EXPECT_EQ(std::memcmp(g + 32, src, 4), 0);
  EXPECT_EQ(std::memcmp(g + 36, dst, 4), 0);
  uint32_t sum = 0;
  for (int i = 20; i < 40; i += 2) sum += (g[i] << 8) | g[i + 1];
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  EXPECT_EQ(sum, 0xFFFFu);  // a valid header checksum
  EXPECT_EQ(std::memcmp(g + 40, a.buf.data() + kSendArea, 200), 0);

  ibv_ah* v1 = a.ah_global(m.gid_of("model_1", 0), 0, 0, 1);
  ASSERT_EQ(b.recv(2, 0, 4096), 0);
  ASSERT_EQ(a.send(v1, b.qpn(), 200), 0);
  ASSERT_EQ(b.poll().size(), 1u);
  EXPECT_EQ(g[0], 0x60);
  EXPECT_EQ(g[6], 0x1B);
  EXPECT_EQ(std::memcmp(g + 8, m.gid_of("model_0", 0).raw, 16), 0);
  a.close({v2, v1});
  b.close();
}

TEST(UdModel, ADatagramWithNoReceivePostedIsDroppedAndCounted) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  ASSERT_EQ(a.send(ah, b.qpn(), 64), 0);  // nothing posted at b
  EXPECT_EQ(a.poll().size(), 1u);         // the sender completes all the same
  EXPECT_TRUE(b.poll().empty());
  EXPECT_EQ(m.qp_counts(b.qpn()).rnr_drops, 1u);
  EXPECT_EQ(m.counters().rnr_drops, 1u);
  EXPECT_EQ(m.counters().copies_delivered, 0u);
  a.close({ah});
  b.close();
}

TEST(UdModel, AWrongQkeyIsDroppedAndTheReceiveStaysPosted) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  a.up();
  b.up(0x11111111);
  ibv_ah* ah = a.ah_to_lid(1);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  ASSERT_EQ(a.send(ah, b.qpn(), 64, 0, 0x22222222), 0);
  EXPECT_TRUE(b.poll().empty());
  EXPECT_EQ(m.qp_counts(b.qpn()).qkey_drops, 1u);
  EXPECT_EQ(m.counters().qkey_drops, 1u);
  ASSERT_EQ(a.send(ah, b.qpn(), 64, 0, 0x11111111), 0);
  EXPECT_EQ(b.poll().size(), 1u);
  a.close({ah});
  b.close();
}

TEST(UdModel, ASendOverTheMtuFailsWithLocLenErrAndTheQpStaysInRts) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device({false, IBV_MTU_1024});
  Host a(v, 0), b(v, 0);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  ASSERT_EQ(a.send(ah, b.qpn(), 1025, 0), 0);  // unsignaled: errors complete anyway
  auto wc = a.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(a.qp->state, IBV_QPS_RTS);
  EXPECT_EQ(m.counters().mtu_errors, 1u);
  EXPECT_EQ(m.counters().datagrams_sent, 0u);
  EXPECT_TRUE(b.poll().empty());
  ASSERT_EQ(a.send(ah, b.qpn(), 1024), 0);  // exactly the MTU goes
  EXPECT_EQ(b.poll().size(), 1u);
  a.close({ah});
  b.close();
}

TEST(UdModel, AReceiveTooShortOrNotWritableCompletesInError) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  ASSERT_EQ(b.recv(1, 0, 40 + 99), 0);  // one byte short
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);
  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(m.qp_counts(b.qpn()).len_errors, 1u);
  EXPECT_EQ(b.qp->state, IBV_QPS_RTS);

  alignas(64) static uint8_t read_only[4096];
  ibv_mr* ro = v.reg_mr(b.pd, read_only, sizeof read_only, 0);  // no IBV_ACCESS_LOCAL_WRITE
  ibv_sge s{reinterpret_cast<uintptr_t>(read_only), sizeof read_only, ro->lkey};
  ibv_recv_wr rwr{};
  rwr.wr_id = 2;
  rwr.sg_list = &s;
  rwr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  ASSERT_EQ(v.post_recv(b.qp, &rwr, &bad), 0);
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);
  wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_EQ(wc[0].status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(m.counters().prot_errors, 1u);
  EXPECT_EQ(v.dereg_mr(ro), 0);
  a.close({ah});
  b.close();
}

TEST(UdModel, ADatagramToNoQpIsCountedAndIbNeverReachesRoce) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device({true, IBV_MTU_4096});
  Host a(v, 0), r(v, 1);
  a.up();
  r.up();
  ibv_ah* to_lid9 = a.ah_to_lid(9);
  ibv_ah* to_roce = a.ah_global(m.gid_of("model_1", 0), 0);
  ASSERT_EQ(r.recv(1, 0, 4096), 0);
  ASSERT_EQ(a.send(to_lid9, r.qpn(), 10), 0);
  ASSERT_EQ(a.send(to_roce, r.qpn(), 10), 0);
  ibv_ah* own = a.ah_to_lid(1);
  ASSERT_EQ(a.send(own, 0x123456, 10), 0);  // the right port, no such QP
  EXPECT_EQ(m.counters().no_such_qp, 3u);
  EXPECT_EQ(m.counters().datagrams_sent, 3u);
  EXPECT_TRUE(r.poll().empty());
  a.close({to_lid9, to_roce, own});
  r.close();
}

TEST(UdModel, UnsignaledSendsHoldTheirSlotsUntilALaterSignaledCompletionIsPolled) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0, caps(4, 4, 1));
  a.up();
  ibv_ah* ah = a.ah_to_lid(1);
  // A driver that never signals fills the queue.
  for (int i = 0; i < 4; ++i) ASSERT_EQ(a.send(ah, 0xabcdef, 8, 0), 0);
  EXPECT_EQ(a.send(ah, 0xabcdef, 8, IBV_SEND_SIGNALED), ENOMEM);
  EXPECT_EQ(m.qp_counts(a.qpn()).posted_sends, 4u);
  EXPECT_TRUE(a.poll().empty());

  Host b(v, 0, caps(4, 4, 1));
  b.up();
  ibv_ah* bh = b.ah_to_lid(1);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(b.send(bh, 0xabcdef, 8, 0), 0);
  ASSERT_EQ(b.send(bh, 0xabcdef, 8, IBV_SEND_SIGNALED, kQkey, 44), 0);
  ibv_send_wr* bad = nullptr;
  ibv_sge s{reinterpret_cast<uintptr_t>(b.buf.data() + kSendArea), 8, b.mr->lkey};
  ibv_send_wr wr{};
  wr.sg_list = &s;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.wr.ud = {bh, 0xabcdef, kQkey};
  EXPECT_EQ(v.post_send(b.qp, &wr, &bad), ENOMEM);  // completed, but not polled yet
  EXPECT_EQ(bad, &wr);
  auto wc = b.poll();
  ASSERT_EQ(wc.size(), 1u);
  EXPECT_EQ(wc[0].wr_id, 44u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(b.send(bh, 0xabcdef, 8, 0), 0);  // all four slots free again
  EXPECT_EQ(m.qp_counts(b.qpn()).completed_sends, 1u);

  // sq_sig_all: every WR completes, whatever its flags say.
  Host c(v, 0, caps(4, 4, 1), 1024, 1);
  c.up();
  ibv_ah* ch = c.ah_to_lid(1);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(c.send(ch, 0xabcdef, 8, 0), 0);
    EXPECT_EQ(c.poll().size(), 1u);
  }
  a.close({ah});
  b.close({bh});
  c.close({ch});
}

// Three IB ports: 0 and 1 join the group through the SA, 2 does not; QPs on
// all three attach. The sender is on port 0.
struct Group3 {
  explicit Group3(UdModel& model) : m(model), v(model.calls()) {
    for (int i = 0; i < 3; ++i) m.add_device();
    a = std::make_unique<Host>(v, 0);
    b = std::make_unique<Host>(v, 1);
    b2 = std::make_unique<Host>(v, 1);
    c = std::make_unique<Host>(v, 2);
    ch = v.create_event_channel();
    group = mgid(1);
    sockaddr_ib g = ib_address(group);
    for (int port = 0; port < 2; ++port) {
      sockaddr_ib p = ib_address(m.gid_of("model_" + std::to_string(port)));
      event = join(v, ch, &ids[port], reinterpret_cast<sockaddr*>(&p), reinterpret_cast<sockaddr*>(&g));
    }
    for (Host* h : {a.get(), b.get(), b2.get(), c.get()}) {
      h->up(event.param.ud.qkey);
      EXPECT_EQ(v.attach_mcast(h->qp, &group, event.param.ud.ah_attr.dlid), 0);
      EXPECT_EQ(h->recv(1, 0, 8192), 0);
    }
    ah = v.create_ah(a->pd, &event.param.ud.ah_attr);
  }
  void send(uint32_t len) {
    a->fill(len, 5);
    ASSERT_EQ(a->send(ah, event.param.ud.qp_num, len, IBV_SEND_SIGNALED, event.param.ud.qkey), 0);
  }
  ~Group3() {
    for (Host* h : {a.get(), b.get(), b2.get(), c.get()}) EXPECT_EQ(v.detach_mcast(h->qp, &group, 0xC001), 0);
    for (rdma_cm_id* id : ids) EXPECT_EQ(v.destroy_id(id), 0);
    v.destroy_event_channel(ch);
    a->close({ah});
    b->close();
    b2->close();
    c->close();
    EXPECT_EQ(m.live_objects(), 0u);
  }
  UdModel& m;
  const VerbsCalls& v;
  std::unique_ptr<Host> a, b, b2, c;
  rdma_event_channel* ch;
  rdma_cm_id* ids[2];
  ibv_gid group;
  rdma_cm_event event;
  ibv_ah* ah;
};

TEST(UdModel, MulticastReachesEveryAttachedQpOnJoinedPortsButNotTheSender) {
  UdModel m(opts());
  Group3 g(m);
  g.send(2000);
  for (Host* h : {g.b.get(), g.b2.get()}) {
    auto wc = h->poll();
    ASSERT_EQ(wc.size(), 1u);
    EXPECT_EQ(wc[0].src_qp, g.a->qpn());
    EXPECT_EQ(wc[0].byte_len, 40u + 2000);
    EXPECT_TRUE(wc[0].wc_flags & IBV_WC_GRH);
    EXPECT_EQ(std::memcmp(h->buf.data() + 24, g.group.raw, 16), 0);  // the GRH's DGID: the group
    EXPECT_EQ(std::memcmp(h->buf.data() + 40, g.a->buf.data() + kSendArea, 2000), 0);
  }
  EXPECT_TRUE(g.c->poll().empty());  // attached, but its port never joined
  auto own = g.a->poll();
  ASSERT_EQ(own.size(), 1u);  // the send completion only
  EXPECT_EQ(own[0].opcode, IBV_WC_SEND);
  EXPECT_EQ(m.counters().copies_delivered, 2u);
  EXPECT_EQ(m.counters().datagrams_sent, 1u);
  // Leaving the group: port 1 no longer gets it.
  sockaddr_ib addr = ib_address(g.group);
  ASSERT_EQ(g.v.leave_multicast(g.ids[1], reinterpret_cast<sockaddr*>(&addr)), 0);
  g.send(10);
  EXPECT_TRUE(g.b->poll().empty());
  EXPECT_EQ(m.counters().no_such_qp, 1u);
}

TEST(UdModel, MulticastLoopbackGivesTheSenderItsOwnDatagram) {
  UdModel::Options o = opts();
  o.multicast_loopback = true;
  UdModel m(o);
  Group3 g(m);
  g.send(64);
  auto own = g.a->poll();
  ASSERT_EQ(own.size(), 2u);
  EXPECT_EQ(own[0].opcode, IBV_WC_RECV);  // delivered during post_send, before its completion
  EXPECT_EQ(own[0].src_qp, g.a->qpn());
  EXPECT_EQ(own[1].opcode, IBV_WC_SEND);
  EXPECT_EQ(m.counters().copies_delivered, 3u);
}

TEST(UdModel, AttachNeedsAnMgidAndKeepsToTheLimit) {
  UdModel::Options o = opts();
  o.max_mcast_qp_attach = 2;
  UdModel m(o);
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0), c(v, 0);
  ibv_gid g = mgid(3);
  ibv_gid unicast = m.gid_of("model_0");
  EXPECT_EQ(v.attach_mcast(a.qp, &unicast, 0xC001), EINVAL);
  EXPECT_EQ(v.attach_mcast(a.qp, &g, 0xC001), 0);
  EXPECT_EQ(v.attach_mcast(a.qp, &g, 0xC001), 0);  // again: no change
  EXPECT_EQ(v.attach_mcast(b.qp, &g, 0xC001), 0);
  EXPECT_EQ(v.attach_mcast(c.qp, &g, 0xC001), ENOMEM);
  EXPECT_EQ(v.detach_mcast(c.qp, &g, 0xC001), EINVAL);
  EXPECT_EQ(v.destroy_qp(a.qp), EBUSY);  // still attached
  EXPECT_EQ(v.detach_mcast(a.qp, &g, 0xC001), 0);
  EXPECT_EQ(v.detach_mcast(b.qp, &g, 0xC001), 0);
  EXPECT_EQ(v.attach_mcast(c.qp, &g, 0xC001), 0);
  EXPECT_EQ(v.detach_mcast(c.qp, &g, 0xC001), 0);
  a.close();
  b.close();
  c.close();
}

TEST(UdModel, TheSaJoinsAGroupAndReportsItOnTheChannel) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device();
  Host a(v, 0), b(v, 1);
  rdma_event_channel* ch = v.create_event_channel();
  ASSERT_NE(ch, nullptr);
  EXPECT_EQ(ch->fd, -1);
  rdma_cm_id* id = nullptr;
  int ctx = 0;
  ASSERT_EQ(v.create_id(ch, &id, &ctx, RDMA_PS_UDP), 0);
  EXPECT_EQ(id->context, &ctx);
  EXPECT_EQ(id->channel, ch);
  EXPECT_EQ(id->ps, RDMA_PS_UDP);
  sockaddr_ib port = ib_address(m.gid_of("model_1"));
  ASSERT_EQ(v.bind_addr(id, reinterpret_cast<sockaddr*>(&port)), 0);
  EXPECT_EQ(id->verbs, b.ctx);
  EXPECT_EQ(id->port_num, 1);
  EXPECT_EQ(v.wait_cm_event(ch, 100), 0);  // nothing yet, and nothing later
  sockaddr_ib g1 = ib_address(mgid(1)), g2 = ib_address(mgid(2));
  ASSERT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&g1), reinterpret_cast<void*>(0x51)), 0);
  ASSERT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&g2), reinterpret_cast<void*>(0x52)), 0);
  EXPECT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&g2), nullptr), -1);
  EXPECT_EQ(errno, EADDRINUSE);
  EXPECT_EQ(v.wait_cm_event(ch, 0), 1);
  rdma_cm_event* e = nullptr;
  ASSERT_EQ(v.get_cm_event(ch, &e), 0);
  EXPECT_EQ(e->id, id);
  EXPECT_EQ(e->event, RDMA_CM_EVENT_MULTICAST_JOIN);
  EXPECT_EQ(e->status, 0);
  EXPECT_EQ(e->param.ud.private_data, reinterpret_cast<void*>(0x51));
  EXPECT_EQ(e->param.ud.qp_num, 0xFFFFFFu);
  EXPECT_EQ(e->param.ud.qkey, static_cast<uint32_t>(RDMA_UDP_QKEY));
  const ibv_ah_attr& ah = e->param.ud.ah_attr;
  EXPECT_EQ(ah.is_global, 1);
  EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, mgid(1).raw, 16), 0);
  EXPECT_EQ(ah.grh.sgid_index, 0);
  EXPECT_EQ(ah.dlid, 0xC001);
  EXPECT_EQ(ah.port_num, 1);
  EXPECT_EQ(v.ack_cm_event(e), 0);
  EXPECT_EQ(v.ack_cm_event(e), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(v.get_cm_event(ch, &e), 0);
  EXPECT_EQ(e->param.ud.ah_attr.dlid, 0xC002);  // a second group, its own MLID
  EXPECT_EQ(v.destroy_id(id), -1);              // an event not acked
  EXPECT_EQ(errno, EBUSY);
  EXPECT_EQ(v.ack_cm_event(e), 0);
  EXPECT_EQ(v.get_cm_event(ch, &e), -1);
  EXPECT_EQ(errno, EAGAIN);

  // Another port joining the first group gets its MLID.
  rdma_cm_id* id2 = nullptr;
  sockaddr_ib port0 = ib_address(m.gid_of("model_0"));
  rdma_cm_event joined = join(v, ch, &id2, reinterpret_cast<sockaddr*>(&port0), reinterpret_cast<sockaddr*>(&g1));
  EXPECT_EQ(joined.param.ud.ah_attr.dlid, 0xC001);
  EXPECT_EQ(id2->verbs, a.ctx);

  EXPECT_EQ(v.leave_multicast(id, reinterpret_cast<sockaddr*>(&g1)), 0);
  EXPECT_EQ(v.leave_multicast(id, reinterpret_cast<sockaddr*>(&g1)), -1);
  EXPECT_EQ(errno, EADDRNOTAVAIL);

  // b's port is still a member of g2 through `id`, until the id is destroyed.
  a.up(RDMA_UDP_QKEY);
  b.up(RDMA_UDP_QKEY);
  ibv_gid group2 = mgid(2);
  ASSERT_EQ(v.attach_mcast(b.qp, &group2, 0xC002), 0);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  ibv_ah* to_g2 = a.ah_global(group2, 0, 0xC002);
  ASSERT_EQ(a.send(to_g2, 0xFFFFFF, 50, 0, RDMA_UDP_QKEY), 0);
  EXPECT_EQ(b.poll().size(), 1u);
  ASSERT_EQ(b.recv(2, 0, 4096), 0);
  EXPECT_EQ(v.destroy_id(id), 0);  // leaves g2 on its way
  ASSERT_EQ(a.send(to_g2, 0xFFFFFF, 50, 0, RDMA_UDP_QKEY), 0);
  EXPECT_TRUE(b.poll().empty());
  EXPECT_EQ(m.counters().no_such_qp, 1u);
  ASSERT_EQ(v.detach_mcast(b.qp, &group2, 0xC002), 0);
  EXPECT_EQ(v.destroy_id(id2), 0);
  v.destroy_event_channel(ch);
  a.close({to_g2});
  b.close();
  EXPECT_EQ(m.live_objects(), 0u);
}

TEST(UdModel, TheSaRefusesJoinsWhenToldTo) {
  UdModel::Options o = opts();
  o.fail_joins = true;
  UdModel m(o);
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0);
  rdma_event_channel* ch = v.create_event_channel();
  rdma_cm_id* id = nullptr;
  sockaddr_ib port = ib_address(m.gid_of("model_0")), g = ib_address(mgid(1));
  rdma_cm_event e = join(v, ch, &id, reinterpret_cast<sockaddr*>(&port), reinterpret_cast<sockaddr*>(&g));
  EXPECT_EQ(e.event, RDMA_CM_EVENT_MULTICAST_ERROR);
  EXPECT_EQ(e.status, -ENETUNREACH);
  EXPECT_EQ(e.param.ud.private_data, reinterpret_cast<void*>(0x5eed));
  EXPECT_EQ(v.leave_multicast(id, reinterpret_cast<sockaddr*>(&g)), -1);  // never a member
  EXPECT_EQ(errno, EADDRNOTAVAIL);
  EXPECT_EQ(v.destroy_id(id), 0);
  v.destroy_event_channel(ch);
  a.close();
}

TEST(UdModel, RoceJoinsIpv4GroupsThroughItsV2Address) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device({true, IBV_MTU_4096});
  m.add_device({true, IBV_MTU_4096});
  Host a(v, 0), b(v, 1);
  rdma_event_channel* ch = v.create_event_channel();
  rdma_cm_id* ids[2];
  sockaddr_in group = ipv4_address("239.1.2.3");
  rdma_cm_event e;
  for (int i = 0; i < 2; ++i) {
    sockaddr_in port = ipv4_address(i == 0 ? "10.77.0.1" : "10.77.0.2");
    e = join(v, ch, &ids[i], reinterpret_cast<sockaddr*>(&port), reinterpret_cast<sockaddr*>(&group));
    ASSERT_EQ(e.event, RDMA_CM_EVENT_MULTICAST_JOIN);
  }
  const uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 239, 1, 2, 3};
  EXPECT_EQ(std::memcmp(e.param.ud.ah_attr.grh.dgid.raw, mapped, 16), 0);
  EXPECT_EQ(e.param.ud.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(e.param.ud.ah_attr.dlid, 0);
  b.up(e.param.ud.qkey);
  a.up(e.param.ud.qkey);
  ibv_gid g;
  std::memcpy(g.raw, mapped, 16);
  ASSERT_EQ(v.attach_mcast(b.qp, &g, 0), 0);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  ibv_ah* ah = v.create_ah(a.pd, &e.param.ud.ah_attr);
  ASSERT_NE(ah, nullptr);
  ASSERT_EQ(a.send(ah, 0xFFFFFF, 300, 0, e.param.ud.qkey), 0);
  ASSERT_EQ(b.poll().size(), 1u);
  EXPECT_EQ(b.buf[20], 0x45);  // IPv4 header: RoCE v2 over IPv4
  EXPECT_EQ(b.buf[36], 239);
  ASSERT_EQ(v.detach_mcast(b.qp, &g, 0), 0);

  // AF_INET6: bound to the port's v1 GID, an IPv6 MGID; the AH still uses the v2 GID.
  sockaddr_in6 port6{}, group6{};
  port6.sin6_family = group6.sin6_family = AF_INET6;
  ibv_gid v1 = m.gid_of("model_0", 0), g6 = mgid(6);
  std::memcpy(&port6.sin6_addr, v1.raw, 16);
  std::memcpy(&group6.sin6_addr, g6.raw, 16);
  rdma_cm_id* id6 = nullptr;
  e = join(v, ch, &id6, reinterpret_cast<sockaddr*>(&port6), reinterpret_cast<sockaddr*>(&group6));
  EXPECT_EQ(e.event, RDMA_CM_EVENT_MULTICAST_JOIN);
  EXPECT_EQ(std::memcmp(e.param.ud.ah_attr.grh.dgid.raw, g6.raw, 16), 0);
  EXPECT_EQ(e.param.ud.ah_attr.grh.sgid_index, 1);
  EXPECT_EQ(id6->verbs, a.ctx);
  EXPECT_EQ(v.destroy_id(id6), 0);
  for (rdma_cm_id* id : ids) EXPECT_EQ(v.destroy_id(id), 0);
  v.destroy_event_channel(ch);
  a.close({ah});
  b.close();
}

TEST(UdModel, TheSaRefusesWhatLibrdmacmRefuses) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  m.add_device();
  rdma_event_channel* ch = v.create_event_channel();
  rdma_cm_id* id = nullptr;
  EXPECT_EQ(v.create_id(ch, &id, nullptr, RDMA_PS_TCP), -1);
  EXPECT_EQ(errno, EINVAL);
  ASSERT_EQ(v.create_id(ch, &id, nullptr, RDMA_PS_UDP), 0);
  sockaddr_ib g = ib_address(mgid(1));
  EXPECT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&g), nullptr), -1);  // not bound
  EXPECT_EQ(errno, EINVAL);
  sockaddr_ib port = ib_address(m.gid_of("model_0"));
  EXPECT_EQ(v.bind_addr(id, reinterpret_cast<sockaddr*>(&port)), -1);  // model_0 never opened
  EXPECT_EQ(errno, EADDRNOTAVAIL);
  sockaddr_ib nobody = ib_address(mgid(9));
  EXPECT_EQ(v.bind_addr(id, reinterpret_cast<sockaddr*>(&nobody)), -1);
  EXPECT_EQ(errno, EADDRNOTAVAIL);
  Host a(v, 0);
  ASSERT_EQ(v.bind_addr(id, reinterpret_cast<sockaddr*>(&port)), 0);
  sockaddr_in v4 = ipv4_address("239.0.0.1");
  EXPECT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&v4), nullptr), -1);  // IPv4 groups: RoCE only
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(v.ack_cm_event(reinterpret_cast<rdma_cm_event*>(&g)), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(v.destroy_id(id), 0);
  EXPECT_EQ(v.destroy_id(id), -1);
  v.destroy_event_channel(ch);
  a.close();
  EXPECT_EQ(m.live_objects(), 0u);
}

// Sends 400 datagrams with loss 0.25 and a receive always posted: how many were lost.
uint64_t lost_with(uint64_t seed) {
  UdModel::Options o = opts();
  o.unicast_loss = 0.25;
  o.seed = seed;
  UdModel m(o);
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  EXPECT_EQ(b.recv(0, 0, 4096), 0);
  for (int i = 0; i < 400; ++i) {
    EXPECT_EQ(a.send(ah, b.qpn(), 32), 0);
    a.poll();
    if (!b.poll().empty()) {
      EXPECT_EQ(b.recv(0, 0, 4096), 0);
    }
  }
  UdModel::Counters c = m.counters();
  EXPECT_EQ(c.loss_drops + c.copies_delivered, 400u);
  EXPECT_EQ(m.qp_counts(b.qpn()).loss_drops, c.loss_drops);
  a.close({ah});
  b.close();
  return c.loss_drops;
}

TEST(UdModel, LossIsPerCopySeededAndCounted) {
  uint64_t lost = lost_with(42);
  EXPECT_GT(lost, 60u);  // 100 expected
  EXPECT_LT(lost, 140u);
  EXPECT_EQ(lost_with(42), lost);  // the same seed, the same losses
}

TEST(UdModel, CountsPerQpAndForTheModel) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(b.recv(i, i * 4096, 4096), 0);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(a.send(ah, b.qpn(), 16, i == 3 ? IBV_SEND_SIGNALED : 0), 0);
  EXPECT_EQ(b.poll().size(), 3u);
  uint32_t a_qpn = a.qpn(), b_qpn = b.qpn();
  a.close({ah});
  b.close();
  UdModel::QpCounts qa = m.qp_counts(a_qpn), qb = m.qp_counts(b_qpn);  // kept after destroy_qp
  EXPECT_EQ(qa.posted_sends, 4u);
  EXPECT_EQ(qa.completed_sends, 1u);
  EXPECT_EQ(qb.posted_recvs, 3u);
  EXPECT_EQ(qb.completed_recvs, 3u);
  EXPECT_EQ(qb.rnr_drops, 1u);
  UdModel::Counters c = m.counters();
  EXPECT_EQ(c.datagrams_sent, 4u);
  EXPECT_EQ(c.copies_delivered, 3u);
  EXPECT_EQ(c.rnr_drops, 1u);
  EXPECT_EQ(m.qp_counts(0x999999).posted_sends, 0u);
}

TEST(UdModel, TraceNamesEachCallAndCollapsesIdlePolls) {
  UdModel::Options o = opts();
  o.trace = true;
  UdModel m(o);
  const VerbsCalls& v = m.calls();
  m.add_device();
  Host a(v, 0), b(v, 0);
  const auto& t = m.trace();
  auto has = [&](const std::string& line) { return std::find(t.begin(), t.end(), line) != t.end(); };
  EXPECT_TRUE(has("ibv_open_device(model_0) -> context 1"));
  EXPECT_TRUE(has("ibv_create_cq(context 2, 1024 entries) -> cq 2"));
  EXPECT_TRUE(has("ibv_create_qp(ud, send 64 recv 64 sge 2 inline 64) -> qpn 0x1a2"));
  EXPECT_TRUE(has("ibv_create_qp(ud, send 64 recv 64 sge 2 inline 64) -> qpn 0x1d7"));
  m.clear_trace();
  EXPECT_TRUE(m.trace().empty());

  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(1);
  ASSERT_EQ(b.recv(1, 0, 4096), 0);
  for (int i = 0; i < 3; ++i) b.poll();
  ASSERT_EQ(a.send(ah, b.qpn(), 1078, 0), 0);
  b.poll();
  ibv_sge s[3];
  ibv_send_wr wr[3] = {};
  for (int i = 0; i < 3; ++i) {
    s[i] = {reinterpret_cast<uintptr_t>(a.buf.data() + kSendArea), 10u * (i + 1), a.mr->lkey};
    wr[i].sg_list = &s[i];
    wr[i].num_sge = 1;
    wr[i].opcode = IBV_WR_SEND;
    wr[i].wr.ud = {ah, b.qpn(), kQkey};
    wr[i].next = i < 2 ? &wr[i + 1] : nullptr;
  }
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(v.post_send(a.qp, wr, &bad), 0);
  std::vector<std::string> expect = {
      "ibv_modify_qp(qpn 0x1a2, INIT qkey 0x1234567 port 1) -> 0",
      "ibv_modify_qp(qpn 0x1a2, RTR) -> 0",
      "ibv_modify_qp(qpn 0x1a2, RTS sq_psn 0) -> 0",
      "ibv_modify_qp(qpn 0x1d7, INIT qkey 0x1234567 port 1) -> 0",
      "ibv_modify_qp(qpn 0x1d7, RTR) -> 0",
      "ibv_modify_qp(qpn 0x1d7, RTS sq_psn 0) -> 0",
      "ibv_create_ah(pd 1, lid 1) -> ah 1",
      "ibv_post_recv(qpn 0x1d7, 1 wr) -> 0",
      "ibv_poll_cq(cq 2, max 64) -> 0 (x 3)",
      "ibv_post_send(qpn 0x1a2, 1 wr: 1078 B to qpn 0x1d7 lid 1) -> 0",
      "  wire: 1078 B qpn 0x1a2 -> qpn 0x1d7 delivered",
      "ibv_poll_cq(cq 2, max 64) -> 1 (1 recv, 0 send)",
      "ibv_post_send(qpn 0x1a2, 3 wr: 10 B to qpn 0x1d7 lid 1 | ... | 30 B to qpn 0x1d7 lid 1) -> 0",
      "  wire: 10 B qpn 0x1a2 -> qpn 0x1d7 dropped: no receive posted",
      "  wire: 20 B qpn 0x1a2 -> qpn 0x1d7 dropped: no receive posted",
      "  wire: 30 B qpn 0x1a2 -> qpn 0x1d7 dropped: no receive posted",
  };
  EXPECT_EQ(m.trace(), expect);
  a.close({ah});
  b.close();
}

// Completion events: only an armed CQ raises one, for the next completion;
// the channel's descriptor is readable while events wait; an event got must
// be acknowledged before its CQ goes.
TEST(UdModel, AnArmedCqRaisesOneEventOnItsChannel) {
  UdModel m(opts());
  m.add_device();
  m.add_device();
  Host a(m.calls(), 0), b(m.calls(), 1, caps(), 1024, 0, /*events=*/true);
  ASSERT_NE(b.channel, nullptr);
  a.up();
  b.up();
  ibv_ah* ah = a.ah_to_lid(m.lid_of("model_1"));
  for (uint64_t i = 0; i < 3; ++i) ASSERT_EQ(b.recv(i, i * 4096, 4096), 0);
  auto readable = [&] {
    pollfd p{b.channel->fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1;
  };
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);  // not armed: a completion, no event
  EXPECT_FALSE(readable());
  ASSERT_EQ(m.calls().req_notify_cq(b.cq, 0), 0);
  EXPECT_FALSE(readable());                 // the completion already queued raises none
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);
  ASSERT_EQ(a.send(ah, b.qpn(), 100), 0);  // one event per arm
  EXPECT_TRUE(readable());
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  ASSERT_EQ(m.calls().get_cq_event(b.channel, &cq, &context), 0);
  EXPECT_EQ(cq, b.cq);
  EXPECT_FALSE(readable());
  EXPECT_EQ(m.calls().get_cq_event(b.channel, &cq, &context), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(b.poll().size(), 3u);
  EXPECT_EQ(m.calls().destroy_qp(b.qp), 0);
  EXPECT_EQ(m.calls().destroy_cq(b.cq), EBUSY);  // the event is not acknowledged
  m.calls().ack_cq_events(b.cq, 1);
  EXPECT_EQ(m.calls().destroy_comp_channel(b.channel), EBUSY);  // a CQ still uses it
  EXPECT_EQ(m.calls().destroy_cq(b.cq), 0);
  EXPECT_EQ(m.calls().destroy_comp_channel(b.channel), 0);
  EXPECT_EQ(m.calls().dereg_mr(b.mr), 0);
  EXPECT_EQ(m.calls().dealloc_pd(b.pd), 0);
  EXPECT_EQ(m.calls().close_device(b.ctx), 0);
  a.poll();
  a.close({ah});
  EXPECT_EQ(m.live_objects(), 0u);
}

TEST(UdModel, TeardownFreesEverythingAndRefusesTheWrongOrder) {
  UdModel m(opts());
  const VerbsCalls& v = m.calls();
  m.add_device();
  int n = 0;
  ibv_device** list = v.get_device_list(&n);
  ibv_context* ctx = v.open_device(list[0]);
  ibv_pd* pd = v.alloc_pd(ctx);
  ibv_cq* cq = v.create_cq(ctx, 16, nullptr);
  std::vector<uint8_t> buf(4096);
  ibv_mr* mr = v.reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq;
  init.cap = caps();
  init.qp_type = IBV_QPT_UD;
  ibv_qp* qp = v.create_qp(pd, &init);
  ibv_ah_attr aa{};
  aa.dlid = 1;
  aa.port_num = 1;
  ibv_ah* ah = v.create_ah(pd, &aa);
  ibv_gid g = mgid(1);
  ASSERT_EQ(v.attach_mcast(qp, &g, 0xC001), 0);
  rdma_event_channel* ch = v.create_event_channel();
  rdma_cm_id* id = nullptr;
  ASSERT_EQ(v.create_id(ch, &id, nullptr, RDMA_PS_UDP), 0);
  sockaddr_ib port = ib_address(m.gid_of("model_0")), group = ib_address(g);
  ASSERT_EQ(v.bind_addr(id, reinterpret_cast<sockaddr*>(&port)), 0);
  ASSERT_EQ(v.join_multicast(id, reinterpret_cast<sockaddr*>(&group), nullptr), 0);
  rdma_cm_event* e = nullptr;
  ASSERT_EQ(v.get_cm_event(ch, &e), 0);
  EXPECT_EQ(m.live_objects(), 10u);  // list, context, pd, cq, mr, qp, ah, channel, id, event

  EXPECT_EQ(v.dealloc_pd(pd), EBUSY);
  EXPECT_EQ(v.destroy_cq(cq), EBUSY);
  EXPECT_EQ(v.close_device(ctx), EBUSY);
  EXPECT_EQ(v.destroy_qp(qp), EBUSY);  // attached
  EXPECT_EQ(v.destroy_id(id), -1);     // the event is not acked
  EXPECT_EQ(errno, EBUSY);
  v.destroy_event_channel(ch);  // an id on it: refused
  EXPECT_EQ(m.live_objects(), 10u);

  EXPECT_EQ(v.ack_cm_event(e), 0);
  EXPECT_EQ(v.destroy_id(id), 0);
  v.destroy_event_channel(ch);
  EXPECT_EQ(v.detach_mcast(qp, &g, 0xC001), 0);
  EXPECT_EQ(v.destroy_ah(ah), 0);
  EXPECT_EQ(v.destroy_qp(qp), 0);
  EXPECT_EQ(v.dereg_mr(mr), 0);
  EXPECT_EQ(v.destroy_cq(cq), 0);
  EXPECT_EQ(v.dealloc_pd(pd), 0);
  EXPECT_EQ(v.close_device(ctx), 0);
  v.free_device_list(list);
  EXPECT_EQ(m.live_objects(), 0u);

  // Twice, or never handed out: EINVAL, no crash.
  EXPECT_EQ(v.destroy_ah(ah), EINVAL);
  EXPECT_EQ(v.destroy_qp(qp), EINVAL);
  EXPECT_EQ(v.dereg_mr(mr), EINVAL);
  EXPECT_EQ(v.destroy_cq(cq), EINVAL);
  EXPECT_EQ(v.dealloc_pd(pd), EINVAL);
  EXPECT_EQ(v.close_device(ctx), EINVAL);
  EXPECT_EQ(v.destroy_id(id), -1);
  EXPECT_EQ(v.ack_cm_event(e), -1);
  v.destroy_event_channel(ch);
  v.free_device_list(list);
  ibv_wc wc;
  EXPECT_EQ(v.poll_cq(cq, 1, &wc), -1);
  EXPECT_EQ(m.live_objects(), 0u);
}

}  // namespace
}  // namespace lanecast::drivers::verbs::model
