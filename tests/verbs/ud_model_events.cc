// The UD model: completion channels and events (what the model does, as
// rdma-core and an adapter do). ibv_req_notify_cq arms a CQ; the next
// completion queued on it after that raises one event on its channel and
// disarms it (completions already queued raise none). The channel's
// descriptor is an eventfd counting events (non-blocking, semaphore mode), so
// a sleeping core's poll()/ppoll() wakes on it; ibv_get_cq_event takes the
// oldest event (EAGAIN when none: the descriptor is non-blocking) and every
// event got must be acknowledged before its CQ may be destroyed.
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "tests/verbs/ud_model.h"

namespace lanecast::drivers::verbs::model::detail {

ibv_comp_channel* create_comp_channel(ibv_context* context) {
  Fabric* f = model();
  if (!f) return nullptr;
  Context* c = find(f->contexts, context);
  const int fd = c ? eventfd(0, EFD_NONBLOCK | EFD_SEMAPHORE | EFD_CLOEXEC) : -1;
  if (!c || fd < 0) {
    const int err = c ? errno : EINVAL;
    if (f->tracing()) f->trace(strf("ibv_create_comp_channel() -> NULL %s", rc_text(err)));
    errno = err;
    return nullptr;
  }
  auto ch = std::make_unique<CompChannel>(CompChannel{{}, c, f->next_comp_channel++});
  ch->verbs.context = context;
  ch->verbs.fd = fd;
  CompChannel* p = ch.get();
  f->comp_channels.emplace(p, std::move(ch));
  if (f->tracing()) f->trace(strf("ibv_create_comp_channel(context %d) -> channel %d", c->index, p->index));
  return &p->verbs;
}

int destroy_comp_channel(ibv_comp_channel* channel) {
  Fabric* f = model();
  if (!f) return ENODEV;
  CompChannel* ch = find(f->comp_channels, channel);
  const int rc = !ch ? EINVAL : ch->cqs > 0 ? EBUSY : 0;
  if (f->tracing())
    f->trace(strf("ibv_destroy_comp_channel(channel %d) -> %s", ch ? ch->index : 0,
                  rc == EBUSY ? "EBUSY (CQs use it)" : rc_text(rc)));
  if (rc == 0) {
    close(ch->verbs.fd);
    f->comp_channels.erase(channel);
  }
  return rc;
}

int req_notify_cq(ibv_cq* cq, int solicited_only) {
  Fabric* f = model();
  if (!f) return ENODEV;
  Cq* q = find(f->cqs, cq);
  const int rc = !q || !q->channel ? EINVAL : 0;
  if (rc == 0) q->armed = true;  // solicited_only: every UD receive here counts as solicited
  if (f->tracing())
    f->trace_idle(strf("ibv_req_notify_cq(cq %d%s) -> %s", q ? q->index : 0, solicited_only ? ", solicited" : "",
                       rc_text(rc)));
  return rc;
}

void completion_event(Fabric& f, Cq& cq) {
  if (!cq.armed || cq.channel == nullptr) return;
  cq.armed = false;
  cq.channel->events.push_back(&cq);
  const uint64_t one = 1;
  if (write(cq.channel->verbs.fd, &one, sizeof one) != sizeof one) return;  // cannot fail below 2^64-1 events
  if (f.tracing()) f.trace(strf("  event: cq %d on channel %d", cq.index, cq.channel->index));
}

int get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  Fabric* f = model();
  if (!f) return -1;
  CompChannel* ch = find(f->comp_channels, channel);
  if (!ch || ch->events.empty()) {
    errno = ch ? EAGAIN : EINVAL;
    if (f->tracing()) f->trace_idle(strf("ibv_get_cq_event(channel %d) -> -1 %s", ch ? ch->index : 0, rc_text(errno)));
    return -1;
  }
  uint64_t n;
  if (read(ch->verbs.fd, &n, sizeof n) != sizeof n) {  // the eventfd counts what `events` holds
    errno = EIO;
    return -1;
  }
  Cq* q = ch->events.front();
  ch->events.pop_front();
  ++q->events_got;
  *cq = &q->verbs;
  if (cq_context) *cq_context = q->verbs.cq_context;
  if (f->tracing()) f->trace(strf("ibv_get_cq_event(channel %d) -> cq %d", ch->index, q->index));
  return 0;
}

void ack_cq_events(ibv_cq* cq, unsigned int events) {
  Fabric* f = model();
  if (!f) return;
  Cq* q = find(f->cqs, cq);
  if (!q) return;
  q->events_acked += std::min(events, q->events_got - q->events_acked);
  if (f->tracing()) f->trace(strf("ibv_ack_cq_events(cq %d, %u)", q->index, events));
}

}  // namespace lanecast::drivers::verbs::model::detail
