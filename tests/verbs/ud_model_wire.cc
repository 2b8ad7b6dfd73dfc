// The model's datapath: queue-pair states, posting receives and sends, the
// wire between ports (each send executed at once, inside post_send), and
// completions. What it does is stated point by point in ud_model.h (4, 5, 6).
#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tests/verbs/ud_model.h"

namespace lanecast::drivers::verbs::model::detail {
namespace {

constexpr uint32_t kGrhBytes = 40;         // every UD receive starts with the GRH area
constexpr uint32_t kMulticastQpn = 0xFFFFFF;  // the IB spec's DestQP for multicast

uint32_t mtu_bytes(ibv_mtu mtu) { return 256u << (static_cast<int>(mtu) - 1); }

QpCounts& counts(Fabric& f, const Qp& qp) { return f.qp_counts[qp.verbs.qp_num]; }

// Inside an MR of that lkey and PD, and writable by the adapter when it
// scatters into it.
bool covers(const Fabric& f, const ibv_sge& sge, const Pd* pd, bool write) {
  auto it = f.mr_by_lkey.find(sge.lkey);
  if (it == f.mr_by_lkey.end()) return false;
  const Mr& mr = *it->second;
  uintptr_t begin = reinterpret_cast<uintptr_t>(mr.verbs.addr);
  return mr.pd == pd && (!write || (mr.access & IBV_ACCESS_LOCAL_WRITE)) && sge.addr >= begin &&
         sge.addr + sge.length <= begin + mr.verbs.length;
}

void push(Fabric& f, Cq& cq, const Completion& c) {
  if (cq.overrun) return;  // lost: the CQ is already in error
  if (cq.entries.size() >= cq.capacity) {
    cq.overrun = true;  // as an adapter raising IBV_EVENT_CQ_ERR
    ++f.counters.cq_overruns;
    if (f.tracing())
      f.trace(strf("  cq %d overrun: %zu completions held, poll_cq fails from now on", cq.index, cq.capacity));
    return;
  }
  cq.entries.push_back(c);
  completion_event(f, cq);
}

void complete_send(Fabric& f, Qp& qp, uint64_t seq, uint64_t wr_id, ibv_wc_status status) {
  ibv_wc wc{};
  wc.wr_id = wr_id;
  wc.status = status;
  wc.opcode = IBV_WC_SEND;
  wc.qp_num = qp.verbs.qp_num;
  push(f, *qp.send_cq, Completion{wc, true, seq});
  ++counts(f, qp).completed_sends;
  qp.sq_completed = seq + 1;
  qp.unretired.clear();
}

void complete_recv(Fabric& f, Qp& qp, const ibv_wc& wc) {
  push(f, *qp.recv_cq, Completion{wc, false, 0});
  ++counts(f, qp).completed_recvs;
}

// ERR: what the QP holds comes back flushed, receives first.
void to_error(Fabric& f, Qp& qp) {
  qp.verbs.state = IBV_QPS_ERR;
  size_t recvs = qp.recvs.size(), sends = qp.unretired.size();
  for (const RecvWr& r : qp.recvs) {
    ibv_wc wc{};
    wc.wr_id = r.wr_id;
    wc.status = IBV_WC_WR_FLUSH_ERR;
    wc.opcode = IBV_WC_RECV;
    wc.qp_num = qp.verbs.qp_num;
    complete_recv(f, qp, wc);
  }
  qp.recvs.clear();
  std::deque<uint64_t> unretired;
  unretired.swap(qp.unretired);
  uint64_t seq = qp.sq_completed;
  for (uint64_t wr_id : unretired) complete_send(f, qp, seq++, wr_id, IBV_WC_WR_FLUSH_ERR);
  if (f.tracing()) f.trace(strf("  qpn 0x%x to ERR: %zu receives, %zu sends flushed", qp.verbs.qp_num, recvs, sends));
}

// RESET: forgotten without completions, every slot free again.
void to_reset(Qp& qp) {
  qp.verbs.state = IBV_QPS_RESET;
  qp.recvs.clear();
  qp.unretired.clear();
  qp.sq_completed = qp.sq_released = qp.sq_posted;
  qp.qkey = 0;
}

// The IB spec's UD transitions: the attributes a transition needs, and those
// it may also carry.
bool transition(ibv_qp_state from, ibv_qp_state to, int& required, int& optional) {
  optional = 0;
  if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) {
    required = IBV_QP_STATE;
  } else if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
    required = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY;
  } else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
    required = IBV_QP_STATE;
    optional = IBV_QP_PKEY_INDEX | IBV_QP_QKEY;
  } else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
    required = IBV_QP_STATE | IBV_QP_SQ_PSN;
    optional = IBV_QP_QKEY;
  } else if (from == IBV_QPS_RTS && to == IBV_QPS_RTS) {
    required = IBV_QP_QKEY;
    optional = IBV_QP_STATE;
  } else {
    return false;
  }
  return true;
}

enum class Header { none, ipv6, ipv4 };

// The 40 bytes a global sender's datagram brings into the GRH area. Lengths
// are the wire's: BTH 12 + DETH 8 (+ ImmDt 4) + payload + ICRC 4, and UDP's
// 8 on RoCE v2.
Header network_header(const Device& src, const ibv_ah_attr& a, uint32_t len, bool imm, uint8_t* g) {
  if (!a.is_global) return Header::none;
  const uint8_t* sgid = src.gids[a.grh.sgid_index].raw;
  bool v2 = src.gid_types[a.grh.sgid_index] == IBV_GID_TYPE_ROCE_V2;
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  uint32_t transport = 12 + 8 + (imm ? 4 : 0) + len + 4;
  if (v2 && std::memcmp(sgid, kMapped, 12) == 0) {
    uint8_t* h = g + 20;  // IPv4 in the last 20 bytes, as rdma-core documents for RoCE v2 over IPv4
    uint32_t total = 20 + 8 + transport;
    uint8_t header[20] = {0x45, a.grh.traffic_class, static_cast<uint8_t>(total >> 8), static_cast<uint8_t>(total),
                          0, 0, 0x40, 0, a.grh.hop_limit, 17, 0, 0};
    std::memcpy(header + 12, sgid + 12, 4);
    std::memcpy(header + 16, a.grh.dgid.raw + 12, 4);
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += (header[i] << 8) | header[i + 1];
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    header[10] = static_cast<uint8_t>(~sum >> 8);
    header[11] = static_cast<uint8_t>(~sum);
    std::memcpy(h, header, 20);
    return Header::ipv4;
  }
  uint32_t flow = a.grh.flow_label, payload = (v2 ? 8 : 0) + transport;
  g[0] = static_cast<uint8_t>(0x60 | (a.grh.traffic_class >> 4));
  g[1] = static_cast<uint8_t>((a.grh.traffic_class << 4) | ((flow >> 16) & 0xF));
  g[2] = static_cast<uint8_t>(flow >> 8);
  g[3] = static_cast<uint8_t>(flow);
  g[4] = static_cast<uint8_t>(payload >> 8);
  g[5] = static_cast<uint8_t>(payload);
  g[6] = v2 ? 17 : 0x1B;  // UDP on RoCE v2; IB's next header (BTH) on IB and RoCE v1
  g[7] = a.grh.hop_limit;
  std::memcpy(g + 8, sgid, 16);
  std::memcpy(g + 24, a.grh.dgid.raw, 16);
  return Header::ipv6;
}

// Writes n bytes at offset `at` of the message that the sges lay out.
void scatter(const std::vector<ibv_sge>& sges, uint64_t at, const uint8_t* src, uint64_t n) {
  for (const ibv_sge& s : sges) {
    if (n == 0) return;
    if (at >= s.length) {
      at -= s.length;
      continue;
    }
    uint64_t k = std::min<uint64_t>(n, s.length - at);
    std::memcpy(reinterpret_cast<uint8_t*>(s.addr) + at, src, k);
    src += k;
    n -= k;
    at = 0;
  }
}

// What one send puts on the wire, shared by its copies.
struct Datagram {
  const Qp& src;
  const ibv_send_wr& wr;
  const Ah& ah;
  const uint8_t* data;
  uint32_t len;
  Header header;
  uint8_t grh[kGrhBytes];
  bool multicast;
};

void wire(Fabric& f, const Datagram& d, const Qp& dst, const char* what) {
  if (f.tracing())
    f.trace(strf("  wire: %u B qpn 0x%x -> qpn 0x%x %s", d.len, d.src.verbs.qp_num, dst.verbs.qp_num, what));
}

void deliver_copy(Fabric& f, const Datagram& d, Qp& dst) {
  QpCounts& dc = counts(f, dst);
  double loss = d.multicast ? f.opts.multicast_loss : f.opts.unicast_loss;
  if (loss > 0 && std::uniform_real_distribution<double>(0, 1)(f.rng) < loss) {
    ++dc.loss_drops, ++f.counters.loss_drops;
    return wire(f, d, dst, d.multicast ? "dropped: lost (multicast_loss)" : "dropped: lost (unicast_loss)");
  }
  if (dst.verbs.state != IBV_QPS_RTR && dst.verbs.state != IBV_QPS_RTS) {
    ++dc.state_drops, ++f.counters.state_drops;
    return wire(f, d, dst, strf("dropped: receiving QP in %s", state_name(dst.verbs.state)).c_str());
  }
  if (d.wr.wr.ud.remote_qkey != dst.qkey) {
    ++dc.qkey_drops, ++f.counters.qkey_drops;
    return wire(f, d, dst, strf("dropped: Q_Key 0x%x, the QP's is 0x%x", d.wr.wr.ud.remote_qkey, dst.qkey).c_str());
  }
  if (dst.recvs.empty()) {
    ++dc.rnr_drops, ++f.counters.rnr_drops;
    return wire(f, d, dst, "dropped: no receive posted");
  }
  RecvWr r = std::move(dst.recvs.front());
  dst.recvs.pop_front();
  ibv_wc wc{};
  wc.wr_id = r.wr_id;
  wc.opcode = IBV_WC_RECV;
  wc.qp_num = dst.verbs.qp_num;
  uint64_t room = 0;
  for (const ibv_sge& s : r.sges) room += s.length;
  if (room < kGrhBytes + d.len) {
    wc.status = IBV_WC_LOC_LEN_ERR;
    ++dc.len_errors;
    complete_recv(f, dst, wc);
    return wire(f, d, dst,
                strf("LOC_LEN_ERR: the receive holds %llu B", static_cast<unsigned long long>(room)).c_str());
  }
  for (const ibv_sge& s : r.sges) {
    if (!covers(f, s, dst.pd, true)) {
      wc.status = IBV_WC_LOC_PROT_ERR;
      ++f.counters.prot_errors;
      complete_recv(f, dst, wc);
      wire(f, d, dst, "LOC_PROT_ERR: a receive sge outside a local-write MR of its lkey");
      return to_error(f, dst);
    }
  }
  if (d.header == Header::ipv6) scatter(r.sges, 0, d.grh, kGrhBytes);
  if (d.header == Header::ipv4) scatter(r.sges, 20, d.grh + 20, 20);
  scatter(r.sges, kGrhBytes, d.data, d.len);
  bool imm = d.wr.opcode == IBV_WR_SEND_WITH_IMM;
  wc.status = IBV_WC_SUCCESS;
  wc.byte_len = kGrhBytes + d.len;
  wc.src_qp = d.src.verbs.qp_num;
  wc.slid = d.src.device->lid;
  wc.sl = d.ah.attr.sl;
  wc.wc_flags = (d.header != Header::none ? IBV_WC_GRH : 0) | (imm ? IBV_WC_WITH_IMM : 0);
  if (imm) wc.imm_data = d.wr.imm_data;
  wc.pkey_index = 0;
  complete_recv(f, dst, wc);
  ++f.counters.copies_delivered;
  wire(f, d, dst, "delivered");
}

void no_destination(Fabric& f, const Datagram& d, const std::string& why) {
  ++f.counters.no_such_qp;
  if (f.tracing()) f.trace(strf("  wire: %u B qpn 0x%x -> %s", d.len, d.src.verbs.qp_num, why.c_str()));
}

void deliver(Fabric& f, const Datagram& d) {
  const ibv_ah_attr& a = d.ah.attr;
  const Device& from = *d.src.device;
  if (d.multicast) {
    Gid mgid = gid_key(a.grh.dgid);
    std::string to = f.tracing() ? "mgid " + gid_text(mgid.data()) : "";
    auto g = f.groups.find(mgid);
    if (d.wr.wr.ud.remote_qpn != kMulticastQpn)
      return no_destination(f, d, to + ": dropped, remote_qpn is not 0xffffff");
    if (g == f.groups.end()) return no_destination(f, d, to + ": dropped, no such group");
    if (!from.spec.roce && g->second.mlid != a.dlid)
      return no_destination(f, d,
                            to + strf(": dropped, dlid 0x%x is not the group's MLID 0x%x", a.dlid, g->second.mlid));
    size_t copies = 0;
    for (const auto& [index, ids] : g->second.members) {
      Device& port = *f.devices[index];
      auto qps = port.attached.find(mgid);
      if (ids == 0 || port.spec.roce != from.spec.roce || qps == port.attached.end()) continue;
      for (Qp* qp : qps->second) {
        if (qp == &d.src && !f.opts.multicast_loopback) continue;
        deliver_copy(f, d, *qp);
        ++copies;
      }
    }
    if (copies == 0) no_destination(f, d, to + ": no QP attached on a member port");
    return;
  }
  Device* port = nullptr;
  for (const auto& dev : f.devices) {
    if (dev->spec.roce != from.spec.roce) continue;
    bool by_gid = a.is_global;  // RoCE AHs are always global
    for (uint32_t i = 0; by_gid && i < dev->gid_count; ++i)
      if (std::memcmp(dev->gids[i].raw, a.grh.dgid.raw, 16) == 0) port = dev.get();
    if (!by_gid && dev->lid == a.dlid) port = dev.get();
    if (port) break;
  }
  auto qp = f.qp_by_num.find(d.wr.wr.ud.remote_qpn);
  if (!port || qp == f.qp_by_num.end() || qp->second->device != port)
    return no_destination(f, d, strf("qpn 0x%x %s: dropped, no such QP", d.wr.wr.ud.remote_qpn,
                                     a.is_global ? ("gid " + gid_text(a.grh.dgid.raw)).c_str()
                                                 : strf("lid %u", a.dlid).c_str()));
  deliver_copy(f, d, *qp->second);
}

// One WR, from gather to completion.
void execute(Fabric& f, Qp& qp, const ibv_send_wr& wr, const Ah& ah, uint64_t total) {
  uint64_t seq = qp.sq_posted++;
  ++counts(f, qp).posted_sends;
  bool inline_data = wr.send_flags & IBV_SEND_INLINE;
  f.gathered.resize(total);
  uint8_t* out = f.gathered.data();
  for (int i = 0; i < wr.num_sge; ++i) {
    const ibv_sge& s = wr.sg_list[i];
    if (!inline_data && !covers(f, s, qp.pd, false)) {
      ++f.counters.prot_errors;
      if (f.tracing())
        f.trace(strf("  wire: qpn 0x%x LOC_PROT_ERR: sge %d outside an MR of lkey 0x%x", qp.verbs.qp_num, i, s.lkey));
      complete_send(f, qp, seq, wr.wr_id, IBV_WC_LOC_PROT_ERR);
      return to_error(f, qp);
    }
    if (s.length) std::memcpy(out, reinterpret_cast<const void*>(s.addr), s.length);
    out += s.length;
  }
  uint32_t mtu = mtu_bytes(qp.device->spec.mtu);
  if (total > mtu) {
    ++f.counters.mtu_errors;
    if (f.tracing())
      f.trace(strf("  wire: qpn 0x%x LOC_LEN_ERR: %llu B over the MTU (%u B)", qp.verbs.qp_num,
                   static_cast<unsigned long long>(total), mtu));
    return complete_send(f, qp, seq, wr.wr_id, IBV_WC_LOC_LEN_ERR);
  }
  ++f.counters.datagrams_sent;
  const ibv_ah_attr& a = ah.attr;
  bool multicast = a.is_global && is_multicast(a.grh.dgid.raw) && (qp.device->spec.roce || a.dlid >= 0xC000);
  Datagram d{qp, wr, ah, f.gathered.data(), static_cast<uint32_t>(total), Header::none, {}, multicast};
  d.header = network_header(*qp.device, a, d.len, wr.opcode == IBV_WR_SEND_WITH_IMM, d.grh);
  deliver(f, d);
  if (qp.sig_all || (wr.send_flags & IBV_SEND_SIGNALED))
    complete_send(f, qp, seq, wr.wr_id, IBV_WC_SUCCESS);
  else
    qp.unretired.push_back(wr.wr_id);
}

std::string wr_text(const ibv_send_wr& wr, uint64_t total, const Ah* ah) {
  std::string to = strf("%llu B to ", static_cast<unsigned long long>(total));
  if (!ah) to += "an unknown ah";
  else if (ah->attr.is_global && is_multicast(ah->attr.grh.dgid.raw))
    to += "mgid " + gid_text(ah->attr.grh.dgid.raw) + strf(" mlid 0x%x", ah->attr.dlid);
  else if (ah->attr.is_global)
    to += strf("qpn 0x%x gid ", wr.wr.ud.remote_qpn) + gid_text(ah->attr.grh.dgid.raw);
  else
    to += strf("qpn 0x%x lid %u", wr.wr.ud.remote_qpn, ah->attr.dlid);
  if (wr.send_flags & IBV_SEND_INLINE) to += " inline";
  if (wr.send_flags & IBV_SEND_SIGNALED) to += " signaled";
  if (wr.opcode == IBV_WR_SEND_WITH_IMM) to += strf(" imm 0x%x", ntohl(wr.imm_data));
  return to;
}

// A send or receive WR's sge list: within the QP's limit, and there.
template <class Wr>
bool sges_fit(const Wr& wr, uint32_t max) {
  return wr.num_sge >= 0 && static_cast<uint32_t>(wr.num_sge) <= max && (wr.num_sge == 0 || wr.sg_list);
}

}  // namespace

int modify_qp(ibv_qp* q, ibv_qp_attr* attr, int mask) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Qp* qp = find(f->qps, q);
  ibv_qp_state from = qp ? qp->verbs.state : IBV_QPS_RESET;
  ibv_qp_state to = attr && (mask & IBV_QP_STATE) ? attr->qp_state : from;
  int required = 0, optional = 0;
  const char* why = !qp || !attr                                    ? "unknown QP or no attributes"
                    : !transition(from, to, required, optional)     ? "not a UD transition"
                    : (mask & required) != required                 ? "an attribute the transition needs is missing"
                    : (mask & ~(required | optional)) != 0          ? "an attribute the transition does not take"
                    : (mask & IBV_QP_PORT) && attr->port_num != 1   ? "port is not 1"
                    : (mask & IBV_QP_PKEY_INDEX) && attr->pkey_index != 0 ? "pkey_index is not 0 (one P_Key)"
                                                                    : nullptr;
  if (f->tracing()) {
    std::string args = qp ? strf("qpn 0x%x, %s", qp->verbs.qp_num, state_name(to)) : "unknown qp";
    if (attr && (mask & IBV_QP_QKEY)) args += strf(" qkey 0x%x", attr->qkey);
    if (attr && (mask & IBV_QP_PORT)) args += strf(" port %u", attr->port_num);
    if (attr && (mask & IBV_QP_SQ_PSN)) args += strf(" sq_psn %u", attr->sq_psn);
    f->trace(strf("ibv_modify_qp(%s) -> %s%s", args.c_str(), why ? "EINVAL: " : "0", why ? why : ""));
  }
  if (why) return EINVAL;
  if (mask & IBV_QP_QKEY) qp->qkey = attr->qkey;
  if (to == IBV_QPS_ERR) to_error(*f, *qp);
  else if (to == IBV_QPS_RESET) to_reset(*qp);
  else qp->verbs.state = to;
  return 0;
}

int post_recv(ibv_qp* q, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Qp* qp = find(f->qps, q);
  ibv_qp_state state = qp ? qp->verbs.state : IBV_QPS_RESET;
  bool receiving = state == IBV_QPS_INIT || state == IBV_QPS_RTR || state == IBV_QPS_RTS;
  const char* why = !qp ? "unknown QP" : !receiving ? "QP not in INIT, RTR or RTS" : nullptr;
  int rc = why ? EINVAL : 0;
  size_t posted = 0;
  ibv_recv_wr* at = wr;
  for (; !rc && at; at = at->next) {
    if (!sges_fit(*at, qp->cap.max_recv_sge)) {
      rc = EINVAL, why = "num_sge over max_recv_sge, or no sg_list";
      break;
    }
    if (qp->recvs.size() >= qp->cap.max_recv_wr) {
      rc = ENOMEM, why = "the receive queue is full";
      break;
    }
    qp->recvs.push_back(RecvWr{at->wr_id, std::vector<ibv_sge>(at->sg_list, at->sg_list + at->num_sge)});
    ++counts(*f, *qp).posted_recvs;
    ++posted;
  }
  if (rc && bad) *bad = at;
  if (f->tracing()) {
    size_t n = posted;
    for (ibv_recv_wr* w = at; w; w = w->next) ++n;
    f->trace(strf("ibv_post_recv(qpn 0x%x, %zu wr) -> %s", qp ? qp->verbs.qp_num : 0, n, rc_text(rc)) +
             (rc ? strf(" (%zu posted): %s", posted, why) : ""));
  }
  return rc;
}

int post_send(ibv_qp* q, ibv_send_wr* wr, ibv_send_wr** bad) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Qp* qp = find(f->qps, q);
  size_t line = f->tracing() ? f->trace_slot() : 0;  // written once the wire lines are in
  int rc = 0;
  const char* why = qp ? nullptr : "unknown QP";
  size_t posted = 0;
  std::string first, last;
  // A WR that sends the QP to ERR (a protection error) leaves the rest of
  // the list posted and flushed, as an adapter flushes what it had accepted.
  bool flushing = false;
  ibv_send_wr* at = wr;
  for (; qp && at; at = at->next) {
    bool sges_ok = sges_fit(*at, qp->cap.max_send_sge);  // before reading them
    uint64_t total = 0;
    for (int i = 0; sges_ok && i < at->num_sge; ++i) total += at->sg_list[i].length;
    const Ah* ah = find(f->ahs, at->wr.ud.ah);
    why = qp->verbs.state != IBV_QPS_RTS && !flushing ? "QP not in RTS"
          : at->opcode != IBV_WR_SEND && at->opcode != IBV_WR_SEND_WITH_IMM ? "not SEND or SEND_WITH_IMM (UD)"
          : !sges_ok ? "num_sge over max_send_sge, or no sg_list"
          : (at->send_flags & IBV_SEND_INLINE) && total > qp->cap.max_inline_data ? "inline data over max_inline_data"
          : !ah || ah->pd != qp->pd ? "wr.ud.ah is not an AH of the QP's PD"
                                    : nullptr;
    rc = why ? EINVAL : 0;
    if (!why && qp->sq_posted - qp->sq_released >= qp->cap.max_send_wr) rc = ENOMEM, why = "the send queue is full";
    if (rc) break;
    if (f->tracing()) (posted == 0 ? first : last) = wr_text(*at, total, ah);
    ++posted;
    if (flushing) {
      ++counts(*f, *qp).posted_sends;
      complete_send(*f, *qp, qp->sq_posted++, at->wr_id, IBV_WC_WR_FLUSH_ERR);
      continue;
    }
    execute(*f, *qp, *at, *ah, total);
    flushing = qp->verbs.state == IBV_QPS_ERR;
  }
  if (!qp) rc = EINVAL;
  if (rc && bad) *bad = at;
  if (f->tracing()) {
    size_t n = posted;
    for (ibv_send_wr* w = at; w; w = w->next) ++n;
    std::string list = posted == 0 ? "" : posted == 1 ? ": " + first : posted == 2 ? ": " + first + " | " + last
                                                                                  : ": " + first + " | ... | " + last;
    f->lines[line] = strf("ibv_post_send(qpn 0x%x, %zu wr%s) -> %s", qp ? qp->verbs.qp_num : 0, n, list.c_str(),
                          rc_text(rc)) +
                     (rc ? strf(" (%zu posted): %s", posted, why) : "");
  }
  return rc;
}

int poll_cq(ibv_cq* c, int max, ibv_wc* wc) {
  Fabric* f = current;
  if (!f) return -1;
  Cq* cq = find(f->cqs, c);
  if (!cq || max < 0 || (max > 0 && !wc) || cq->overrun) {
    // The same failure again and again is one line, as idle polls are.
    if (f->tracing())
      f->trace_idle(strf("ibv_poll_cq(cq %d, max %d) -> -1 (%s)", cq ? cq->index : 0, max,
                         cq && cq->overrun ? "CQ overrun" : "invalid"));
    errno = EINVAL;
    return -1;
  }
  int n = static_cast<int>(std::min<size_t>(static_cast<size_t>(max), cq->entries.size()));
  int recvs = 0, sends = 0, errors = 0;
  ibv_wc_status first_error = IBV_WC_SUCCESS;
  for (int i = 0; i < n; ++i) {
    const Completion& c = cq->entries.front();
    wc[i] = c.wc;
    if (c.send) {
      ++sends;
      // Polled: this WR's slot, and those of the unsignaled WRs before it, are free.
      auto qp = f->qp_by_num.find(c.wc.qp_num);
      if (qp != f->qp_by_num.end()) qp->second->sq_released = std::max(qp->second->sq_released, c.seq + 1);
    } else {
      ++recvs;
    }
    if (c.wc.status != IBV_WC_SUCCESS && errors++ == 0) first_error = c.wc.status;
    cq->entries.pop_front();
  }
  if (f->tracing()) {
    std::string call = strf("ibv_poll_cq(cq %d, max %d) -> %d", cq->index, max, n);
    if (n == 0) f->trace_idle(call);
    else
      f->trace(call + strf(" (%d recv, %d send", recvs, sends) +
               (errors ? strf("; %d in error, the first %s)", errors, status_name(first_error)) : ")"));
  }
  return n;
}

}  // namespace lanecast::drivers::verbs::model::detail
