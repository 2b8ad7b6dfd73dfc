#include "algos/model/model.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <random>
#include <utility>

#include "algos/bitmap.h"

namespace lanecast::algos::model {
namespace {

struct InFlight {
  enum Kind : uint8_t { Segment, Multicast, Signal, Timer };
  Rank from, to;
  SegmentIndex seg;            // the tag of a signal or a timer
  Lane lane;
  std::vector<uint8_t> bytes;  // copied from the sender's buffer at send time
  Kind kind = Segment;         // a Multicast copy may be lost, is never required;
                               // a Timer goes from a rank to itself
};

class Run {
 public:
  Run(const Plan& plan, const MachineFactory& make, const Options& opt);
  Result go();

 private:
  class Sink final : public Actions {
   public:
    Sink(Run& run, Rank me) : run_(run), me_(me) {}
    void send(Rank to, SegmentIndex seg, Lane lane) override { run_.on_send(me_, to, seg, lane); }
    void multicast(SegmentIndex seg, Lane lane) override { run_.on_multicast(me_, seg, lane); }
    void deliver(SegmentIndex seg) override { run_.on_deliver(me_, seg); }
    void arm(uint64_t after_ns, uint32_t tag) override { run_.on_arm(me_, after_ns, tag); }
    void signal(Rank to, uint32_t tag) override { run_.on_signal(me_, to, tag); }

   private:
    Run& run_;
    Rank me_;
  };

  void fail(const std::string& what);
  std::string at() const { return "step " + std::to_string(steps_) + ": "; }
  bool holds(Rank r, SegmentIndex seg) const {
    return r == plan_.root() || arrived_[idx(r, seg)] != 0;
  }
  size_t idx(Rank r, SegmentIndex seg) const { return size_t{r} * m_ + seg; }
  const uint8_t* bytes_of(Rank r) const {
    return r == plan_.root() ? root_bytes_.data() : held_[r].data();
  }

  void start(Rank r);
  void arrive(InFlight& x);
  void on_send(Rank me, Rank to, SegmentIndex seg, Lane lane);
  void on_multicast(Rank me, SegmentIndex seg, Lane lane);
  void on_deliver(Rank me, SegmentIndex seg);
  void on_arm(Rank me, uint64_t after_ns, uint32_t tag);
  void on_signal(Rank me, Rank to, uint32_t tag);
  void fire(const InFlight& x);    // a timer or a signal
  void check_timer_vs_done(Rank r);
  void finish();

  const Plan& plan_;
  Options opt_;
  uint32_t p_, m_;
  std::mt19937_64 rng_;
  std::mt19937_64 loss_rng_;  // multicast losses, apart from the event order
  std::vector<std::unique_ptr<Machine>> machines_;
  std::vector<Sink> sinks_;
  std::vector<bool> started_;
  std::vector<bool> timer_pending_;
  std::vector<Rank> unstarted_;
  std::deque<InFlight> pool_;

  std::vector<uint8_t> root_bytes_;
  std::vector<std::vector<uint8_t>> held_;    // what arrived, per rank
  std::vector<std::vector<uint8_t>> result_;  // what was delivered, per rank
  std::vector<uint32_t> arrived_;             // rank * m + seg: arrivals
  std::vector<uint8_t> delivered_;            // rank * m + seg: deliveries
  std::vector<Bitmap> sent_;                  // per sender: to * m + seg
  std::vector<Bitmap> multicast_;             // per sender: seg
  std::vector<uint8_t> sent_to_, received_from_;  // a * p + b

  // The machine being driven: emissions are checked against its state.
  Rank acting_ = kNoRank;
  bool acting_was_done_ = false;

  uint64_t steps_ = 0, max_steps_ = 0, arrivals_ = 0, multicast_arrivals_ = 0, signal_arrivals_ = 0;
  Result res_;
};

Run::Run(const Plan& plan, const MachineFactory& make, const Options& opt)
    : plan_(plan), opt_(opt), p_(plan.nodes()), m_(plan.segments()), rng_(opt.seed),
      loss_rng_(opt.seed * 0x9e3779b97f4a7c15ull ^ opt.mcast_seed ^ 0x6d63617374ull) {  // "mcast"
  if (!(opt.mcast_loss >= 0 && opt.mcast_loss <= 1)) fail("options: mcast_loss must be in 0..1");
  res_.seed = opt.seed;
  res_.nodes.resize(p_);
  for (auto& n : res_.nodes) n.lane_bytes_sent.assign(plan.lanes(), 0);
  const uint64_t m1 = std::max<uint32_t>(m_, 1);
  max_steps_ = opt.max_steps ? opt.max_steps : 3 * uint64_t{p_} + uint64_t{p_} * p_ * m1 + 64;

  std::mt19937_64 pattern(opt.seed ^ 0x6c616e6563617374ull);  // "lanecast"
  root_bytes_.resize(plan.message_bytes());
  for (size_t i = 0; i < root_bytes_.size(); i += 8) {
    const uint64_t w = pattern();
    std::memcpy(root_bytes_.data() + i, &w, std::min<size_t>(8, root_bytes_.size() - i));
  }
  held_.resize(p_);
  result_.resize(p_);
  for (Rank r = 0; r < p_; ++r) {
    if (r == plan.root()) continue;
    held_[r].assign(plan.message_bytes(), 0);
    result_[r].assign(plan.message_bytes(), 0);
  }
  arrived_.assign(size_t{p_} * m_, 0);
  delivered_.assign(size_t{p_} * m_, 0);
  if (!opt.allow_duplicate_sends)
    for (Rank r = 0; r < p_; ++r) {
      sent_.emplace_back(uint64_t{p_} * m_);
      multicast_.emplace_back(m_);
    }
  sent_to_.assign(size_t{p_} * p_, 0);
  received_from_.assign(size_t{p_} * p_, 0);

  started_.assign(p_, false);
  timer_pending_.assign(p_, false);
  sinks_.reserve(p_);
  for (Rank r = 0; r < p_; ++r) {
    machines_.push_back(make(r));
    sinks_.emplace_back(*this, r);
    unstarted_.push_back(r);
    if (!machines_.back()) fail("the factory returned no machine for rank " + std::to_string(r));
  }
}

void Run::fail(const std::string& what) {
  if (!res_.error.empty()) return;  // keep the first
  res_.error = what;
}

void Run::start(Rank r) {
  unstarted_.erase(std::find(unstarted_.begin(), unstarted_.end(), r));
  started_[r] = true;
  acting_ = r;
  acting_was_done_ = false;  // done() before start() means nothing
  machines_[r]->start(sinks_[r]);
  acting_ = kNoRank;
  check_timer_vs_done(r);
}

void Run::check_timer_vs_done(Rank r) {
  if (timer_pending_[r] && machines_[r]->done())
    fail(at() + "rank " + std::to_string(r) + " reported done() with a timer pending");
}

// Timers fire, and signals arrive, like segments: at a random legal point.
void Run::fire(const InFlight& x) {
  Machine& m = *machines_[x.to];
  acting_ = x.to;
  acting_was_done_ = m.done();
  if (x.kind == InFlight::Timer) {
    timer_pending_[x.to] = false;
    ++res_.timers;
    m.on_timer(x.seg, sinks_[x.to]);
  } else {
    ++signal_arrivals_;
    m.on_signal(x.from, x.seg, sinks_[x.to]);
  }
  acting_ = kNoRank;
  if (acting_was_done_ && !m.done())
    fail(at() + "rank " + std::to_string(x.to) + " was done() but no longer is after " +
         (x.kind == InFlight::Timer ? "its timer " : "a signal from rank " + std::to_string(x.from) + " with tag ") +
         std::to_string(x.seg));
  check_timer_vs_done(x.to);
}

void Run::arrive(InFlight& x) {
  ++arrivals_;
  NodeStats& st = res_.nodes[x.to];
  st.bytes_received += x.bytes.size();
  ++st.segments_received;
  if (x.kind == InFlight::Multicast) {
    ++multicast_arrivals_;
    ++st.multicast_received;
  } else {
    received_from_[size_t{x.to} * p_ + x.from] = 1;
  }
  const Segment s = plan_.segment(x.seg);
  if (holds(x.to, x.seg)) {
    ++st.duplicates_received;
    if (std::memcmp(bytes_of(x.to) + s.offset, x.bytes.data(), s.length) != 0)
      return fail(at() + "rank " + std::to_string(x.to) + " received segment " +
                  std::to_string(x.seg) + " again from rank " + std::to_string(x.from) +
                  " with different bytes");
  } else {
    std::memcpy(held_[x.to].data() + s.offset, x.bytes.data(), s.length);
  }
  if (x.to != plan_.root()) ++arrived_[idx(x.to, x.seg)];

  Machine& m = *machines_[x.to];
  acting_ = x.to;
  acting_was_done_ = m.done();
  m.on_segment(x.seg, x.from, x.lane, sinks_[x.to]);
  acting_ = kNoRank;
  if (acting_was_done_ && !m.done())
    fail(at() + "rank " + std::to_string(x.to) + " was done() but no longer is after segment " +
         std::to_string(x.seg) + " from rank " + std::to_string(x.from));
  check_timer_vs_done(x.to);
}

void Run::on_send(Rank me, Rank to, SegmentIndex seg, Lane lane) {
  const std::string what = "rank " + std::to_string(me) + " sent segment " + std::to_string(seg) +
                           " to rank " + std::to_string(to) + " on lane " + std::to_string(lane);
  if (me != acting_) return fail(at() + what + " outside its own event");
  if (acting_was_done_) return fail(at() + what + " after it reported done()");
  if (to >= p_) return fail(at() + what + ": no such rank (p = " + std::to_string(p_) + ")");
  if (to == me) return fail(at() + what + ": a send to itself");
  if (lane >= plan_.lanes())
    return fail(at() + what + ": no such lane (lanes = " + std::to_string(plan_.lanes()) + ")");
  if (seg >= m_)
    return fail(at() + what + ": no such segment (segments = " + std::to_string(m_) + ")");
  if (!holds(me, seg)) return fail(at() + what + " without holding it");
  if (!opt_.allow_duplicate_sends && !sent_[me].test_and_set(uint64_t{to} * m_ + seg))
    return fail(at() + what + " a second time");
  if (++res_.sends + res_.multicasts + res_.arms + res_.signals > max_steps_)
    return fail(at() + "more than " + std::to_string(max_steps_) + " sends: livelock?");

  const Segment s = plan_.segment(seg);
  const uint8_t* src = bytes_of(me) + s.offset;
  pool_.push_back(InFlight{me, to, seg, lane, std::vector<uint8_t>(src, src + s.length)});
  NodeStats& st = res_.nodes[me];
  st.bytes_sent += s.length;
  st.lane_bytes_sent[lane] += s.length;
  ++st.segments_sent;
  sent_to_[size_t{me} * p_ + to] = 1;
}

void Run::on_multicast(Rank me, SegmentIndex seg, Lane lane) {
  const std::string what = "rank " + std::to_string(me) + " multicast segment " + std::to_string(seg) +
                           " on lane " + std::to_string(lane);
  if (me != acting_) return fail(at() + what + " outside its own event");
  if (acting_was_done_) return fail(at() + what + " after it reported done()");
  if (lane >= plan_.lanes())
    return fail(at() + what + ": no such lane (lanes = " + std::to_string(plan_.lanes()) + ")");
  if (seg >= m_)
    return fail(at() + what + ": no such segment (segments = " + std::to_string(m_) + ")");
  if (!holds(me, seg)) return fail(at() + what + " without holding it");
  if (!opt_.allow_duplicate_sends && !multicast_[me].test_and_set(seg))
    return fail(at() + what + " a second time");
  if (res_.sends + ++res_.multicasts + res_.arms + res_.signals > max_steps_)
    return fail(at() + "more than " + std::to_string(max_steps_) + " sends: livelock?");

  const Segment s = plan_.segment(seg);
  const uint8_t* src = bytes_of(me) + s.offset;
  NodeStats& st = res_.nodes[me];
  st.bytes_sent += s.length;  // one datagram on the sender's port
  st.lane_bytes_sent[lane] += s.length;
  ++st.segments_sent;
  ++st.multicasts_sent;
  std::bernoulli_distribution lost(opt_.mcast_loss);
  for (Rank to = 0; to < p_; ++to) {
    if (to == me) continue;
    ++res_.multicast_copies;
    if (opt_.mcast_loss > 0 && lost(loss_rng_)) {
      ++res_.multicast_lost;
      ++res_.nodes[to].multicast_lost;
      continue;
    }
    pool_.push_back(InFlight{me, to, seg, lane, std::vector<uint8_t>(src, src + s.length), InFlight::Multicast});
  }
}

void Run::on_deliver(Rank me, SegmentIndex seg) {
  const std::string what = "rank " + std::to_string(me) + " delivered segment " + std::to_string(seg);
  if (me != acting_) return fail(at() + what + " outside its own event");
  if (acting_was_done_) return fail(at() + what + " after it reported done()");
  if (me == plan_.root()) return fail(at() + what + ", but it is the root");
  if (seg >= m_)
    return fail(at() + what + ": no such segment (segments = " + std::to_string(m_) + ")");
  if (arrived_[idx(me, seg)] == 0) return fail(at() + what + " that never arrived");
  if (delivered_[idx(me, seg)]++ != 0) return fail(at() + what + " twice");
  const Segment s = plan_.segment(seg);
  std::memcpy(result_[me].data() + s.offset, held_[me].data() + s.offset, s.length);
}

void Run::on_arm(Rank me, uint64_t after_ns, uint32_t tag) {
  const std::string what = "rank " + std::to_string(me) + " armed a timer (tag " + std::to_string(tag) +
                           ", " + std::to_string(after_ns) + " ns)";
  if (me != acting_) return fail(at() + what + " outside its own event");
  if (acting_was_done_) return fail(at() + what + " after it reported done()");
  if (timer_pending_[me]) return fail(at() + what + " while another is pending");
  if (res_.sends + res_.multicasts + ++res_.arms + res_.signals > max_steps_)
    return fail(at() + "more than " + std::to_string(max_steps_) + " actions: livelock?");
  timer_pending_[me] = true;
  pool_.push_back(InFlight{me, me, tag, 0, {}, InFlight::Timer});
}

void Run::on_signal(Rank me, Rank to, uint32_t tag) {
  const std::string what = "rank " + std::to_string(me) + " signalled rank " + std::to_string(to) +
                           " (tag " + std::to_string(tag) + ")";
  if (me != acting_) return fail(at() + what + " outside its own event");
  if (acting_was_done_) return fail(at() + what + " after it reported done()");
  if (to >= p_) return fail(at() + what + ": no such rank (p = " + std::to_string(p_) + ")");
  if (to == me) return fail(at() + what + ": a signal to itself");
  if (res_.sends + res_.multicasts + res_.arms + ++res_.signals > max_steps_)
    return fail(at() + "more than " + std::to_string(max_steps_) + " actions: livelock?");
  ++res_.nodes[me].signals_sent;
  pool_.push_back(InFlight{me, to, tag, 0, {}, InFlight::Signal});
}

void Run::finish() {
  if (arrivals_ - multicast_arrivals_ != res_.sends)
    return fail("quiescence: " + std::to_string(res_.sends) + " sends but " +
                std::to_string(arrivals_ - multicast_arrivals_) + " arrivals");
  if (signal_arrivals_ != res_.signals)
    return fail("quiescence: " + std::to_string(res_.signals) + " signals but " +
                std::to_string(signal_arrivals_) + " arrived");
  if (multicast_arrivals_ != res_.multicast_copies - res_.multicast_lost)
    return fail("quiescence: " + std::to_string(res_.multicast_copies - res_.multicast_lost) +
                " multicast copies not lost but " + std::to_string(multicast_arrivals_) + " arrived");
  for (Rank r = 0; r < p_; ++r) {
    const std::string who = "quiescence: rank " + std::to_string(r);
    if (!started_[r]) return fail(who + " never started");
    if (!machines_[r]->done()) {
      uint32_t have = 0;
      for (SegmentIndex s = 0; s < m_; ++s) have += holds(r, s) ? 1 : 0;
      return fail(who + " is not done() (holds " + std::to_string(have) + " of " +
                  std::to_string(m_) + " segments)");
    }
    if (r == plan_.root()) continue;
    for (SegmentIndex s = 0; s < m_; ++s)
      if (delivered_[idx(r, s)] != 1)
        return fail(who + " never delivered segment " + std::to_string(s) +
                    (arrived_[idx(r, s)] ? " (it arrived)" : " (it never arrived)"));
    if (result_[r] != root_bytes_) {
      const auto mis = std::mismatch(result_[r].begin(), result_[r].end(), root_bytes_.begin());
      return fail(who + " delivered bytes that differ from the root's at offset " +
                  std::to_string(mis.first - result_[r].begin()));
    }
  }
  for (Rank a = 0; a < p_; ++a) {
    NodeStats& st = res_.nodes[a];
    for (Rank b = 0; b < p_; ++b) {
      const bool to = sent_to_[size_t{a} * p_ + b], from = received_from_[size_t{a} * p_ + b];
      st.peers_sent_to += to;
      st.peers_received_from += from;
      st.peers += (to || from);
    }
  }
}

Result Run::go() {
  while (res_.error.empty()) {
    const size_t u = unstarted_.size(), f = pool_.size();
    if (u + f == 0) break;
    if (++steps_ > max_steps_) {
      fail(at() + "step bound " + std::to_string(max_steps_) + " exceeded: livelock?");
      break;
    }
    bool starting = f == 0;
    if (u != 0 && f != 0) starting = std::uniform_int_distribution<size_t>(0, u + f - 1)(rng_) < u;
    if (starting) {
      start(unstarted_[std::uniform_int_distribution<size_t>(0, u - 1)(rng_)]);
      continue;
    }
    InFlight x;
    if (opt_.order == Order::Fifo) {
      x = std::move(pool_.front());
      pool_.pop_front();
    } else if (opt_.order == Order::Lifo) {
      x = std::move(pool_.back());
      pool_.pop_back();
    } else {
      const size_t i = std::uniform_int_distribution<size_t>(0, f - 1)(rng_);
      std::swap(pool_[i], pool_.back());
      x = std::move(pool_.back());
      pool_.pop_back();
    }
    if (!started_[x.to]) {  // a node's start precedes its own arrivals
      ++steps_;
      start(x.to);
    }
    if (!res_.error.empty()) break;
    if (x.kind == InFlight::Timer || x.kind == InFlight::Signal) fire(x);
    else arrive(x);
  }
  if (res_.error.empty()) finish();
  res_.steps = steps_;
  res_.ok = res_.error.empty();
  return std::move(res_);
}

}  // namespace

Result run(const Plan& plan, const MachineFactory& make, const Options& opt) {
  return Run(plan, make, opt).go();
}

Result run(Algo algo, const Plan& plan, const Options& opt) {
  return run(plan, [&](Rank r) { return make_machine(algo, plan, r); }, opt);
}

}  // namespace lanecast::algos::model
