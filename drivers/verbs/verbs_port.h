// A Port on InfiniBand / RoCE unreliable-datagram queue pairs (rdma-core
// verbs): one UD QP per lane on one port of one adapter, with hardware
// multicast joined through the subnet administrator (librdmacm).
//
// Control (verbs_control.cc): open the device, one protection domain, per
// lane a send CQ, a receive CQ and a UD QP taken RESET -> INIT (port, P_Key
// index, Q_Key) -> RTR -> RTS; the mempools whose buffers it sends or
// receives registered with ibv_reg_mr; one address handle per peer, made at
// set-up (learn_peers), so the datapath never calls the kernel.
// Multicast (verbs_multicast.cc): join through rdma_join_multicast, take the
// MLID and Q_Key from the join's event, attach the lane's QP
// (ibv_attach_mcast); detach and leave on every exit path.
// Datapath (verbs_datapath.cc): receives posted straight into mbufs of the
// receive pool in bursts (the adapter writes the GRH and the frame there);
// sends posted as scatter lists (header mbuf + the payload mbuf it chains,
// no copy) or inline when small, signalled once per burst so completions
// cost one CQE per burst; a sent mbuf is freed when its completion is read.
//
// Every call into the library goes through a VerbsCalls table (the seam,
// verbs_calls.h): rdma-core's in production, a model of UD semantics in the
// tests. State of a lane is owned by the core that polls it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drivers/port.h"
#include "drivers/verbs/ud_address.h"
#include "drivers/verbs/verbs_calls.h"

struct rte_mempool;

namespace lanecast::drivers::verbs {

class VerbsPort final : public Port {
 public:
  struct Options {
    std::string device;            // e.g. "mlx5_0"; "" = the first the library lists
    uint8_t port_num = 1;
    int gid_index = -1;            // -1: IB GID 0; on RoCE the first RoCE v2 GID (IPv4-mapped first)
    uint16_t lanes = 1;            // UD queue pairs, 1..kMaxUdLanes
    // Every member's queue pairs use it; rdma_cm's multicast groups come with
    // this one (RDMA_UDP_QKEY), and a QP has a single Q_Key.
    uint32_t qkey = RDMA_UDP_QKEY;
    uint32_t rq_depth = 512;       // receives posted per lane
    uint32_t sq_depth = 256;       // sends outstanding per lane
    uint32_t max_datagram = 0;     // 0: the port's active MTU; else at most this (and the MTU)
    uint32_t max_inline = 64;      // frames this small are copied into the work request
    rte_mempool* rx_pool = nullptr;  // receive buffers; room >= 40-byte GRH + max datagram
    const VerbsCalls* calls = nullptr;  // nullptr: rdma_core_calls()
    uint32_t max_destinations = 4096;   // peers + joined groups
    int join_timeout_ms = 5000;
    // A completion channel on the receive CQs: a polling core with nothing
    // to do sleeps until a datagram arrives (caps().rx_wakeup).
    bool wakeups = true;
  };
  // The port's own counters, summed over lanes (each lane's core writes its own).
  struct Counters {
    uint64_t rx_posted = 0, rx_completed = 0;  // receive work requests
    uint64_t rx_errors = 0;                    // receive completions with an error status
    uint64_t rx_no_buffer = 0;                 // a replenish found the receive pool empty
    uint64_t rq_low = 0;      // receive queue found below 1/8 of its depth: near the point of dropping
    uint64_t rq_empty = 0;    // found with no receive posted: datagrams arriving now are lost
    uint64_t tx_posted = 0, tx_completions = 0, tx_inline = 0;
    uint64_t tx_full = 0;         // frames not taken: the send queue had no room
    uint64_t tx_unresolved = 0;   // frames to a destination learn_peers/join_group never made
    uint64_t tx_errors = 0;       // send completions with an error status, frames refused by post_send
    uint64_t tx_too_many_segments = 0;  // chains longer than the QP's scatter list: dropped
    uint64_t qp_recovered = 0;    // a lane's QP found in the error state and brought back to RTS
    uint64_t wakeup_events = 0;   // completion events read after a sleep (an arrival woke the core)
  };
  struct Capabilities {  // what the adapter said at open
    uint32_t mtu_bytes = 0, max_inline = 0, max_send_sge = 0, max_qp_wr = 0, max_mcast_qp_attach = 0;
    bool roce = false;
  };

  // Opens and brings every lane's QP to RTS with its receives posted.
  // Throws std::invalid_argument for bad options, std::runtime_error naming
  // the verbs call that failed; nothing is left open on failure.
  explicit VerbsPort(const Options& o);
  // Leaves the groups it joined, frees every mbuf it holds, releases every
  // verbs object in the reverse order of creation.
  ~VerbsPort() override;
  VerbsPort(const VerbsPort&) = delete;
  VerbsPort& operator=(const VerbsPort&) = delete;

  uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) override;
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override;

  uint16_t lanes() const override { return static_cast<uint16_t>(lanes_.size()); }
  uint32_t max_frame_bytes() const override { return sizeof(TxHeader) + max_datagram_; }
  PeerAddress address() const override { return to_address(self_); }
  std::string name() const override { return name_; }
  PortCaps caps() const override { return PortCaps{true, true, comp_channel_ != nullptr}; }
  PortStats stats() const override;
  uint16_t link_header_bytes() const override { return sizeof(TxHeader); }
  uint16_t rx_link_header_bytes() const override { return kRxHeaderBytes; }
  uint16_t sealed_link_bytes() const override { return sizeof(DestinationBinding); }
  void write_link_header(uint8_t* at, const PeerAddress& dst) const override;
  // A UD QP is given only datagrams for its QPN or a group it attached.
  bool accepts(const uint8_t*) const override { return true; }
  bool is_from(const uint8_t* link_header, const PeerAddress& peer) const override;
  PeerAddress source_of(const uint8_t* link_header) const override;
  std::string learn_peers(const PeerAddress* peers, size_t count) override;
  std::string register_pool(rte_mempool* pool) override;
  PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const override;
  std::string join_group(uint16_t lane, const PeerAddress& group) override;
  void leave_group(uint16_t lane, const PeerAddress& group) override;
  // Hellos go to a multicast group named by the group id (no broadcast on IB).
  std::string join_hellos(uint32_t group_id, uint16_t lane, PeerAddress* to) override;
  void leave_hellos(uint32_t group_id, uint16_t lane) override;
  void attach_waker(Waker* w) override;
  void detach_waker() override;
  void arm_wakeup() override;
  void disarm_wakeup() override;

  // The active MTU of `device`'s port (the largest datagram after its
  // headers), asked without opening a port: for sizing segments before.
  // Throws std::runtime_error saying why (no device, no such port).
  static uint32_t active_mtu(const std::string& device, uint8_t port_num, const VerbsCalls* calls = nullptr);

  Counters counters() const;
  const Capabilities& capabilities() const { return caps_; }
  const Endpoint& endpoint() const { return self_; }
  const rte_mempool* receive_pool() const { return o_.rx_pool; }
  uint32_t qpn(uint16_t lane) const { return self_.qpn[lane]; }
  // Receives posted on a lane now.
  uint32_t receives_posted(uint16_t lane) const;

 private:
  struct Region {  // one registered chunk of a mempool's memory
    const rte_mempool* pool;
    uintptr_t begin, end;
    ibv_mr* mr;
  };
  struct Destination {  // where a TxHeader points
    PeerAddress addr;
    ibv_ah* ah = nullptr;
    uint32_t qpn[kMaxUdLanes] = {};
    bool group = false;
    DestinationBinding binding;  // what seals cover: its GID and lane-0 QPN (a group's: MGID, 0xFFFFFF)
  };
  struct Joined {
    uint16_t lane;
    ibv_gid mgid;
    uint16_t mlid;
  };
  struct Lane;  // verbs_datapath.cc: queue pair, CQs, posted receives, sends in flight

  void open();
  void release() noexcept;
  void create_lane(uint16_t index);
  void to_rts(Lane& l);
  void recover(Lane& l);
  void replenish(Lane& l);
  void reap_sends(Lane& l);
  void flush_receives(Lane& l);
  void drain_cq_events();
  uint32_t lkey_of(const rte_mempool* pool, uintptr_t addr) const;
  ibv_ah* make_ah(const ibv_gid& gid, uint16_t lid, bool global, std::string* why);
  uint32_t find_destination(const PeerAddress& a) const;
  std::string add_destination(const Destination& d);
  std::string join_through_sa(const ibv_gid& mgid, ibv_ah_attr* ah_attr, uint32_t* qkey);
  sockaddr_storage own_sockaddr() const;

  Options o_;
  const VerbsCalls& v_;
  std::string name_;
  Capabilities caps_;
  Endpoint self_;
  int gid_index_ = 0;
  uint32_t max_datagram_ = 0;
  uint32_t rx_room_ = 0;  // bytes a receive buffer holds (the receive pool's, past the headroom)
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  std::vector<Region> regions_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  // Destinations: a table filled at set-up and an open-addressing index of
  // it (power-of-two slots, linear probing), so write_link_header finds a
  // peer's handle in a few compares without allocating or locking.
  std::vector<Destination> dests_;
  std::vector<uint32_t> index_;
  std::vector<Joined> joined_;
  rdma_event_channel* channel_ = nullptr;
  ibv_comp_channel* comp_channel_ = nullptr;  // receive CQs' events (wake-ups); null without
  Waker* waker_ = nullptr;
  std::atomic<uint64_t> wakeup_events_{0};  // written by the polling core
  rdma_cm_id* cm_id_ = nullptr;
};

// "InfiniBand, MTU 4096, inline 64 B, 4 scatter entries, 4096 work requests,
// 8 QPs per multicast group": what the adapter said, for logs.
std::string describe(const VerbsPort::Capabilities& c);

}  // namespace lanecast::drivers::verbs
