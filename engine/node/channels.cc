// The node's transport (channels.h): set-up, the books of owed work and
// flight slabs, acks, timeouts and failures.
#include "engine/node/channels.h"

#include <stdexcept>
#include <string>

namespace lanecast::engine {

Channels::Channels(uint32_t nodes, uint16_t lanes, uint32_t window, const reliable::RttParams& rtt, uint32_t slabs,
                   uint32_t runs, Counters& counters)
    : lanes_(lanes), counters_(counters), flights_(slabs, window), runs_(runs) {
  if (lanes == 0 || lanes > kMaxLanes)
    throw std::invalid_argument("channels: 1.." + std::to_string(kMaxLanes) + " lanes, not " + std::to_string(lanes));
  const size_t n = size_t{nodes} * lanes;
  channels_.reserve(n);
  for (uint32_t r = 0; r < nodes; ++r)
    for (uint16_t l = 0; l < lanes; ++l) {
      channels_.push_back(Channel{reliable::SendChannel(window, rtt), reliable::RecvChannel{}, OwedList{}});
      channels_.back().peer = r;
      channels_.back().lane = l;
    }
  // Every list below holds each channel at most once: reserved once here.
  ready_.reserve(flights_.slabs());
  blocked_.reserve(flights_.slabs());
  waiting_.reserve(n);
  active_.reserve(flights_.slabs());
  resend_.reserve(flights_.slabs());  // a channel with resends holds a slab
}

// A channel that starts owing joins the heap of those with a flight slab, or
// of those waiting for one; its key is the stamp of its first owed item.
void Channels::list_owing(Channel& c) {
  if (c.listed) return;
  c.listed = true;
  push_heap(c.tx.slab() != nullptr ? ready_ : waiting_, Owing{c.owed.front(runs_).stamp, id_of(c)});
}

void Channels::want_resend(Channel& c) {
  if (c.in_resend || !c.tx.has_resend()) return;
  c.in_resend = true;
  resend_.push_back(id_of(c));
}

// Free slabs to the waiting channels owed the earliest items.
void Channels::grant_slabs() {
  const auto later = std::greater<>{};
  while (!waiting_.empty() && flights_.in_use() < flights_.slabs()) {
    std::pop_heap(waiting_.begin(), waiting_.end(), later);
    const Owing o = waiting_.back();
    waiting_.pop_back();
    take_slab(channels_[o.channel]);
    push_heap(ready_, o);
  }
}

// A channel starts with the RTO its lane learned last: a fresh slab's
// initial RTO would be far off on a path whose RTT is known.
bool Channels::take_slab(Channel& c) {
  reliable::FlightSlab* s = flights_.take();
  if (s == nullptr) return false;
  c.tx.attach(s);
  c.tx.raise_rto(lane_rto_ns_[c.lane]);
  c.active_index = static_cast<uint32_t>(active_.size());
  active_.push_back(id_of(c));
  return true;
}

void Channels::release_slab(Channel& c) {
  flights_.give_back(c.tx.detach());
  const uint32_t last = active_.back();
  active_[c.active_index] = last;
  channels_[last].active_index = c.active_index;
  active_.pop_back();
  c.active_index = UINT32_MAX;
}

void Channels::on_ack(Channel& c, const reliable::SendChannel::AckResult& r) {
  unacked_total_ -= r.newly;
  if (r.newly > 0) lane_rto_ns_[c.lane] = c.tx.timeout_ns();
  if (r.new_holes) counters_.fast_retransmits.add();
  if (r.spurious_timeout) counters_.rto_spurious.add();
  want_resend(c);
  // A channel keeps its slab while it owes something (it is in ready_).
  if (c.tx.idle() && c.tx.slab() != nullptr && !c.listed) release_slab(c);
}

bool Channels::on_timeout(Channel& c, uint64_t now) {
  if (c.tx.on_timeout(now) == 0) return false;
  counters_.rto_timeouts.add();
  want_resend(c);
  return true;
}

void Channels::drop_broadcast(uint64_t now) {
  for (const auto* list : {&ready_, &waiting_})
    for (const Owing& o : *list) owed_total_ -= channels_[o.channel].owed.clear_broadcast(runs_);
  for (uint32_t id : active_) {
    channels_[id].tx.abandon_in_flight(now);
    want_resend(channels_[id]);
  }
}

void Channels::after_broadcast() {
  for (auto* list : {&ready_, &waiting_}) {
    size_t keep = 0;
    for (const Owing& o : *list) {
      Channel& c = channels_[o.channel];
      if (c.owed.empty()) c.listed = false;
      else (*list)[keep++] = Owing{c.owed.front(runs_).stamp, o.channel};
    }
    list->resize(keep);
    std::make_heap(list->begin(), list->end(), std::greater<>{});
  }
}

void Channels::drop_everything(uint64_t now) {
  for (Channel& c : channels_) {
    owed_total_ -= c.owed.size();
    c.owed.clear(runs_);
    if (!c.tx.idle() && c.tx.slab() != nullptr) {
      c.tx.abandon_in_flight(now, /*streams_too=*/true);
      want_resend(c);
    }
  }
  for (auto* list : {&ready_, &waiting_}) {
    for (const Owing& o : *list) channels_[o.channel].listed = false;
    list->clear();
  }
}

size_t Channels::list_bytes() const {
  return channels_.capacity() * sizeof(Channel) +
         (ready_.capacity() + waiting_.capacity() + blocked_.capacity()) * sizeof(Owing) +
         (active_.capacity() + resend_.capacity()) * sizeof(uint32_t);
}

}  // namespace lanecast::engine
