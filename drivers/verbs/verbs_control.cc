// VerbsPort: the control path - open the adapter, bring each lane's UD
// queue pair to RTS, register mempools, make address handles for peers,
// and release all of it in the reverse order.
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "drivers/verbs/verbs_lane.h"

namespace lanecast::drivers::verbs {

namespace {

uint32_t mtu_bytes(ibv_mtu m) { return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 256u << (m - 1) : 0; }

// FNV-1a over an address's bytes: the destination index's hash.
uint64_t hash_of(const PeerAddress& a) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t i = 0; i < a.len; ++i) h = (h ^ a.bytes[i]) * 1099511628211ull;
  return h;
}

}  // namespace

VerbsPort::VerbsPort(const Options& o) : o_(o), v_(o.calls != nullptr ? *o.calls : rdma_core_calls()) {
  if (o.lanes == 0 || o.lanes > kMaxUdLanes)
    throw std::invalid_argument("verbs port: " + std::to_string(o.lanes) + " lanes (1.." +
                                std::to_string(kMaxUdLanes) + ": one UD queue pair each)");
  if (o.rx_pool == nullptr) throw std::invalid_argument("verbs port: no receive pool");
  if (o.rq_depth < 2 * kBurst || o.sq_depth < 2 * kBurst)
    throw std::invalid_argument("verbs port: queue depths below " + std::to_string(2 * kBurst));
  if (o.max_destinations == 0 || o.max_destinations > (1u << 20))
    throw std::invalid_argument("verbs port: max_destinations outside 1..2^20");
  if (o.qkey & 0x80000000u)
    throw std::invalid_argument("verbs port: Q_Keys with the high bit set are controlled (privileged)");
  try {
    open();
  } catch (...) {
    release();
    throw;
  }
}

VerbsPort::~VerbsPort() { release(); }

uint32_t VerbsPort::active_mtu(const std::string& device, uint8_t port_num, const VerbsCalls* calls) {
  const VerbsCalls& v = calls != nullptr ? *calls : rdma_core_calls();
  int n = 0;
  ibv_device** list = v.get_device_list(&n);
  if (list == nullptr || n == 0) {
    const int err = errno;
    if (list != nullptr) v.free_device_list(list);
    throw std::runtime_error("no RDMA device (ibv_get_device_list: " +
                             (n == 0 && list != nullptr ? std::string("none") : std::string(std::strerror(err))) + ")");
  }
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n && ctx == nullptr; ++i)
    if (device == v.get_device_name(list[i])) ctx = v.open_device(list[i]);
  v.free_device_list(list);
  if (ctx == nullptr) throw std::runtime_error("no device " + device + ", or it cannot be opened");
  ibv_port_attr pa{};
  const int e = v.query_port(ctx, port_num, &pa);
  v.close_device(ctx);
  if (e != 0) throw std::runtime_error(failed("ibv_query_port", e) + " (port " + std::to_string(port_num) + ")");
  return mtu_bytes(pa.active_mtu);
}

void VerbsPort::open() {
  int n = 0;
  ibv_device** list = v_.get_device_list(&n);
  if (list == nullptr)  // no RDMA subsystem in this kernel, or no permission to /dev/infiniband
    throw std::runtime_error("verbs port: no RDMA device (" + failed("ibv_get_device_list", errno) + ")");
  ibv_device* dev = nullptr;
  std::string seen;
  std::string dev_name;
  for (int i = 0; i < n && dev == nullptr; ++i) {
    const std::string name = v_.get_device_name(list[i]);
    seen += (seen.empty() ? "" : ", ") + name;
    if (o_.device.empty() || o_.device == name) dev = list[i], dev_name = name;
  }
  if (dev == nullptr) {
    v_.free_device_list(list);
    throw std::runtime_error("verbs port: " + (n == 0 ? std::string("no RDMA device (ibv_get_device_list found none)")
                                                      : "no device " + o_.device + " (there are: " + seen + ")"));
  }
  name_ = "verbs:" + dev_name + ":" + std::to_string(o_.port_num);
  ctx_ = v_.open_device(dev);
  const int open_err = errno;
  v_.free_device_list(list);
  if (ctx_ == nullptr) throw std::runtime_error(name_ + ": " + failed("ibv_open_device", open_err));

  ibv_device_attr da{};
  if (int e = v_.query_device(ctx_, &da)) throw std::runtime_error(name_ + ": " + failed("ibv_query_device", e));
  ibv_port_attr pa{};
  if (int e = v_.query_port(ctx_, o_.port_num, &pa)) throw std::runtime_error(name_ + ": " + failed("ibv_query_port", e));
  if (pa.state != IBV_PORT_ACTIVE)
    throw std::runtime_error(name_ + ": the port is not active (state " + std::to_string(pa.state) +
                             "; is the cable in and the subnet manager running?)");
  caps_.roce = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
  caps_.mtu_bytes = mtu_bytes(pa.active_mtu);
  caps_.max_qp_wr = static_cast<uint32_t>(da.max_qp_wr);
  caps_.max_send_sge = std::min<uint32_t>(static_cast<uint32_t>(da.max_sge), kMaxSendSge);
  caps_.max_mcast_qp_attach = static_cast<uint32_t>(da.max_mcast_qp_attach);
  if (caps_.mtu_bytes == 0) throw std::runtime_error(name_ + ": the port reports no MTU");
  if (o_.rq_depth > caps_.max_qp_wr || o_.sq_depth > caps_.max_qp_wr)
    throw std::invalid_argument(name_ + ": queue depth above the adapter's " + std::to_string(caps_.max_qp_wr));
  max_datagram_ = o_.max_datagram == 0 ? caps_.mtu_bytes : std::min(o_.max_datagram, caps_.mtu_bytes);

  // The GID this port speaks from: on IB index 0 (the port GUID's); on
  // RoCE a RoCE v2 GID (routable, UDP port 4791), an IPv4-mapped one first.
  gid_index_ = o_.gid_index;
  if (gid_index_ < 0 && !caps_.roce) gid_index_ = 0;
  if (gid_index_ < 0) {
    int v6 = -1;
    for (int i = 0; i < pa.gid_tbl_len && gid_index_ < 0; ++i) {
      ibv_gid_entry ge{};
      if (v_.query_gid_ex(ctx_, o_.port_num, static_cast<uint32_t>(i), &ge) != 0) continue;
      if (ge.gid_type != IBV_GID_TYPE_ROCE_V2) continue;
      if (is_ipv4_mapped(ge.gid)) gid_index_ = i;
      else if (v6 < 0) v6 = i;
    }
    if (gid_index_ < 0) gid_index_ = v6;
    if (gid_index_ < 0) throw std::runtime_error(name_ + ": no RoCE v2 GID (is an IP address set on the interface?)");
  }
  ibv_gid_entry ge{};
  if (int e = v_.query_gid_ex(ctx_, o_.port_num, static_cast<uint32_t>(gid_index_), &ge))
    throw std::runtime_error(name_ + ": " + failed("ibv_query_gid_ex", e) + " (GID index " +
                             std::to_string(gid_index_) + ")");
  self_.gid = ge.gid;
  self_.lid = caps_.roce ? 0 : pa.lid;
  self_.qkey = o_.qkey;

  if (o_.wakeups) {
    // Without one the port still works; its core naps on a timer instead.
    comp_channel_ = v_.create_comp_channel(ctx_);
    if (comp_channel_ != nullptr && comp_channel_->fd >= 0) {
      const int flags = fcntl(comp_channel_->fd, F_GETFL);
      if (flags < 0 || fcntl(comp_channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        v_.destroy_comp_channel(comp_channel_);
        comp_channel_ = nullptr;
      }
    }
  }
  pd_ = v_.alloc_pd(ctx_);
  if (pd_ == nullptr) throw std::runtime_error(name_ + ": " + failed("ibv_alloc_pd", errno));
  rx_room_ = rte_pktmbuf_data_room_size(o_.rx_pool) - RTE_PKTMBUF_HEADROOM;
  if (rx_room_ < kGrhBytes + max_datagram_)
    throw std::invalid_argument(name_ + ": receive buffers of " + std::to_string(rx_room_) + " bytes cannot hold the " +
                                std::to_string(kGrhBytes) + "-byte GRH and a " + std::to_string(max_datagram_) +
                                "-byte datagram (set max_datagram, or bigger buffers)");
  if (std::string why = register_pool(o_.rx_pool); !why.empty()) throw std::runtime_error(name_ + ": " + why);

  size_t slots = 1;
  while (slots < 2 * size_t{o_.max_destinations}) slots <<= 1;
  index_.assign(slots, TxHeader::kUnresolved);
  dests_.reserve(o_.max_destinations);

  self_.lanes = static_cast<uint8_t>(o_.lanes);
  for (uint16_t l = 0; l < o_.lanes; ++l) create_lane(l);
  for (auto& l : lanes_) replenish(*l);
}

void VerbsPort::create_lane(uint16_t index) {
  auto lane = std::make_unique<Lane>();
  Lane& l = *lane;
  l.index = index;
  lanes_.push_back(std::move(lane));
  l.rq.assign(o_.rq_depth, nullptr);
  l.sq.assign(o_.sq_depth, nullptr);
  l.send_cq = v_.create_cq(ctx_, static_cast<int>(o_.sq_depth), nullptr);
  if (l.send_cq == nullptr) throw std::runtime_error(name_ + ": " + failed("ibv_create_cq", errno));
  l.recv_cq = v_.create_cq(ctx_, static_cast<int>(o_.rq_depth), comp_channel_);
  if (l.recv_cq == nullptr) throw std::runtime_error(name_ + ": " + failed("ibv_create_cq", errno));
  ibv_qp_init_attr qa{};
  qa.send_cq = l.send_cq;
  qa.recv_cq = l.recv_cq;
  qa.qp_type = IBV_QPT_UD;
  qa.sq_sig_all = 0;  // signalled once per burst (verbs_datapath.cc)
  qa.cap.max_send_wr = o_.sq_depth;
  qa.cap.max_recv_wr = o_.rq_depth;
  qa.cap.max_send_sge = caps_.max_send_sge;
  qa.cap.max_recv_sge = 1;
  qa.cap.max_inline_data = o_.max_inline;
  l.qp = v_.create_qp(pd_, &qa);
  if (l.qp == nullptr && o_.max_inline > 0) {  // some adapters take no inline data on UD
    qa.cap.max_inline_data = 0;
    l.qp = v_.create_qp(pd_, &qa);
  }
  if (l.qp == nullptr) throw std::runtime_error(name_ + ": " + failed("ibv_create_qp", errno));
  l.max_send_sge = qa.cap.max_send_sge;
  l.max_inline = qa.cap.max_inline_data;
  caps_.max_inline = l.max_inline;
  self_.qpn[index] = l.qp->qp_num;
  to_rts(l);
}

void VerbsPort::to_rts(Lane& l) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = o_.port_num;
  a.qkey = o_.qkey;
  if (int e = v_.modify_qp(l.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
    throw std::runtime_error(name_ + ": " + failed("ibv_modify_qp(INIT)", e));
  a = {};
  a.qp_state = IBV_QPS_RTR;
  if (int e = v_.modify_qp(l.qp, &a, IBV_QP_STATE))
    throw std::runtime_error(name_ + ": " + failed("ibv_modify_qp(RTR)", e));
  a = {};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = 0;
  if (int e = v_.modify_qp(l.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
    throw std::runtime_error(name_ + ": " + failed("ibv_modify_qp(RTS)", e));
}

void VerbsPort::release() noexcept {
  for (const Joined& j : std::vector<Joined>(joined_)) leave_group(j.lane, group_of(j.mgid));
  if (cm_id_ != nullptr) v_.destroy_id(cm_id_);
  if (channel_ != nullptr) v_.destroy_event_channel(channel_);
  cm_id_ = nullptr, channel_ = nullptr;
  drain_cq_events();  // a CQ with events not acknowledged cannot be destroyed
  for (auto& lp : lanes_) {
    Lane& l = *lp;
    if (l.qp != nullptr) v_.destroy_qp(l.qp);  // the adapter lets go of every buffer first
    if (l.send_cq != nullptr) v_.destroy_cq(l.send_cq);
    if (l.recv_cq != nullptr) v_.destroy_cq(l.recv_cq);
    for (uint32_t i = 0; i < l.rq_posted; ++i) rte_pktmbuf_free(l.rq[(l.rq_head + i) % l.rq.size()]);
    for (uint64_t s = l.sq_retired; s < l.sq_next; ++s)
      if (rte_mbuf* m = l.sq[s % l.sq.size()]) rte_pktmbuf_free(m);
  }
  lanes_.clear();
  for (Destination& d : dests_)
    if (d.ah != nullptr) v_.destroy_ah(d.ah);
  dests_.clear();
  for (Region& r : regions_) v_.dereg_mr(r.mr);
  regions_.clear();
  if (pd_ != nullptr) v_.dealloc_pd(pd_);
  if (comp_channel_ != nullptr) v_.destroy_comp_channel(comp_channel_);
  comp_channel_ = nullptr;
  if (ctx_ != nullptr) v_.close_device(ctx_);
  pd_ = nullptr, ctx_ = nullptr;
}

// Each chunk of the pool's memory becomes one memory region: the adapter
// then reads and writes mbufs where they lie (local write for receives).
std::string VerbsPort::register_pool(rte_mempool* pool) {
  if (pool == nullptr) return "no pool to register";
  for (const Region& r : regions_)
    if (r.pool == pool) return "";
  struct Walk {
    VerbsPort* port;
    rte_mempool* pool;
    std::string why;
  } w{this, pool, {}};
  rte_mempool_mem_iter(
      pool,
      [](rte_mempool*, void* arg, rte_mempool_memhdr* hdr, unsigned) {
        auto* w = static_cast<Walk*>(arg);
        if (!w->why.empty()) return;
        ibv_mr* mr = w->port->v_.reg_mr(w->port->pd_, hdr->addr, hdr->len,
                                        IBV_ACCESS_LOCAL_WRITE);
        if (mr == nullptr) {
          w->why = failed("ibv_reg_mr", errno) + " (" + std::to_string(hdr->len) + " bytes of pool " +
                   w->pool->name + "; is the locked-memory limit high enough?)";
          return;
        }
        const auto begin = reinterpret_cast<uintptr_t>(hdr->addr);
        w->port->regions_.push_back(Region{w->pool, begin, begin + hdr->len, mr});
      },
      &w);
  return w.why;
}

uint32_t VerbsPort::lkey_of(const rte_mempool* pool, uintptr_t addr) const {
  for (const Region& r : regions_)
    if (r.pool == pool && addr >= r.begin && addr < r.end) return r.mr->lkey;
  return 0;  // not registered: the adapter refuses the send (counted as an error)
}

ibv_ah* VerbsPort::make_ah(const ibv_gid& gid, uint16_t lid, bool global, std::string* why) {
  ibv_ah_attr a{};
  a.port_num = o_.port_num;
  a.dlid = lid;
  // RoCE needs the GRH (its IP header); IB within a subnet routes by LID.
  a.is_global = global || caps_.roce || lid == 0;
  if (a.is_global) {
    a.grh.dgid = gid;
    a.grh.sgid_index = static_cast<uint8_t>(gid_index_);
    a.grh.hop_limit = 64;
  }
  ibv_ah* ah = v_.create_ah(pd_, &a);
  if (ah == nullptr) *why = failed("ibv_create_ah", errno);
  return ah;
}

uint32_t VerbsPort::find_destination(const PeerAddress& a) const {
  const size_t mask = index_.size() - 1;
  for (size_t i = hash_of(a) & mask;; i = (i + 1) & mask) {
    const uint32_t d = index_[i];
    if (d == TxHeader::kUnresolved || dests_[d].addr == a) return d;
  }
}

std::string VerbsPort::add_destination(const Destination& d) {
  if (dests_.size() >= o_.max_destinations)
    return "more than " + std::to_string(o_.max_destinations) + " destinations (max_destinations)";
  const size_t mask = index_.size() - 1;
  size_t i = hash_of(d.addr) & mask;
  while (index_[i] != TxHeader::kUnresolved) i = (i + 1) & mask;
  dests_.push_back(d);
  index_[i] = static_cast<uint32_t>(dests_.size() - 1);
  return "";
}

std::string VerbsPort::learn_peers(const PeerAddress* peers, size_t count) {
  const PeerAddress own = address();
  for (size_t i = 0; i < count; ++i) {
    if (peers[i] == own || find_destination(peers[i]) != TxHeader::kUnresolved) continue;  // nothing goes to itself
    const std::optional<Endpoint> e = to_endpoint(peers[i]);
    if (!e) return "peer " + format_address(peers[i]) + " is not a UD endpoint address";
    if (e->qkey != o_.qkey)  // its datagrams would be dropped here, ours there, without a word
      return "peer " + describe(*e) + " uses another Q_Key than this port (" + std::to_string(o_.qkey) + ")";
    if (e->lanes < lanes_.size())
      return "peer " + format_address(peers[i]) + " has " + std::to_string(e->lanes) + " lanes, this port " +
             std::to_string(lanes_.size());
    std::string why;
    Destination d;
    d.addr = peers[i];
    d.ah = make_ah(e->gid, e->lid, false, &why);
    if (d.ah == nullptr) return "peer " + format_address(peers[i]) + ": " + why;
    std::copy(e->qpn, e->qpn + kMaxUdLanes, d.qpn);
    d.binding = binding_of(e->gid.raw, e->qpn[0]);
    if (std::string full = add_destination(d); !full.empty()) {
      v_.destroy_ah(d.ah);
      return full;
    }
  }
  return "";
}

void VerbsPort::write_link_header(uint8_t* at, const PeerAddress& dst) const {
  TxHeader h{};
  h.magic = TxHeader::kMagic;
  h.dest = find_destination(dst);
  if (h.dest != TxHeader::kUnresolved) h.binding = dests_[h.dest].binding;
  std::memcpy(at, &h, sizeof h);
}

bool VerbsPort::is_from(const uint8_t* link_header, const PeerAddress& peer) const {
  RxHeader h;
  std::memcpy(&h, link_header, sizeof h);
  const std::optional<Endpoint> e = to_endpoint(peer);
  return e && sent_by(h, *e);
}

PeerAddress VerbsPort::source_of(const uint8_t* link_header) const {
  RxHeader h;
  std::memcpy(&h, link_header, sizeof h);
  Endpoint e;
  std::memcpy(e.gid.raw, h.gid, 16);
  e.lid = slid_of(h);
  e.qkey = o_.qkey;  // it reached this queue pair: the Q_Key matched
  e.lanes = 1;
  e.qpn[0] = src_qpn_of(h);
  return to_address(e);
}

uint32_t VerbsPort::receives_posted(uint16_t lane) const { return lanes_.at(lane)->rq_posted; }

VerbsPort::Counters VerbsPort::counters() const {
  Counters c;
  for (const auto& lp : lanes_) {
    const auto& k = lp->c;
    c.rx_posted += k.rx_posted.get(), c.rx_completed += k.rx_completed.get(), c.rx_errors += k.rx_errors.get();
    c.rx_no_buffer += k.rx_no_buffer.get(), c.rq_low += k.rq_low.get(), c.rq_empty += k.rq_empty.get();
    c.tx_posted += k.tx_posted.get(), c.tx_completions += k.tx_completions.get(), c.tx_inline += k.tx_inline.get();
    c.tx_full += k.tx_full.get(), c.tx_unresolved += k.tx_unresolved.get(), c.tx_errors += k.tx_errors.get();
    c.tx_too_many_segments += k.tx_too_many_segments.get(), c.qp_recovered += k.qp_recovered.get();
  }
  c.wakeup_events = wakeup_events_.load(std::memory_order_relaxed);
  return c;
}

std::string describe(const VerbsPort::Capabilities& c) {
  return std::string(c.roce ? "RoCE" : "InfiniBand") + ", MTU " + std::to_string(c.mtu_bytes) + ", inline " +
         std::to_string(c.max_inline) + " B, " + std::to_string(c.max_send_sge) + " scatter entries, " +
         std::to_string(c.max_qp_wr) + " work requests, " + std::to_string(c.max_mcast_qp_attach) +
         " QPs per multicast group";
}

PortStats VerbsPort::stats() const {
  PortStats s;
  for (const auto& lp : lanes_) {
    s.rx_frames += lp->c.rx_frames.get();
    s.tx_frames += lp->c.tx_frames.get();
  }
  const Counters c = counters();
  s.tx_full = c.tx_full;
  s.rx_errors = c.rx_errors;
  s.tx_errors = c.tx_errors + c.tx_unresolved + c.tx_too_many_segments;
  s.rx_no_buffer = c.rx_no_buffer;
  s.rx_missed = c.rq_empty;
  return s;
}

}  // namespace lanecast::drivers::verbs
