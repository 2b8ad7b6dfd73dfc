// Where datagrams go, in the model: address handles; QPs attached to MGIDs on
// their adapter (attach_mcast); the subnet administrator that makes a port a
// member of a group, reached through librdmacm's ids, event channels and
// events. A datagram to a group reaches the attached QPs of member ports
// only (ud_model_wire.cc). What it does is stated in ud_model.h (7, 8).
#include <arpa/inet.h>
#include <infiniband/ib.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tests/verbs/ud_model.h"

namespace lanecast::drivers::verbs::model::detail {

Gid gid_key(const ibv_gid& gid) {
  Gid key;
  std::memcpy(key.data(), gid.raw, key.size());
  return key;
}

std::string gid_text(const uint8_t* raw16) {
  char buf[INET6_ADDRSTRLEN];
  return inet_ntop(AF_INET6, raw16, buf, sizeof buf) ? buf : "?";
}

bool is_multicast(const uint8_t* g) {
  static constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return g[0] == 0xff || (std::memcmp(g, kMapped, 12) == 0 && (g[12] & 0xF0) == 0xE0);
}

namespace {

std::string qp_text(const Qp* qp) { return qp ? strf("qpn 0x%x", qp->verbs.qp_num) : "unknown qp"; }

// The 16 bytes an address names: a GID or MGID (AF_IB, AF_INET6), or an IPv4
// address as RoCE v2 maps it (AF_INET: ::ffff:a.b.c.d).
bool address_of(const sockaddr* sa, Gid& out) {
  if (!sa) return false;
  out = Gid{};
  if (sa->sa_family == AF_IB) {
    std::memcpy(out.data(), &reinterpret_cast<const sockaddr_ib*>(sa)->sib_addr, 16);
  } else if (sa->sa_family == AF_INET6) {
    std::memcpy(out.data(), &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
  } else if (sa->sa_family == AF_INET) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
  } else {
    return false;
  }
  return true;
}

const char* family_name(const sockaddr* sa) {
  return !sa ? "no address" : sa->sa_family == AF_IB ? "AF_IB" : sa->sa_family == AF_INET6 ? "AF_INET6"
                          : sa->sa_family == AF_INET ? "AF_INET" : "other family";
}

size_t address_size(const sockaddr* sa) {
  return sa->sa_family == AF_IB      ? sizeof(sockaddr_ib)
         : sa->sa_family == AF_INET6 ? sizeof(sockaddr_in6)
                                     : sizeof(sockaddr_in);
}

const char* event_name(rdma_cm_event_type type) {
  return type == RDMA_CM_EVENT_MULTICAST_JOIN    ? "MULTICAST_JOIN"
         : type == RDMA_CM_EVENT_MULTICAST_ERROR ? "MULTICAST_ERROR"
                                                 : "?";
}

int fail(int err) {
  errno = err;
  return -1;
}

void free_event(Fabric& f, Event* e) { f.events.erase(&e->verbs); }

}  // namespace

ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr) {
  Fabric* f = current;
  if (!f) {
    errno = ENODEV;
    return nullptr;
  }
  Pd* p = find(f->pds, pd);
  const Device* d = p ? p->ctx->device : nullptr;
  const char* why = !p                    ? "unknown pd"
                    : !attr               ? "no attributes"
                    : attr->port_num != 1 ? "port is not 1"
                    : d->spec.roce && !attr->is_global ? "RoCE needs is_global"
                    : attr->is_global && attr->grh.sgid_index >= d->gid_count ? "sgid_index outside the GID table"
                    : !attr->is_global && attr->dlid == 0 ? "no dlid and no GRH"
                                                          : nullptr;
  std::string dest;
  if (f->tracing() && attr)
    dest = attr->is_global ? strf("gid %s lid 0x%x sgid %u", gid_text(attr->grh.dgid.raw).c_str(), attr->dlid,
                                  attr->grh.sgid_index)
                           : strf("lid %u", attr->dlid);
  if (why) {
    if (f->tracing()) f->trace(strf("ibv_create_ah(%s) -> NULL EINVAL: %s", dest.c_str(), why));
    errno = EINVAL;
    return nullptr;
  }
  auto ah = std::make_unique<Ah>(Ah{{}, p, *attr, f->next_ah++});
  ah->verbs.context = pd->context;
  ah->verbs.pd = pd;
  Ah* a = ah.get();
  f->ahs.emplace(a, std::move(ah));
  ++p->users;
  if (f->tracing()) f->trace(strf("ibv_create_ah(pd %d, %s) -> ah %d", p->index, dest.c_str(), a->index));
  return &a->verbs;
}

int destroy_ah(ibv_ah* ah) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Ah* a = find(f->ahs, ah);
  if (f->tracing()) f->trace(strf("ibv_destroy_ah(ah %d) -> %s", a ? a->index : 0, a ? "0" : "EINVAL"));
  if (!a) return EINVAL;
  --a->pd->users;
  f->ahs.erase(ah);
  return 0;
}

int attach_mcast(ibv_qp* q, const ibv_gid* gid, uint16_t lid) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Qp* qp = find(f->qps, q);
  int rc = !qp || !gid || !is_multicast(gid->raw) ? EINVAL : 0;
  std::vector<Qp*>* list = nullptr;
  if (rc == 0) {
    Gid mgid = gid_key(*gid);
    list = &qp->device->attached[mgid];
    bool already = std::find(list->begin(), list->end(), qp) != list->end();
    if (!already && list->size() >= f->opts.max_mcast_qp_attach) rc = ENOMEM;
    if (!already && rc == 0) {
      list->push_back(qp);
      qp->attached.push_back(mgid);
    }
    if (list->empty()) qp->device->attached.erase(mgid);
  }
  if (f->tracing())
    f->trace(strf("ibv_attach_mcast(%s, %s, lid 0x%x) -> %s", qp_text(qp).c_str(),
                  gid ? gid_text(gid->raw).c_str() : "-", lid, rc_text(rc)));
  return rc;
}

int detach_mcast(ibv_qp* q, const ibv_gid* gid, uint16_t lid) {
  Fabric* f = current;
  if (!f) return ENODEV;
  Qp* qp = find(f->qps, q);
  int rc = EINVAL;
  if (qp && gid) {
    Gid mgid = gid_key(*gid);
    auto at = std::find(qp->attached.begin(), qp->attached.end(), mgid);
    if (at != qp->attached.end()) {
      qp->attached.erase(at);
      auto& list = qp->device->attached[mgid];
      list.erase(std::find(list.begin(), list.end(), qp));
      if (list.empty()) qp->device->attached.erase(mgid);
      rc = 0;
    }
  }
  if (f->tracing())
    f->trace(strf("ibv_detach_mcast(%s, %s, lid 0x%x) -> %s", qp_text(qp).c_str(),
                  gid ? gid_text(gid->raw).c_str() : "-", lid, rc_text(rc)));
  return rc;
}

rdma_event_channel* create_event_channel() {
  Fabric* f = current;
  if (!f) {
    errno = ENODEV;
    return nullptr;
  }
  auto ch = std::make_unique<Channel>(Channel{{-1}, f->next_channel++, {}});  // no fd: the model never blocks
  Channel* c = ch.get();
  f->channels.emplace(c, std::move(ch));
  if (f->tracing()) f->trace(strf("rdma_create_event_channel() -> channel %d", c->index));
  return &c->verbs;
}

void destroy_event_channel(rdma_event_channel* channel) {
  Fabric* f = current;
  if (!f) return;
  Channel* c = find(f->channels, channel);
  // With ids still on it the channel stays: live_objects() shows the leak
  // where rdma-core would leave the ids dangling.
  if (f->tracing())
    f->trace(strf("rdma_destroy_event_channel(channel %d) -> %s", c ? c->index : 0,
                  !c ? "unknown channel" : c->ids ? strf("refused: %d ids still on it", c->ids).c_str() : "done"));
  if (!c || c->ids) return;
  for (Event* e : c->queued) free_event(*f, e);
  f->channels.erase(channel);
}

int create_id(rdma_event_channel* channel, rdma_cm_id** out, void* context, rdma_port_space ps) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Channel* c = find(f->channels, channel);
  if (!c || !out || ps != RDMA_PS_UDP) {
    if (f->tracing()) f->trace(strf("rdma_create_id(channel %d, ps 0x%x) -> -1 EINVAL", c ? c->index : 0, ps));
    return fail(EINVAL);
  }
  auto id = std::make_unique<Id>(Id{{}, c, f->next_id++});
  id->verbs.channel = channel;
  id->verbs.context = context;
  id->verbs.ps = ps;
  id->verbs.qp_type = IBV_QPT_UD;
  Id* i = id.get();
  f->ids.emplace(i, std::move(id));
  ++c->ids;
  *out = &i->verbs;
  if (f->tracing()) f->trace(strf("rdma_create_id(channel %d, udp) -> id %d", c->index, i->index));
  return 0;
}

void drop_membership(Fabric& f, Id& id, const Gid& mgid) {
  id.joined.erase(std::find(id.joined.begin(), id.joined.end(), mgid));
  auto& members = f.groups.at(mgid).members;
  if (--members.at(id.device->index) == 0) members.erase(id.device->index);
}

int destroy_id(rdma_cm_id* cm_id) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Id* id = find(f->ids, cm_id);
  int err = !id ? EINVAL : id->unacked ? EBUSY : 0;
  if (f->tracing())
    f->trace(strf("rdma_destroy_id(id %d) -> %s", id ? id->index : 0,
                  !err              ? "0"
                  : err == EBUSY    ? "-1 EBUSY (an event not acked: rdma-core would block forever)"
                                    : "-1 EINVAL"));
  if (err) return fail(err);
  while (!id->joined.empty()) drop_membership(*f, *id, id->joined.back());  // as rdma_destroy_id leaves them
  auto& queue = id->channel->queued;
  for (auto it = queue.begin(); it != queue.end();) {
    if ((*it)->id != id) {
      ++it;
      continue;
    }
    free_event(*f, *it);
    it = queue.erase(it);
  }
  --id->channel->ids;
  f->ids.erase(cm_id);
  return 0;
}

int bind_addr(rdma_cm_id* cm_id, sockaddr* addr) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Id* id = find(f->ids, cm_id);
  Gid gid;
  bool parsed = address_of(addr, gid);
  Device* port = nullptr;
  for (const auto& d : f->devices) {
    // AF_IB names an IB port's GID; AF_INET6 and AF_INET a RoCE port's.
    if (!parsed || d->spec.roce != (addr->sa_family != AF_IB)) continue;
    for (uint32_t i = 0; i < d->gid_count && !port; ++i)
      if (std::memcmp(d->gids[i].raw, gid.data(), 16) == 0) port = d.get();
  }
  int err = !id || !addr || id->device ? EINVAL : !parsed || !port || port->open.empty() ? EADDRNOTAVAIL : 0;
  if (f->tracing())
    f->trace(strf("rdma_bind_addr(id %d, %s %s) -> %s", id ? id->index : 0, family_name(addr),
                  parsed ? gid_text(gid.data()).c_str() : "-",
                  err ? strf("-1 %s", strerrorname_np(err)).c_str() : strf("0 (%s)", port->verbs.name).c_str()));
  if (err) return fail(err);
  id->device = port;
  id->verbs.verbs = &port->open.back()->verbs;  // the device's most recently opened context
  id->verbs.port_num = 1;
  std::memcpy(&id->verbs.route.addr.src_storage, addr, address_size(addr));
  return 0;
}

int join_multicast(rdma_cm_id* cm_id, sockaddr* addr, void* context) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Id* id = find(f->ids, cm_id);
  Gid mgid;
  bool parsed = address_of(addr, mgid);
  bool roce = id && id->device && id->device->spec.roce;
  bool group = parsed && (addr->sa_family == AF_INET ? roce && is_multicast(mgid.data()) : mgid[0] == 0xff);
  int err = !id || !id->device || !group ? EINVAL
            : std::find(id->joined.begin(), id->joined.end(), mgid) != id->joined.end() ? EADDRINUSE
                                                                                         : 0;
  auto event = std::make_unique<Event>();
  rdma_cm_event& e = event->verbs;
  if (!err) {
    e.id = cm_id;
    e.param.ud.private_data = context;  // where librdmacm hands back the join's context
    if (f->opts.fail_joins) {
      e.event = RDMA_CM_EVENT_MULTICAST_ERROR;
      e.status = -ENETUNREACH;
    } else {
      auto [g, created] = f->groups.try_emplace(mgid, Group{f->next_mlid, {}});
      if (created) ++f->next_mlid;
      ++g->second.members[id->device->index];
      id->joined.push_back(mgid);
      e.event = RDMA_CM_EVENT_MULTICAST_JOIN;
      e.status = 0;
      ibv_ah_attr& ah = e.param.ud.ah_attr;
      ah.is_global = 1;
      std::memcpy(ah.grh.dgid.raw, mgid.data(), 16);
      ah.grh.sgid_index = roce ? 1 : 0;  // RoCE: the v2 GID
      ah.grh.hop_limit = roce ? 64 : 1;
      ah.dlid = roce ? 0 : g->second.mlid;
      ah.port_num = 1;
      e.param.ud.qp_num = 0xFFFFFF;
      e.param.ud.qkey = RDMA_UDP_QKEY;
    }
    event->id = id;
    id->channel->queued.push_back(event.get());
  }
  if (f->tracing()) {
    std::string result = err ? strf("-1 %s", strerrorname_np(err)) : strf("0 (%s queued", event_name(e.event));
    if (!err && e.event == RDMA_CM_EVENT_MULTICAST_JOIN && !roce) result += strf(", mlid 0x%x", e.param.ud.ah_attr.dlid);
    if (!err) result += ")";
    f->trace(strf("rdma_join_multicast(id %d, %s %s) -> %s", id ? id->index : 0, family_name(addr),
                  parsed ? gid_text(mgid.data()).c_str() : "-", result.c_str()));
  }
  if (err) return fail(err);
  f->events.emplace(&event->verbs, std::move(event));
  return 0;
}

int leave_multicast(rdma_cm_id* cm_id, sockaddr* addr) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Id* id = find(f->ids, cm_id);
  Gid mgid;
  bool parsed = address_of(addr, mgid);
  bool joined = id && parsed && std::find(id->joined.begin(), id->joined.end(), mgid) != id->joined.end();
  int err = !id ? EINVAL : !joined ? EADDRNOTAVAIL : 0;
  if (f->tracing())
    f->trace(strf("rdma_leave_multicast(id %d, %s) -> %s", id ? id->index : 0,
                  parsed ? gid_text(mgid.data()).c_str() : "-",
                  err ? strf("-1 %s", strerrorname_np(err)).c_str() : "0"));
  if (err) return fail(err);
  drop_membership(*f, *id, mgid);
  return 0;
}

// Named after what a caller does with the channel's fd: poll() it.
int wait_cm_event(rdma_event_channel* channel, int timeout_ms) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Channel* c = find(f->channels, channel);
  int ready = c && !c->queued.empty() ? 1 : 0;
  if (f->tracing()) {
    std::string line = strf("poll(channel %d fd, %d ms) -> %s", c ? c->index : 0, timeout_ms,
                            !c ? "-1 EINVAL" : ready ? "1" : "0");
    if (c && !ready) f->trace_idle(line);  // nothing will come later: the model is synchronous
    else f->trace(line);
  }
  return c ? ready : fail(EINVAL);
}

int get_cm_event(rdma_event_channel* channel, rdma_cm_event** out) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Channel* c = find(f->channels, channel);
  int err = !c || !out ? EINVAL : c->queued.empty() ? EAGAIN : 0;
  Event* e = err ? nullptr : c->queued.front();
  if (f->tracing()) {
    std::string line = strf("rdma_get_cm_event(channel %d) -> ", c ? c->index : 0);
    if (err) f->trace_idle(line + strf("-1 %s", strerrorname_np(err)));
    else f->trace(line + strf("0 (%s id %d)", event_name(e->verbs.event), e->id->index));
  }
  if (err) return fail(err);
  c->queued.pop_front();
  e->got = true;
  ++e->id->unacked;
  *out = &e->verbs;
  return 0;
}

int ack_cm_event(rdma_cm_event* event) {
  Fabric* f = current;
  if (!f) return fail(ENODEV);
  Event* e = find(f->events, event);
  bool ok = e && e->got;  // one still queued was never handed out
  if (f->tracing())
    f->trace(strf("rdma_ack_cm_event(%s) -> %s",
                  ok ? strf("%s id %d", event_name(e->verbs.event), e->id->index).c_str() : "unknown event",
                  ok ? "0" : "-1 EINVAL"));
  if (!ok) return fail(EINVAL);
  --e->id->unacked;
  free_event(*f, e);
  return 0;
}

}  // namespace lanecast::drivers::verbs::model::detail
