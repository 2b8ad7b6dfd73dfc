// The model's objects: devices and their ports, contexts, protection domains,
// memory regions, completion queues, queue pairs; the table that hands them
// out; the trace. The datapath is in ud_model_wire.cc; where datagrams go -
// address handles, multicast attachment, the subnet administrator - in
// ud_model_addresses.cc.
#include "tests/verbs/ud_model.h"

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace lanecast::drivers::verbs::model {
namespace detail {

Fabric* current = nullptr;

std::string strf(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

const char* state_name(ibv_qp_state state) {
  switch (state) {
    case IBV_QPS_RESET: return "RESET";
    case IBV_QPS_INIT: return "INIT";
    case IBV_QPS_RTR: return "RTR";
    case IBV_QPS_RTS: return "RTS";
    case IBV_QPS_ERR: return "ERR";
    default: return "?";
  }
}

// Ours, not ibv_wc_status_str(): the model links no rdma-core library.
const char* status_name(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS: return "SUCCESS";
    case IBV_WC_LOC_LEN_ERR: return "LOC_LEN_ERR";
    case IBV_WC_LOC_PROT_ERR: return "LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR: return "WR_FLUSH_ERR";
    default: return "?";
  }
}

const char* rc_text(int rc) { return rc == 0 ? "0" : strerrorname_np(rc); }

void Fabric::flush_idle() {
  if (idle_count == 0) return;
  lines.push_back(idle + strf(" (x %llu)", static_cast<unsigned long long>(idle_count)));
  idle_count = 0;
  idle.clear();
}

void Fabric::trace(std::string line) {
  flush_idle();
  lines.push_back(std::move(line));
}

void Fabric::trace_idle(std::string line) {
  if (idle_count > 0 && line == idle) {
    ++idle_count;
    return;
  }
  flush_idle();
  idle = std::move(line);
  idle_count = 1;
}

size_t Fabric::trace_slot() {
  flush_idle();
  lines.emplace_back();
  return lines.size() - 1;
}

Device* Fabric::device_of(const ibv_device* d) const {
  for (const auto& dev : devices)
    if (&dev->verbs == d) return dev.get();
  return nullptr;
}

Device* Fabric::device_named(const std::string& name) const {
  for (const auto& dev : devices)
    if (name == dev->verbs.name) return dev.get();
  return nullptr;
}

bool Fabric::unreferenced(const Context& ctx) const {
  for (const auto& [p, pd] : pds)
    if (pd->ctx == &ctx) return false;
  for (const auto& [p, cq] : cqs)
    if (cq->ctx == &ctx) return false;
  for (const auto& [p, ch] : comp_channels)
    if (ch->ctx == &ctx) return false;
  for (const auto& [p, id] : ids)
    if (id->verbs.verbs == &ctx.verbs) return false;
  return true;
}

size_t Fabric::live() const {
  return device_lists.size() + contexts.size() + pds.size() + mrs.size() + cqs.size() + qps.size() + ahs.size() +
         channels.size() + ids.size() + events.size() + comp_channels.size();
}

void Fabric::free_all() {
  events.clear();
  ids.clear();
  channels.clear();
  ahs.clear();
  qps.clear();
  mrs.clear();
  cqs.clear();
  comp_channels.clear();
  pds.clear();
  contexts.clear();
  device_lists.clear();
}

Fabric* model() {
  if (!current) errno = ENODEV;
  return current;
}

namespace {

ibv_device** get_device_list(int* count) {
  Fabric* f = model();
  if (!f) return nullptr;
  auto list = std::make_unique<std::vector<ibv_device*>>();
  for (const auto& d : f->devices) list->push_back(&d->verbs);
  list->push_back(nullptr);
  if (count) *count = static_cast<int>(f->devices.size());
  ibv_device** array = list->data();
  f->device_lists.emplace(array, std::move(list));
  if (f->tracing()) f->trace(strf("ibv_get_device_list() -> %zu devices", f->devices.size()));
  return array;
}

void free_device_list(ibv_device** list) {
  Fabric* f = model();
  if (!f) return;
  bool known = f->device_lists.erase(list) > 0;
  if (f->tracing()) f->trace(strf("ibv_free_device_list() -> %s", known ? "freed" : "unknown list"));
}

const char* get_device_name(ibv_device* device) {
  Fabric* f = model();
  if (!f) return nullptr;
  Device* d = f->device_of(device);
  if (f->tracing()) f->trace(strf("ibv_get_device_name() -> %s", d ? d->verbs.name : "(unknown device)"));
  return d ? d->verbs.name : nullptr;
}

ibv_context* open_device(ibv_device* device) {
  Fabric* f = model();
  if (!f) return nullptr;
  Device* d = f->device_of(device);
  if (!d) {
    if (f->tracing()) f->trace("ibv_open_device(unknown device) -> NULL ENODEV");
    errno = ENODEV;
    return nullptr;
  }
  auto ctx = std::make_unique<Context>(Context{{}, d, f->next_context++});
  ctx->verbs.device = &d->verbs;
  ctx->verbs.cmd_fd = ctx->verbs.async_fd = -1;
  ctx->verbs.num_comp_vectors = 1;
  Context* c = ctx.get();
  d->open.push_back(c);
  f->contexts.emplace(c, std::move(ctx));
  if (f->tracing()) f->trace(strf("ibv_open_device(%s) -> context %d", d->verbs.name, c->index));
  return &c->verbs;
}

int close_device(ibv_context* context) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Context* c = find(f->contexts, context);
  int rc = !c ? EINVAL : !f->unreferenced(*c) ? EBUSY : 0;
  if (f->tracing())
    f->trace(strf("ibv_close_device(context %d) -> %s", c ? c->index : 0,
                  rc == 0 ? "0" : rc == EBUSY ? "EBUSY (PDs, CQs or cm ids still on it)" : "EINVAL"));
  if (rc) return rc;
  auto& open = c->device->open;
  open.erase(std::find(open.begin(), open.end(), c));
  f->contexts.erase(context);
  return 0;
}

int query_device(ibv_context* context, ibv_device_attr* attr) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Context* c = find(f->contexts, context);
  if (f->tracing()) f->trace(strf("ibv_query_device(context %d) -> %s", c ? c->index : 0, c ? "0" : "EINVAL"));
  if (!c || !attr) return EINVAL;
  const Options& o = f->opts;
  *attr = ibv_device_attr{};
  std::snprintf(attr->fw_ver, sizeof attr->fw_ver, "ud-model");
  std::memcpy(&attr->node_guid, &c->device->gids[0].raw[8], 8);  // big-endian, as the GID holds it
  attr->sys_image_guid = attr->node_guid;
  attr->max_mr_size = uint64_t{1} << 40;
  attr->page_size_cap = 4096;
  attr->vendor_id = 0x02c9;
  attr->max_qp = 1 << 16;
  attr->max_qp_wr = static_cast<int>(o.max_qp_wr);
  attr->max_sge = static_cast<int>(o.max_sge);
  attr->max_cq = 1 << 16;
  attr->max_cqe = static_cast<int>(o.max_cqe);
  attr->max_mr = 1 << 16;
  attr->max_pd = 1 << 16;
  attr->max_ah = 1 << 16;
  attr->max_mcast_grp = 1024;
  attr->max_mcast_qp_attach = static_cast<int>(o.max_mcast_qp_attach);
  attr->max_total_mcast_qp_attach = 8192;
  attr->max_pkeys = 1;
  attr->phys_port_cnt = 1;
  return 0;
}

int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Context* c = find(f->contexts, context);
  int rc = (!c || port != 1 || !attr) ? EINVAL : 0;
  if (f->tracing()) f->trace(strf("ibv_query_port(context %d, port %u) -> %d", c ? c->index : 0, port, rc));
  if (rc) return rc;
  const Device& d = *c->device;
  *attr = ibv_port_attr{};
  attr->state = IBV_PORT_ACTIVE;
  attr->max_mtu = attr->active_mtu = d.spec.mtu;
  attr->gid_tbl_len = static_cast<int>(d.gid_count);
  attr->port_cap_flags = 0;
  attr->max_msg_sz = 1u << 30;
  attr->pkey_tbl_len = 1;
  attr->lid = d.lid;
  attr->sm_lid = d.spec.roce ? 0 : 1;
  attr->max_vl_num = 1;
  attr->active_width = 2;  // 4x
  attr->active_speed = 32;  // EDR
  attr->phys_state = 5;    // LinkUp
  attr->link_layer = d.spec.roce ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
  return 0;
}

int query_gid_ex(ibv_context* context, uint32_t port, uint32_t index, ibv_gid_entry* entry) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Context* c = find(f->contexts, context);
  int rc = (!c || port != 1 || !entry || index >= c->device->gid_count) ? EINVAL : 0;
  if (f->tracing())
    f->trace(strf("ibv_query_gid_ex(context %d, port %u, index %u) -> %d%s", c ? c->index : 0, port, index, rc,
                  rc ? "" : (" (" + gid_text(c->device->gids[index].raw) + ")").c_str()));
  if (rc) return rc;
  *entry = ibv_gid_entry{};
  entry->gid = c->device->gids[index];
  entry->gid_index = index;
  entry->port_num = port;
  entry->gid_type = c->device->gid_types[index];
  entry->ndev_ifindex = 0;
  return 0;
}

ibv_pd* alloc_pd(ibv_context* context) {
  Fabric* f = model();
  if (!f) return nullptr;
  Context* c = find(f->contexts, context);
  if (!c) {
    if (f->tracing()) f->trace("ibv_alloc_pd(unknown context) -> NULL EINVAL");
    errno = EINVAL;
    return nullptr;
  }
  auto pd = std::make_unique<Pd>(Pd{{}, c, f->next_pd++});
  pd->verbs.context = context;
  Pd* p = pd.get();
  f->pds.emplace(p, std::move(pd));
  if (f->tracing()) f->trace(strf("ibv_alloc_pd(context %d) -> pd %d", c->index, p->index));
  return &p->verbs;
}

int dealloc_pd(ibv_pd* pd) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Pd* p = find(f->pds, pd);
  int rc = !p ? EINVAL : p->users > 0 ? EBUSY : 0;
  if (f->tracing()) f->trace(strf("ibv_dealloc_pd(pd %d) -> %s", p ? p->index : 0, rc_text(rc)));
  if (rc == 0) f->pds.erase(pd);
  return rc;
}

ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  Fabric* f = model();
  if (!f) return nullptr;
  Pd* p = find(f->pds, pd);
  // Remote write without local write is refused by the verbs too.
  int remote = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
  bool bad_access = (access & remote) && !(access & IBV_ACCESS_LOCAL_WRITE);
  if (!p || bad_access) {
    if (f->tracing()) f->trace(strf("ibv_reg_mr(%zu B, access 0x%x) -> NULL EINVAL", length, access));
    errno = EINVAL;
    return nullptr;
  }
  auto mr = std::make_unique<Mr>(Mr{{}, p, access});
  uint32_t lkey = f->next_lkey;
  f->next_lkey += 0x1d3;  // not consecutive: a driver must use the key it was given
  mr->verbs = ibv_mr{pd->context, pd, addr, length, 0, lkey, lkey};
  Mr* m = mr.get();
  f->mrs.emplace(m, std::move(mr));
  f->mr_by_lkey[lkey] = m;
  ++p->users;
  if (f->tracing())
    f->trace(strf("ibv_reg_mr(pd %d, %p, %zu B, access 0x%x) -> lkey 0x%x", p->index, addr, length, access, lkey));
  return &m->verbs;
}

int dereg_mr(ibv_mr* mr) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Mr* m = find(f->mrs, mr);
  if (f->tracing()) f->trace(strf("ibv_dereg_mr(lkey 0x%x) -> %s", m ? m->verbs.lkey : 0, m ? "0" : "EINVAL"));
  if (!m) return EINVAL;
  --m->pd->users;
  f->mr_by_lkey.erase(m->verbs.lkey);
  f->mrs.erase(mr);
  return 0;
}

ibv_cq* create_cq(ibv_context* context, int entries, ibv_comp_channel* channel) {
  Fabric* f = model();
  if (!f) return nullptr;
  Context* c = find(f->contexts, context);
  CompChannel* ch = channel ? find(f->comp_channels, channel) : nullptr;
  if (!c || entries < 1 || static_cast<uint32_t>(entries) > f->opts.max_cqe || (channel && (!ch || ch->ctx != c))) {
    if (f->tracing()) f->trace(strf("ibv_create_cq(%d entries) -> NULL EINVAL", entries));
    errno = EINVAL;
    return nullptr;
  }
  auto cq = std::make_unique<Cq>(Cq{{}, c, f->next_cq++, static_cast<size_t>(entries), {}});
  cq->verbs.context = context;
  cq->verbs.cqe = entries;
  cq->verbs.channel = channel;
  cq->channel = ch;
  if (ch) ++ch->cqs;
  Cq* q = cq.get();
  f->cqs.emplace(q, std::move(cq));
  if (f->tracing())
    f->trace(strf("ibv_create_cq(context %d, %d entries%s) -> cq %d", c->index, entries,
                  ch ? strf(", channel %d", ch->index).c_str() : "", q->index));
  return &q->verbs;
}

int destroy_cq(ibv_cq* cq) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Cq* q = find(f->cqs, cq);
  // rdma-core blocks until every event got was acknowledged; the model says EBUSY.
  int rc = !q ? EINVAL : q->users > 0 || q->events_got != q->events_acked ? EBUSY : 0;
  if (f->tracing())
    f->trace(strf("ibv_destroy_cq(cq %d) -> %s", q ? q->index : 0,
                  rc == 0 ? "0" : rc == EBUSY ? "EBUSY (a QP uses it, or events not acknowledged)" : "EINVAL"));
  if (rc == 0) {
    if (q->channel) --q->channel->cqs;
    f->cqs.erase(cq);
  }
  return rc;
}

std::string caps_text(const ibv_qp_cap& c) {
  std::string sge = c.max_send_sge == c.max_recv_sge ? strf("%u", c.max_send_sge)
                                                     : strf("%u/%u", c.max_send_sge, c.max_recv_sge);
  return strf("send %u recv %u sge %s inline %u", c.max_send_wr, c.max_recv_wr, sge.c_str(), c.max_inline_data);
}

ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  Fabric* f = model();
  if (!f) return nullptr;
  Pd* p = find(f->pds, pd);
  const Options& o = f->opts;
  Cq* scq = attr ? find(f->cqs, attr->send_cq) : nullptr;
  Cq* rcq = attr ? find(f->cqs, attr->recv_cq) : nullptr;
  const char* why = !p                                ? "unknown pd"
                    : !attr                           ? "no attributes"
                    : attr->qp_type != IBV_QPT_UD     ? "not UD (the model has UD QPs only)"
                    : attr->srq                       ? "an SRQ (not modelled)"
                    : !scq || !rcq                    ? "a send and a receive CQ are needed"
                    : scq->ctx != p->ctx || rcq->ctx != p->ctx ? "CQs of another context"
                    : std::max(attr->cap.max_send_wr, attr->cap.max_recv_wr) > o.max_qp_wr ? "more WRs than max_qp_wr"
                    : std::max(attr->cap.max_send_sge, attr->cap.max_recv_sge) > o.max_sge ? "more sges than max_sge"
                    : attr->cap.max_inline_data > o.max_inline ? "more inline data than the model's max_inline"
                                                               : nullptr;
  if (why) {
    if (f->tracing())
      f->trace(strf("ibv_create_qp(%s) -> NULL EINVAL: %s", attr ? caps_text(attr->cap).c_str() : "", why));
    errno = EINVAL;
    return nullptr;
  }
  attr->cap.max_inline_data = o.max_inline;  // adapters round up; the model to its one size
  auto qp = std::make_unique<Qp>(Qp{{}, p, scq, rcq, p->ctx->device, attr->cap, attr->sq_sig_all != 0});
  uint32_t qpn = f->next_qpn;
  do f->next_qpn = (f->next_qpn + 0x35) & 0xFFFFFF;  // not consecutive; never 0, 1 or 0xFFFFFF
  while (f->next_qpn < 2 || f->next_qpn == 0xFFFFFF);
  qp->verbs.context = pd->context;
  qp->verbs.qp_context = attr->qp_context;
  qp->verbs.pd = pd;
  qp->verbs.send_cq = attr->send_cq;
  qp->verbs.recv_cq = attr->recv_cq;
  qp->verbs.qp_num = qpn;
  qp->verbs.state = IBV_QPS_RESET;
  qp->verbs.qp_type = IBV_QPT_UD;
  Qp* q = qp.get();
  f->qps.emplace(q, std::move(qp));
  f->qp_by_num[qpn] = q;
  f->qp_counts[qpn] = QpCounts{};
  ++p->users;
  ++scq->users;
  ++rcq->users;
  if (f->tracing()) f->trace(strf("ibv_create_qp(ud, %s) -> qpn 0x%x", caps_text(attr->cap).c_str(), qpn));
  return &q->verbs;
}

int destroy_qp(ibv_qp* qp) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Qp* q = find(f->qps, qp);
  int rc = !q ? EINVAL : !q->attached.empty() ? EBUSY : 0;
  if (f->tracing())
    f->trace(strf("ibv_destroy_qp(qpn 0x%x) -> %s", q ? q->verbs.qp_num : 0,
                  rc == 0 ? "0" : rc == EBUSY ? "EBUSY (still attached to a multicast group)" : "EINVAL"));
  if (rc) return rc;
  --q->pd->users;
  --q->send_cq->users;
  --q->recv_cq->users;
  f->qp_by_num.erase(q->verbs.qp_num);
  f->qps.erase(qp);
  return 0;
}

}  // namespace
}  // namespace detail

using namespace detail;

UdModel::UdModel(const Options& options) {
  if (current) throw std::logic_error("UdModel: another model lives (the table finds its model through one pointer)");
  fabric_ = std::make_unique<Fabric>(options);
  current = fabric_.get();
}

UdModel::~UdModel() {
  fabric_->free_all();
  current = nullptr;
}

std::string UdModel::add_device(const PortSpec& spec) {
  Fabric& f = *fabric_;
  auto d = std::make_unique<Device>();
  int n = static_cast<int>(f.devices.size());
  d->verbs = ibv_device{};
  d->verbs.node_type = IBV_NODE_CA;
  d->verbs.transport_type = IBV_TRANSPORT_IB;
  std::snprintf(d->verbs.name, sizeof d->verbs.name, "model_%d", n);
  std::snprintf(d->verbs.dev_name, sizeof d->verbs.dev_name, "uverbs%d", n);
  std::snprintf(d->verbs.dev_path, sizeof d->verbs.dev_path, "/sys/class/infiniband_verbs/uverbs%d", n);
  std::snprintf(d->verbs.ibdev_path, sizeof d->verbs.ibdev_path, "/sys/class/infiniband/model_%d", n);
  d->index = n;
  d->spec = spec;
  uint16_t ib_ports = 0;
  for (const auto& other : f.devices) ib_ports += other->spec.roce ? 0 : 1;
  d->lid = spec.roce ? 0 : static_cast<uint16_t>(ib_ports + 1);
  // The link-local GID: fe80::/64 and the port's GUID, 00:02:c9 (Mellanox) 03 00 NN NN NN.
  uint64_t guid = 0x0002c90300000000ULL | ((static_cast<uint64_t>(n + 1) * 0x010101) & 0xFFFFFF);
  ibv_gid link_local{};
  link_local.raw[0] = 0xfe;
  link_local.raw[1] = 0x80;
  for (int i = 0; i < 8; ++i) link_local.raw[8 + i] = static_cast<uint8_t>(guid >> (56 - 8 * i));
  d->gids[0] = link_local;
  if (spec.roce) {
    d->gid_types = {IBV_GID_TYPE_ROCE_V1, IBV_GID_TYPE_ROCE_V2};
    ibv_gid v4{};  // ::ffff:10.77.0.(n + 1)
    v4.raw[10] = v4.raw[11] = 0xff;
    v4.raw[12] = 10;
    v4.raw[13] = 77;
    v4.raw[15] = static_cast<uint8_t>(n + 1);
    d->gids[1] = v4;
    d->gid_count = 2;
  } else {
    d->gid_types = {IBV_GID_TYPE_IB, IBV_GID_TYPE_IB};
    d->gids[1] = ibv_gid{};
    d->gid_count = 1;
  }
  std::string name = d->verbs.name;
  f.devices.push_back(std::move(d));
  return name;
}

const VerbsCalls& UdModel::calls() const {
  static const VerbsCalls table = {
      "ud-model",
      get_device_list, free_device_list, get_device_name, open_device, close_device, query_device, query_port,
      query_gid_ex,
      alloc_pd, dealloc_pd, reg_mr, dereg_mr, create_cq, destroy_cq, create_qp, modify_qp, destroy_qp, create_ah,
      destroy_ah, attach_mcast, detach_mcast,
      create_comp_channel, destroy_comp_channel, req_notify_cq, get_cq_event, ack_cq_events,
      post_send, post_recv, poll_cq,
      create_event_channel, destroy_event_channel, create_id, destroy_id, bind_addr, join_multicast,
      leave_multicast, wait_cm_event, get_cm_event, ack_cm_event,
  };
  return table;
}

UdModel::QpCounts UdModel::qp_counts(uint32_t qp_num) const {
  auto it = fabric_->qp_counts.find(qp_num);
  return it == fabric_->qp_counts.end() ? QpCounts{} : it->second;
}

UdModel::Counters UdModel::counters() const { return fabric_->counters; }

const std::vector<std::string>& UdModel::trace() const {
  fabric_->flush_idle();  // the idle polls so far, counted
  return fabric_->lines;
}

void UdModel::clear_trace() {
  fabric_->lines.clear();
  fabric_->idle.clear();
  fabric_->idle_count = 0;
}

uint16_t UdModel::lid_of(const std::string& device) const {
  const Device* d = fabric_->device_named(device);
  if (!d) throw std::invalid_argument("UdModel::lid_of: no device " + device);
  return d->lid;
}

ibv_gid UdModel::gid_of(const std::string& device, uint32_t index) const {
  const Device* d = fabric_->device_named(device);
  if (!d || index >= d->gid_count)
    throw std::invalid_argument("UdModel::gid_of: no device " + device + " or no such GID index");
  return d->gids[index];
}

size_t UdModel::live_objects() const { return fabric_->live(); }

}  // namespace lanecast::drivers::verbs::model
