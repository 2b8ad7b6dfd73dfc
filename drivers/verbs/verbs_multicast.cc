// VerbsPort: hardware multicast. A group's address is a multicast GID made
// from the group's random address seed; the port joins it through the subnet
// administrator with librdmacm (rdma_join_multicast: the SA's MCMemberRecord
// join, as UCC's mlx5 multicast and MVAPICH2 do), takes the MLID and Q_Key
// the join's event reports, makes one address handle to send to the group
// and attaches the lane's queue pair (ibv_attach_mcast). Leaving detaches
// first, then leaves. Everything here is the control path.
#include <arpa/inet.h>
#include <infiniband/ib.h>

#include <cerrno>
#include <cstring>

#include "drivers/verbs/verbs_lane.h"

namespace lanecast::drivers::verbs {

namespace {

// The sockaddr rdma_cm takes for a GID: AF_IB on InfiniBand; on RoCE the
// GID is the interface's IP address (IPv4-mapped or IPv6).
sockaddr_storage sockaddr_of(const ibv_gid& gid, bool roce) {
  sockaddr_storage ss{};
  if (!roce) {
    auto* ib = reinterpret_cast<sockaddr_ib*>(&ss);
    ib->sib_family = AF_IB;
    ib->sib_pkey = htons(0xffff);
    std::memcpy(&ib->sib_addr, gid.raw, 16);
  } else if (is_ipv4_mapped(gid)) {
    auto* in = reinterpret_cast<sockaddr_in*>(&ss);
    in->sin_family = AF_INET;
    std::memcpy(&in->sin_addr, gid.raw + 12, 4);
  } else {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
    in6->sin6_family = AF_INET6;
    std::memcpy(&in6->sin6_addr, gid.raw, 16);
  }
  return ss;
}

}  // namespace

sockaddr_storage VerbsPort::own_sockaddr() const { return sockaddr_of(self_.gid, caps_.roce); }

// IB: ff12:4c43 ("LC", transient, link-local scope) + 11 bytes of the seed +
// the lane. RoCE v2 over IPv4: 239.k.k.l (organisation-local scope, 2^-24
// to meet another group's); over IPv6: ff15:4c43 + the same bytes.
PeerAddress VerbsPort::group_address(const GroupAddressSeed& seed, uint16_t lane) const {
  ibv_gid g{};
  if (caps_.roce && is_ipv4_mapped(self_.gid)) {
    g.raw[10] = g.raw[11] = 0xff;
    g.raw[12] = 239;
    g.raw[13] = seed.bytes[0];
    g.raw[14] = seed.bytes[1];
    g.raw[15] = static_cast<uint8_t>(seed.bytes[2] ^ lane);
  } else {
    g.raw[0] = 0xff;
    g.raw[1] = caps_.roce ? 0x15 : 0x12;
    g.raw[2] = 0x4c;
    g.raw[3] = 0x43;
    std::memcpy(g.raw + 4, seed.bytes, 11);
    g.raw[15] = static_cast<uint8_t>(lane);
  }
  return group_of(g);
}

std::string VerbsPort::join_through_sa(const ibv_gid& mgid, ibv_ah_attr* ah_attr, uint32_t* qkey) {
  if (channel_ == nullptr) {
    channel_ = v_.create_event_channel();
    if (channel_ == nullptr) return failed("rdma_create_event_channel", errno);
  }
  if (cm_id_ == nullptr) {
    if (v_.create_id(channel_, &cm_id_, this, RDMA_PS_UDP) != 0) {
      cm_id_ = nullptr;
      return failed("rdma_create_id", errno);
    }
    sockaddr_storage own = own_sockaddr();
    if (v_.bind_addr(cm_id_, reinterpret_cast<sockaddr*>(&own)) != 0) return failed("rdma_bind_addr", errno);
  }
  sockaddr_storage group = sockaddr_of(mgid, caps_.roce);  // a multicast GID is the group's IP address on RoCE
  if (v_.join_multicast(cm_id_, reinterpret_cast<sockaddr*>(&group), this) != 0)
    return failed("rdma_join_multicast", errno);
  const int ready = v_.wait_cm_event(channel_, o_.join_timeout_ms);
  if (ready <= 0)
    return ready == 0 ? "the subnet administrator did not answer the join within " +
                            std::to_string(o_.join_timeout_ms) + " ms"
                      : failed("waiting for the join", errno);
  rdma_cm_event* ev = nullptr;
  if (v_.get_cm_event(channel_, &ev) != 0) return failed("rdma_get_cm_event", errno);
  std::string why;
  if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN) {
    why = "the join failed: rdma_cm event " + std::to_string(ev->event) + ", status " + std::to_string(ev->status);
  } else {
    *ah_attr = ev->param.ud.ah_attr;
    *qkey = ev->param.ud.qkey;
  }
  v_.ack_cm_event(ev);
  if (!why.empty()) {
    v_.leave_multicast(cm_id_, reinterpret_cast<sockaddr*>(&group));
  }
  return why;
}

std::string VerbsPort::join_group(uint16_t lane, const PeerAddress& group) {
  if (lane >= lanes_.size()) return "no lane " + std::to_string(lane);
  if (!is_group_address(group)) return format_address(group) + " is not a multicast GID";
  for (const Joined& j : joined_)
    if (j.lane == lane && group_of(j.mgid) == group) return "";
  if (joined_.size() >= caps_.max_mcast_qp_attach * lanes_.size() && caps_.max_mcast_qp_attach != 0)
    return "the adapter attaches at most " + std::to_string(caps_.max_mcast_qp_attach) + " QPs per group";
  ibv_gid mgid;
  std::memcpy(mgid.raw, group.bytes, 16);
  ibv_ah_attr ah_attr{};
  uint32_t qkey = 0;
  if (std::string why = join_through_sa(mgid, &ah_attr, &qkey); !why.empty()) return why;
  auto undo = [&](std::string why) {
    sockaddr_storage g = sockaddr_of(mgid, caps_.roce);
    v_.leave_multicast(cm_id_, reinterpret_cast<sockaddr*>(&g));
    return why;
  };
  if (qkey != o_.qkey)
    return undo("the group's Q_Key " + std::to_string(qkey) + " is not the port's (" + std::to_string(o_.qkey) +
                "): every member's queue pairs must use the group's");
  // Sends to the group go from our GID, on our port.
  ah_attr.port_num = o_.port_num;
  ah_attr.is_global = 1;
  ah_attr.grh.sgid_index = static_cast<uint8_t>(gid_index_);
  if (ah_attr.grh.hop_limit == 0) ah_attr.grh.hop_limit = 64;
  Destination d;
  d.addr = group;
  d.group = true;
  std::fill(d.qpn, d.qpn + kMaxUdLanes, kMulticastQpn);
  d.binding = binding_of(mgid.raw, kMulticastQpn);
  const bool new_dest = find_destination(group) == TxHeader::kUnresolved;
  if (new_dest) {
    d.ah = v_.create_ah(pd_, &ah_attr);
    if (d.ah == nullptr) return undo(failed("ibv_create_ah", errno) + " (the group's)");
  }
  const uint16_t mlid = ah_attr.dlid;
  if (int e = v_.attach_mcast(lanes_[lane]->qp, &mgid, mlid)) {
    if (d.ah != nullptr) v_.destroy_ah(d.ah);
    return undo(failed("ibv_attach_mcast", e));
  }
  if (new_dest) {
    if (std::string full = add_destination(d); !full.empty()) {
      v_.detach_mcast(lanes_[lane]->qp, &mgid, mlid);
      v_.destroy_ah(d.ah);
      return undo(full);
    }
  }
  joined_.push_back(Joined{lane, mgid, mlid});
  return "";
}

// The address handle stays (a frame to the group may still be in a send
// queue); it goes with the port.
void VerbsPort::leave_group(uint16_t lane, const PeerAddress& group) {
  for (size_t i = 0; i < joined_.size(); ++i) {
    const Joined j = joined_[i];
    if (j.lane != lane || !(group_of(j.mgid) == group)) continue;
    if (lane < lanes_.size()) v_.detach_mcast(lanes_[lane]->qp, &j.mgid, j.mlid);
    sockaddr_storage g = sockaddr_of(j.mgid, caps_.roce);
    if (cm_id_ != nullptr) v_.leave_multicast(cm_id_, reinterpret_cast<sockaddr*>(&g));
    joined_.erase(joined_.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
}

// The discovery bootstrap's group: every member of group `group_id` can
// name it before knowing anyone ("LC hello" and the id in place of a seed).
namespace {
GroupAddressSeed hello_seed(uint32_t group_id) {
  GroupAddressSeed k{};
  std::memcpy(k.bytes, "LChello", 7);
  for (int i = 0; i < 4; ++i) k.bytes[7 + i] = static_cast<uint8_t>(group_id >> (24 - 8 * i));
  return k;
}
}  // namespace

std::string VerbsPort::join_hellos(uint32_t group_id, uint16_t lane, PeerAddress* to) {
  *to = group_address(hello_seed(group_id), lane);
  const std::string why = join_group(lane, *to);
  return why.empty() ? "" : "cannot join the hellos' multicast group: " + why;
}

void VerbsPort::leave_hellos(uint32_t group_id, uint16_t lane) {
  leave_group(lane, group_address(hello_seed(group_id), lane));
}

}  // namespace lanecast::drivers::verbs
