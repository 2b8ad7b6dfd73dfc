#include "drivers/fault/fault_port.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "drivers/ethernet.h"

namespace lanecast::drivers {
namespace {

constexpr uint16_t kPullBurst = 64;
constexpr uint32_t kReadyFrames = 512;  // frames let out and not yet taken (rx) or not yet sent (tx)
constexpr uint32_t kAsideFrames = 256;
constexpr uint64_t kMaxHoldNs = 1'000'000'000;

bool address_less(const PeerAddress& a, const PeerAddress& b) {
  if (a.len != b.len) return a.len < b.len;
  return std::memcmp(a.bytes, b.bytes, a.len) < 0;
}

const char* way_name(FaultWay w) { return w == FaultWay::Receive ? "receive" : "send"; }

// Each probability in its range, named as the options name it.
void check_profile(const FaultProfile& p, size_t rule) {
  const auto bad = [&](const char* what, double v, const char* allowed) {
    throw std::invalid_argument("fault port: rule " + std::to_string(rule) + ": " + what + " is " +
                                std::to_string(v) + ", out of range; allowed " + allowed);
  };
  const auto below_one = [&](const char* what, double v) {
    if (!(v >= 0 && v < 1)) bad(what, v, "0 <= x < 1");
  };
  const auto up_to_one = [&](const char* what, double v) {
    if (!(v >= 0 && v <= 1)) bad(what, v, "0 <= x <= 1");
  };
  below_one("loss", p.loss);
  up_to_one("burst_enter", p.burst_enter);
  up_to_one("burst_leave", p.burst_leave);
  below_one("burst_loss_good", p.burst_loss_good);
  up_to_one("burst_loss_bad", p.burst_loss_bad);
  if (p.burst_enter > 0 && !(p.burst_leave > 0))
    bad("burst_leave", p.burst_leave, "> 0 when burst_enter > 0 (else a burst never ends)");
  below_one("reorder", p.reorder);
  if (p.reorder_gap < 1 || p.reorder_gap > 1000) bad("reorder_gap", p.reorder_gap, "1..1000 frames");
  below_one("duplicate", p.duplicate);
  below_one("corrupt", p.corrupt);
  if (p.delay_ns > kMaxHoldNs) bad("delay_ns", static_cast<double>(p.delay_ns), "0..1e9");
  if (p.jitter_ns > kMaxHoldNs) bad("jitter_ns", static_cast<double>(p.jitter_ns), "0..1e9");
}

bool same_selector(const FaultRule& a, const FaultRule& b) {
  if (a.way != b.way || a.frames != b.frames || a.peer.has_value() != b.peer.has_value()) return false;
  return !a.peer || *a.peer == *b.peer;
}

uint64_t mix(uint64_t h, uint64_t v) { return fault::Stream(h ^ (v * 0xD6E8FEB86659FD93ULL)).next(); }

// The seed of one link's stream: the port's seed, the way, the lane and the
// link's address - not its position in a list.
uint64_t link_seed(uint64_t seed, FaultWay way, uint16_t lane, const PeerAddress* a) {
  uint64_t h = mix(mix(seed, static_cast<uint64_t>(way) + 1), uint64_t{lane} + 1);
  if (a != nullptr)
    for (uint8_t i = 0; i < a->len; ++i) h = mix(h, (uint64_t{a->bytes[i]} | (uint64_t{i} + 1) << 8));
  return h;
}

// Whether no one else sees this segment's bytes: flipping one then changes
// this frame alone.
bool exclusive(const rte_mbuf* seg) {
  return RTE_MBUF_DIRECT(seg) && !RTE_MBUF_HAS_EXTBUF(seg) && rte_mbuf_refcnt_read(seg) == 1;
}

// The segment holding byte `off` of the frame, and the offset in it.
rte_mbuf* segment_at(rte_mbuf* m, uint32_t* off) {
  while (m != nullptr && *off >= m->data_len) {
    *off -= m->data_len;
    m = m->next;
  }
  return m;
}

}  // namespace

FaultPort::FaultPort(std::unique_ptr<Port> inner, const FaultPortOptions& o) : ForwardingPort(std::move(inner)) {
  setup(o);
}

FaultPort::FaultPort(Port& inner, const FaultPortOptions& o) : ForwardingPort(inner) { setup(o); }

void FaultPort::setup(const FaultPortOptions& o) {
  if (o.clock == nullptr) throw std::invalid_argument("fault port: no clock");
  if (in_.link_header_bytes() != ethernet::kHeaderBytes)
    throw std::invalid_argument("fault port: " + in_.name() + " is not an Ethernet port (its link header has " +
                                std::to_string(in_.link_header_bytes()) + " bytes)");
  if (o.queue_frames < kPullBurst || o.queue_frames > (1u << 20))
    throw std::invalid_argument("fault port: queue_frames must be 64..1048576 (got " + std::to_string(o.queue_frames) +
                                ")");
  if (o.rules.size() >= UINT16_MAX) throw std::invalid_argument("fault port: too many rules");
  clock_ = o.clock;
  clone_pool_ = o.clone_pool;
  copy_pool_ = o.copy_pool;
  header_bytes_ = o.header_bytes;
  reorder_hold_ns_ = o.reorder_hold_ns;
  if (reorder_hold_ns_ > kMaxHoldNs) throw std::invalid_argument("fault port: reorder_hold_ns must be at most 1 s");

  profiles_.push_back(fault::Compiled{});  // [0]: frames pass untouched
  std::vector<uint16_t> profile_of_rule;
  for (size_t i = 0; i < o.rules.size(); ++i) {
    const FaultRule& r = o.rules[i];
    check_profile(r.faults, i);
    for (size_t j = 0; j < i; ++j)
      if (same_selector(o.rules[j], r))
        throw std::invalid_argument("fault port: rules " + std::to_string(j) + " and " + std::to_string(i) +
                                    " select the same frames (" + way_name(r.way) + ", " +
                                    (r.peer ? format_address(*r.peer) : std::string("any peer")) + ")");
    if (r.faults.duplicate > 0 && clone_pool_ == nullptr)
      throw std::invalid_argument("fault port: duplication needs a pool for the clones");
    if (r.faults.corrupt > 0 && copy_pool_ == nullptr)
      throw std::invalid_argument("fault port: corruption needs a pool for copies of shared frames");
    if (r.faults.any()) {
      profile_of_rule.push_back(static_cast<uint16_t>(profiles_.size()));
      profiles_.push_back(fault::Compiled::of(r.faults));
    } else {
      profile_of_rule.push_back(0);
    }
  }

  for (size_t i = 0; i < o.links.size(); ++i) link_index_.emplace_back(o.links[i], static_cast<uint32_t>(i));
  std::sort(link_index_.begin(), link_index_.end(),
            [](const auto& a, const auto& b) { return address_less(a.first, b.first); });
  for (size_t i = 1; i < link_index_.size(); ++i)
    if (link_index_[i].first == link_index_[i - 1].first)
      throw std::invalid_argument("fault port: link " + format_address(link_index_[i].first) + " given twice");

  const uint32_t n_links = static_cast<uint32_t>(o.links.size()) + 1;  // and every other address
  for (FaultWay way : {FaultWay::Receive, FaultWay::Send}) {
    Way& w = way == FaultWay::Receive ? rx_ : tx_;
    std::vector<Link> links(n_links);
    for (uint32_t k = 0; k < n_links; ++k) {
      const PeerAddress* a = k < o.links.size() ? &o.links[k] : nullptr;
      for (int mc = 0; mc < 2; ++mc) {
        const uint16_t rule = resolve(o.rules, way, a, mc == 1);
        const uint16_t p = rule == UINT16_MAX ? 0 : profile_of_rule[rule];
        links[k].profile[mc] = p;
        if (p == 0) continue;
        w.active = true;
        w.holds = w.holds || profiles_[p].holds();
        w.reorders = w.reorders || profiles_[p].reorder.on();
      }
    }
    if (!w.active) continue;
    w.ready_cap = kReadyFrames;
    w.delayed_cap = w.holds ? o.queue_frames : 0;
    w.aside_cap = w.reorders ? std::min(kAsideFrames, o.queue_frames) : 0;
    for (uint16_t lane = 0; lane < in_.lanes(); ++lane) {
      Line& l = w.lanes.emplace_back(w.ready_cap, w.delayed_cap, w.aside_cap);
      l.links = links;
      for (uint32_t k = 0; k < n_links; ++k)
        l.links[k].draws.stream = fault::Stream(link_seed(o.seed, way, lane, k < o.links.size() ? &o.links[k] : nullptr));
    }
  }
}

FaultPort::~FaultPort() {
  for (Way* w : {&rx_, &tx_})
    for (Line& l : w->lanes) free_all(l);
}

void FaultPort::free_all(Line& l) {
  while (!l.ready.empty()) {
    rte_pktmbuf_free(l.ready.front());
    l.ready.pop(1);
  }
  l.delayed.for_each([](rte_mbuf* m) { rte_pktmbuf_free(m); });
  l.aside.for_each([](rte_mbuf* m) { rte_pktmbuf_free(m); });
}

// The rule for frames of `way` to or from `peer` (nullptr: an address no
// rule names), unicast or multicast: the most specific that matches, or
// UINT16_MAX for none.
uint16_t FaultPort::resolve(const std::vector<FaultRule>& rules, FaultWay way, const PeerAddress* peer,
                            bool multicast) const {
  int best = -1;
  uint16_t pick = UINT16_MAX;
  for (size_t i = 0; i < rules.size(); ++i) {
    const FaultRule& r = rules[i];
    if (r.way != way) continue;
    if (r.peer && (peer == nullptr || !(*r.peer == *peer))) continue;
    if ((r.frames == FaultFrames::Unicast && multicast) || (r.frames == FaultFrames::Multicast && !multicast))
      continue;
    const int score = (r.peer ? 2 : 0) + (r.frames != FaultFrames::All ? 1 : 0);
    if (score > best) {
      best = score;
      pick = static_cast<uint16_t>(i);
    }
  }
  return pick;
}

uint32_t FaultPort::link_of(const uint8_t* address) const {
  PeerAddress a = ethernet::to_peer(address);
  const auto it = std::lower_bound(link_index_.begin(), link_index_.end(), a,
                                   [](const auto& e, const PeerAddress& x) { return address_less(e.first, x); });
  return it != link_index_.end() && it->first == a ? it->second : static_cast<uint32_t>(link_index_.size());
}

// How many frames the line can take now: each may become two (a
// duplicate), and each frame that goes on may let out every one set aside.
uint32_t FaultPort::admissible(const Way& w, const Line& l) const {
  const uint32_t aside = l.aside.size();
  const auto half_of = [&](uint32_t free) { return free > aside ? (free - aside) / 2 : 0; };
  uint32_t k = half_of(w.ready_cap - l.ready.size());
  if (w.holds) k = std::min(k, half_of(w.delayed_cap - l.delayed.size()));
  if (w.reorders) k = std::min(k, (w.aside_cap - aside) / 2);
  return std::min<uint32_t>(k, kPullBurst);
}

void FaultPort::take(Way& w, Line& l, rte_mbuf* m, bool receiving, uint64_t now) {
  uint32_t link = static_cast<uint32_t>(link_index_.size());
  bool multicast = false;
  if (m->data_len >= ethernet::kHeaderBytes) {
    const auto* h = rte_pktmbuf_mtod(m, const uint8_t*);
    multicast = ethernet::is_group(h);
    link = link_of(receiving ? h + 6 : h);  // the source received from, the destination sent to
  }
  Link& lk = l.links[link];
  const uint16_t p = lk.profile[multicast ? 1 : 0];
  if (p == 0) {
    go_on(w, l, link, m, 0, now);
    return;
  }
  const fault::Compiled& c = profiles_[p];
  const fault::Fate f = lk.draws.draw(c);
  if (f.burst_lost || f.lost) {
    (f.burst_lost ? w.counts.burst_lost : w.counts.lost).add();
    rte_pktmbuf_free(m);
    return;
  }
  rte_mbuf* copies[2] = {m, nullptr};
  if (f.duplicate) {
    copies[1] = rte_pktmbuf_clone(m, clone_pool_);  // before a corruption of the first changes it
    (copies[1] != nullptr ? w.counts.duplicated : w.counts.no_buffer).add();
  }
  for (int i = 0; i < 2; ++i) {
    if (copies[i] == nullptr) continue;
    const fault::CopyFate& cf = f.copy[i];
    rte_mbuf* x = cf.corrupt ? corrupt(w, copies[i], cf) : copies[i];
    if (cf.reorder) {
      l.aside.push(fault::AsideList::Entry{x, link, c.reorder_gap, now + reorder_hold_ns_, cf.hold_ns});
      w.counts.reordered.add();
      continue;
    }
    go_on(w, l, link, x, cf.hold_ns, now);
  }
}

// Flips the drawn byte past the link header: in place when no one else sees
// its bytes, else in a copy (the original goes back to its pool).
rte_mbuf* FaultPort::corrupt(Way& w, rte_mbuf* m, const fault::CopyFate& c) {
  const uint32_t link = ethernet::kHeaderBytes;
  if (m->pkt_len <= link) return m;
  __extension__ using u128 = unsigned __int128;
  const auto past = static_cast<uint32_t>((static_cast<u128>(c.where) * (m->pkt_len - link)) >> 64);
  uint32_t at = link + past;
  rte_mbuf* seg = segment_at(m, &at);
  if (seg == nullptr) return m;  // a chain shorter than it says: leave it to the receiver's checks
  if (!exclusive(seg)) {
    rte_mbuf* copy = rte_pktmbuf_copy(m, copy_pool_, 0, UINT32_MAX);
    if (copy == nullptr) {
      w.counts.no_buffer.add();
      return m;
    }
    rte_pktmbuf_free(m);
    m = copy;
    at = link + past;
    seg = segment_at(m, &at);
  }
  *rte_pktmbuf_mtod_offset(seg, uint8_t*, at) ^= c.mask;
  (past < header_bytes_ ? w.counts.corrupted_header : w.counts.corrupted_payload).add();
  return m;
}

// A frame ready to leave, or held for its time if it has one (or if an
// earlier frame of its link still is: a link's frames leave in order).
void FaultPort::place(Way& w, Line& l, uint32_t link, rte_mbuf* m, uint64_t hold_ns, uint64_t now) {
  Link& lk = l.links[link];
  if (hold_ns == 0 && lk.last_due_ns <= now) {
    l.ready.push(m);
    return;
  }
  if (hold_ns > 0) w.counts.delayed.add();
  lk.last_due_ns = std::max(now + hold_ns, lk.last_due_ns);
  l.delayed.push(lk.last_due_ns, m);
}

// A frame past the reorder stage; and each frame of its link set aside that
// it was the last to overtake goes on right after it.
void FaultPort::go_on(Way& w, Line& l, uint32_t link, rte_mbuf* m, uint64_t hold_ns, uint64_t now) {
  place(w, l, link, m, hold_ns, now);
  if (l.aside.empty()) return;
  l.aside.take([&](fault::AsideList::Entry& e) { return e.link == link && --e.left == 0; },
               [&](const fault::AsideList::Entry& e) { place(w, l, e.link, e.frame, e.hold_ns, now); });
}

// What is due: frames set aside past their deadline go on; held frames whose
// time came are ready - as far as there is room.
void FaultPort::release_due(Way& w, Line& l, uint64_t now) {
  if (!l.aside.empty() && l.aside.earliest_deadline() <= now)
    l.aside.take(
        [&](const fault::AsideList::Entry& e) {
          return e.deadline_ns <= now && l.ready.size() < w.ready_cap && (!w.holds || l.delayed.size() < w.delayed_cap);
        },
        [&](const fault::AsideList::Entry& e) { place(w, l, e.link, e.frame, e.hold_ns, now); });
  while (!l.delayed.empty() && l.delayed.top().due_ns <= now && l.ready.size() < w.ready_cap) l.ready.push(l.delayed.pop());
}

uint16_t FaultPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  if (!rx_.active) {
    const uint16_t n = in_.rx_burst(lane, frames, max);
    if (tx_.active) flush_tx(lane, clock_());
    return n;
  }
  const uint64_t now = clock_();
  Line& l = rx_.lanes[lane];
  release_due(rx_, l, now);
  const uint16_t want = static_cast<uint16_t>(std::min<uint32_t>(admissible(rx_, l), max));
  if (want > 0) {
    rte_mbuf* got[kPullBurst];
    const uint16_t n = in_.rx_burst(lane, got, want);
    // Holds count from a reading after the burst: a frame may have come
    // while this core did not run, after `now`, and a hold from before its
    // arrival would be short (a chain of 2 ms hops spanned 4.8 ms, not 6,
    // on a loaded host).
    const uint64_t arrived = n > 0 ? clock_() : now;
    for (uint16_t i = 0; i < n; ++i) take(rx_, l, got[i], /*receiving=*/true, arrived);
  }
  uint16_t out = 0;
  while (out < max && !l.ready.empty()) {
    const auto [run, n] = l.ready.run();
    const uint32_t k = std::min<uint32_t>(n, max - out);
    std::copy(run, run + k, frames + out);
    l.ready.pop(k);
    out = static_cast<uint16_t>(out + k);
  }
  if (tx_.active) flush_tx(lane, now);
  return out;
}

uint16_t FaultPort::tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) {
  if (!tx_.active) return in_.tx_burst(lane, frames, count);
  const uint64_t now = clock_();
  Line& l = tx_.lanes[lane];
  release_due(tx_, l, now);
  const uint16_t took = static_cast<uint16_t>(std::min<uint32_t>(admissible(tx_, l), count));
  for (uint16_t i = 0; i < took; ++i) take(tx_, l, frames[i], /*receiving=*/false, now);
  flush_tx(lane, now);
  return took;
}

// Sends what is ready on the way out; what the port below does not take
// waits for the next call.
void FaultPort::flush_tx(uint16_t lane, uint64_t now) {
  Line& l = tx_.lanes[lane];
  release_due(tx_, l, now);
  while (!l.ready.empty()) {
    const auto [run, n] = l.ready.run();
    const uint16_t sent = in_.tx_burst(lane, run, static_cast<uint16_t>(std::min<uint32_t>(n, UINT16_MAX)));
    l.ready.pop(sent);
    if (sent < n) break;
  }
}

uint64_t FaultPort::held_until_ns() const {
  uint64_t at = in_.held_until_ns();
  for (const Way* w : {&rx_, &tx_})
    for (const Line& l : w->lanes) {
      if (!l.ready.empty()) return 0;  // ready now (not yet taken, or the port below was full)
      if (!l.delayed.empty()) at = std::min(at, l.delayed.top().due_ns);
      if (!l.aside.empty()) at = std::min(at, l.aside.earliest_deadline());
    }
  return at;
}

FaultStats FaultPort::counts(FaultWay way) const {
  const Counts& c = (way == FaultWay::Receive ? rx_ : tx_).counts;
  return FaultStats{c.lost.get(),      c.burst_lost.get(),        c.reordered.get(), c.duplicated.get(),
                    c.corrupted_header.get(), c.corrupted_payload.get(), c.delayed.get(), c.no_buffer.get()};
}

PortStats FaultPort::stats() const {
  PortStats s = in_.stats();
  const auto add = [](FaultStats& to, const FaultStats& f) {
    to.lost += f.lost;
    to.burst_lost += f.burst_lost;
    to.reordered += f.reordered;
    to.duplicated += f.duplicated;
    to.corrupted_header += f.corrupted_header;
    to.corrupted_payload += f.corrupted_payload;
    to.delayed += f.delayed;
    to.no_buffer += f.no_buffer;
  };
  add(s.rx_faults, counts(FaultWay::Receive));
  add(s.tx_faults, counts(FaultWay::Send));
  return s;
}

uint64_t FaultPort::frames_held() const {
  uint64_t n = 0;
  for (const Way* w : {&rx_, &tx_})
    for (const Line& l : w->lanes) n += l.ready.size() + l.delayed.size() + l.aside.size();
  return n;
}

}  // namespace lanecast::drivers
