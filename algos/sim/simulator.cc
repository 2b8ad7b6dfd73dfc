#include "algos/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "algos/mix.h"
#include "algos/sim/event_queue.h"
#include "algos/sim/sim_tables.h"
#include "algos/sim/tx_queues.h"

namespace lanecast::algos::sim {
namespace {

using namespace detail;  // sim_tables.h

class Sim final : public Actions {
 public:
  Sim(const Plan& plan, const Network& net, const SimOptions& opt)
      : plan_(plan), net_(net), opt_(opt), p_(plan.nodes()), lanes_(plan.lanes()),
        ports_per_node_(net.lanes_share_port ? 1 : plan.lanes()), m_(plan.segments()), peers_(p_),
        loss_rng_(net.multicast_seed) {
    net_.latency.check_fits(p_);
    if (!(net.bytes_per_second > 0)) throw std::invalid_argument("network: link rate must be positive");
    if (!(net.multicast_loss >= 0 && net.multicast_loss <= 1))
      throw std::invalid_argument("network: multicast loss must be in 0..1");
    const double link = net.bytes_per_second;
    const double port = net.port_capacity > 0 ? std::min(link, net.port_capacity) : link;
    const double ps_per_byte = 1e12 / port;
    const double bp_ps_per_byte = net.switch_capacity > 0 ? 1e12 / net.switch_capacity : 0;
    const uint32_t full = plan.segment_bytes();
    const uint32_t last = m_ > 0 ? plan.segment(m_ - 1).length : 0;
    auto dur = [&](uint32_t b, double per_byte) {
      return static_cast<Picos>(std::llround((double(b) + net.frame_overhead_bytes) * per_byte));
    };
    d_port_[0] = dur(full, ps_per_byte) + net.frame_overhead_time;
    d_port_[1] = dur(last, ps_per_byte) + net.frame_overhead_time;
    d_bp_[0] = net.switch_capacity > 0 ? dur(full, bp_ps_per_byte) : 0;
    d_bp_[1] = net.switch_capacity > 0 ? dur(last, bp_ps_per_byte) : 0;
    len_[0] = full;
    len_[1] = last;
    d_signal_ = dur(0, ps_per_byte) + net.frame_overhead_time;
    // A port bucket (GCRA): a frame's time on the wire is its fixed cost, and
    // the bucket holds the port to the link rate beyond the burst. Its
    // tolerance passes floor(burst / frame) full frames at once, as tbf's
    // does (each takes a frame's worth of tokens).
    const double frame_bytes = double(full) + net.frame_overhead_bytes;
    const double tolerance = static_cast<double>(net.port_burst_bytes) - frame_bytes;
    tau_ = tolerance > 0 ? static_cast<Picos>(std::llround(tolerance * ps_per_byte)) : 0;
    for (int i = 0; i < 2; ++i) d_wire_[i] = tau_ > 0 ? net.frame_overhead_time : d_port_[i];

    const size_t ports = size_t{p_} * ports_per_node_;
    tx_free_.assign(ports, 0);
    tx_tat_.assign(tau_ > 0 ? ports : 0, 0);
    rx_.resize(ports);
    rx_queue_ = KeyedQueue(static_cast<uint32_t>(ports));
    if (net.switch_buffer_frames > 0 && net.tx_order != TxOrder::Fifo)
      throw std::invalid_argument("network: a bounded switch buffer needs FIFO tx ports");
    if (net.tx_order == TxOrder::RoundRobin) rr_.resize(ports);
    else fifo_.resize(ports);
    // How far ahead FIFO ports put frames on the wire; a pause is decided when a
    // frame goes on the wire, so a bounded buffer shortens the horizon with it.
    const uint32_t ahead = net.switch_buffer_frames > 0 ? std::clamp(net.switch_buffer_frames / 2, 1u, 64u) : 64u;
    horizon_ = std::max<Picos>(ahead * d_port_[0], 1);
    node_.resize(p_);
    res_.multicast_lost.assign(p_, 0);
    res_.multicast_unposted.assign(p_, 0);
    start_at_ = start_times(net, p_, plan.root());
    timer_pending_.assign(p_, 0);
    if (lanes_ > 1) res_.lane_bytes_sent.assign(size_t{p_} * lanes_, 0);
    if (opt.validate) {
      delivered_mix_.assign(p_, 0);
      for (SegmentIndex seg = 0; seg < m_; ++seg) all_mix_ += delivery_mix(seg);
      valid_.init(p_, m_);
      valid_.set_row_held(plan.root());
    }
    queue_.reserve(size_t{p_} * 4);
  }

  SimResult run(const MachineFactory& make) {
    machines_.reserve(p_);
    for (Rank r = 0; r < p_; ++r) {
      machines_.push_back(make(r));
      if (!machines_.back()) throw std::logic_error("sim: no machine for rank " + std::to_string(r));
      node_[r].machine = machines_.back().get();
    }
    for (Rank r = 0; r < p_; ++r) {
      if (start_at_[r] > 0) queue_.push(start_at_[r], Event::Start, r, 0, 0, 0);  // skew
      else start_rank(r);
    }
    for (;;) {
      // The earlier of the next delivery at an rx port and the next other event.
      const bool events = !queue_.empty();
      if (!rx_queue_.empty() &&
          (!events || rx_queue_.top_time() < queue_.top().time ||
           (rx_queue_.top_time() == queue_.top().time && rx_queue_.top_seq() < queue_.top().seq))) {
        now_ = rx_queue_.top_time();
        deliver_frame(rx_queue_.top_key());
        continue;
      }
      if (!events) break;
      // Handlers take the event off the queue themselves (pop or replace_top).
      const Event e = queue_.top();
      now_ = e.time;
      switch (e.kind) {
        case Event::Arrive: ++res_.events; arrive(e); break;
        case Event::TxFree: ++res_.events; tx_free_event(e); break;
        case Event::Refill: ++res_.events; refill_event(e); break;
        case Event::Start:
        case Event::Timer:
        case Event::Signal:
        case Event::Held: ++res_.events; waiting_event(e); break;
      }
    }
    res_.start = start_at_;
    return finish();
  }

  // Actions: called by the machine of rank me_ at time now_.
  void send(Rank to, SegmentIndex seg, Lane lane) override {
    if (to >= p_ || to == me_ || seg >= m_ || lane >= lanes_)
      bad("sends segment " + std::to_string(seg) + " to rank " + std::to_string(to) + " on lane " +
          std::to_string(lane) + " (p=" + std::to_string(p_) + ", segments=" + std::to_string(m_) +
          ", lanes=" + std::to_string(lanes_) + ")");
    peers_.add(me_, to);
    emit(Send{to, seg, lane});
  }

  // One frame on the sender's tx port (queued like a send, its destination
  // kMulticast); start_frame fans it out to every other rank's rx port.
  void multicast(SegmentIndex seg, Lane lane) override {
    if (seg >= m_ || lane >= lanes_)
      bad("multicasts segment " + std::to_string(seg) + " on lane " + std::to_string(lane) +
          " (segments=" + std::to_string(m_) + ", lanes=" + std::to_string(lanes_) + ")");
    emit(Send{kMulticast, seg, lane});
  }

  void emit(const Send& s) {
    const SegmentIndex seg = s.seg;
    const Lane lane = s.lane;
    if (opt_.validate && !valid_.held(me_, seg))
      bad((s.dst == kMulticast ? "multicasts segment " : "sends segment ") + std::to_string(seg) +
          " it does not hold");
    const uint32_t len = len_[seg + 1 == m_];
    NodeState& me = node_[me_];
    me.bytes_sent += len;
    ++me.frames_sent;
    if (lanes_ > 1) res_.lane_bytes_sent[size_t{me_} * lanes_ + lane] += len;
    const size_t port = port_of(me_, lane);
    if (net_.tx_order == TxOrder::Fifo) {
      FifoBacklog& b = fifo_[port];
      if (b.empty() && tx_free_[port] <= now_ + horizon_ && !full(s)) {
        start_frame(port, s, std::max(now_, tx_free_[port]));
      } else {
        const bool idle = b.empty();  // otherwise a refill or a wake-up is due
        b.push(s);
        if (idle) fill(port);
      }
    } else {
      rr_[port].push(s);
      if (!rr_[port].busy) start_rr(port);
    }
  }

  void deliver(SegmentIndex seg) override {
    if (me_ == plan_.root()) bad("delivers segment " + std::to_string(seg) + " on the root");
    if (seg >= m_) bad("delivers segment " + std::to_string(seg) + " of " + std::to_string(m_));
    NodeState& me = node_[me_];
    if (opt_.validate) {
      if (!valid_.held(me_, seg)) bad("delivers segment " + std::to_string(seg) + " it does not hold");
      if (me.delivered == m_) bad("delivers segment " + std::to_string(seg) + " after all " + std::to_string(m_) + " (twice)");
      delivered_mix_[me_] += delivery_mix(seg);
    }
    ++me.delivered;
  }

  // A timer of exactly `after_ns` of virtual time; one pending per machine.
  void arm(uint64_t after_ns, uint32_t tag) override {
    if (timer_pending_[me_]) bad("arms a timer (tag " + std::to_string(tag) + ") while another is pending");
    if (node_[me_].done_at != kNever) bad("arms a timer (tag " + std::to_string(tag) + ") after it reported done()");
    timer_pending_[me_] = 1;
    const Picos after = after_ns > kNever / 2000 ? kNever / 2 : Picos{after_ns} * 1000;
    queue_.push(now_ + after, Event::Timer, me_, tag, 0, 0);
  }

  // A header-only frame: t0 + d0 to `to`, or `to`'s start if that is later.
  void signal(Rank to, uint32_t tag) override {
    if (to >= p_ || to == me_)
      bad("signals rank " + std::to_string(to) + " (p=" + std::to_string(p_) + ")");
    ++res_.signals;
    const Picos at = std::max(now_ + net_.latency.latency(me_, to) + d_signal_, start_at_[to]);
    queue_.push(at, Event::Signal, me_, to, tag, 0);
  }

 private:
  static constexpr Picos kNever = ~Picos{0};
  static constexpr Rank kMulticast = kNoRank;  // a Send's destination: every other rank
  static constexpr size_t kKeepCapacity = 256;  // rx queue entries kept after a burst

  size_t port_of(Rank r, Lane lane) const {
    return size_t{r} * ports_per_node_ + (ports_per_node_ == 1 ? 0 : lane);
  }

  [[noreturn]] void bad(const std::string& what) const {
    throw std::logic_error("sim: rank " + std::to_string(me_) + " " + what + " at t=" +
                           std::to_string(now_) + " ps");
  }

  // The tx port starts a frame at `start` (>= now).
  void start_frame(size_t port, const Send& s, Picos start) {
    const Rank src = static_cast<Rank>(port / ports_per_node_), dst = s.dst;
    const SegmentIndex seg = s.seg;
    const Lane lane = s.lane;
    const Picos d = d_wire_[seg + 1 == m_];
    if (tau_ > 0) {  // the bucket: no sooner than it holds the frame
      start = std::max(start, bucket_holds(tx_tat_[port]));
      tx_tat_[port] = std::max(tx_tat_[port], start) + d_port_[seg + 1 == m_];
    }
    tx_free_[port] = start + d;
    node_[src].last_tx_end = std::max(node_[src].last_tx_end, start + d);
    if (dst != kMulticast) return to_switch(src, dst, seg, lane, start, d);
    // The switch copies a multicast to every other port; each copy may be lost.
    std::bernoulli_distribution lost(net_.multicast_loss);
    for (Rank r = 0; r < p_; ++r) {
      if (r == src) continue;
      if (net_.multicast_loss > 0 && lost(loss_rng_)) {
        ++res_.multicast_lost[r];
        continue;
      }
      if (start + net_.latency.latency(src, r) + d < start_at_[r]) {  // no receive posted yet
        ++res_.multicast_unposted[r];
        continue;
      }
      to_switch(src, r, seg, lane, start, d);
    }
  }

  // A frame whose first bit leaves `src` at `start` (port time d) heads for `dst`.
  void to_switch(Rank src, Rank dst, SegmentIndex seg, Lane lane, Picos start, Picos d) {
    const Picos first_bit = start + net_.latency.latency(src, dst);
    if (net_.switch_capacity > 0) {
      // The backplane serves frames in the order they reach the switch: wait for that.
      queue_.push(first_bit, Event::Arrive, src, dst, seg, lane);
    } else {
      rx_enqueue(dst, lane, Pending{first_bit, first_bit + d, src, seg, lane});
    }
  }

  // Bounded backplane: the frame crosses it in arrival order, then waits for the rx port.
  void arrive(const Event& e) {
    queue_.pop();
    const bool last = e.c + 1 == m_;
    const Picos start = std::max(now_, backplane_free_);
    const Picos end = std::max(now_ + d_port_[last], start + d_bp_[last]);
    backplane_free_ = end;
    rx_enqueue(e.b, e.lane, Pending{start, end, e.a, e.c, e.lane});
  }

  // The rx port of `dst` serves frames in the order their first bit reaches it
  // (cut-through: a frame leaves no sooner than `ready`). Only the head of its
  // queue is scheduled (in rx_queue_, one entry per port); a frame emitted
  // later that reaches the port sooner (from an idle sender while the head's
  // sender was backlogged) takes the head's place and moves the port's entry.
  // One event per frame, where "arrive, then deliver" would cost two.
  void rx_enqueue(Rank dst, Lane lane, const Pending& f) {
    RxPort& rp = rx_[port_of(dst, lane)];
    rp.q.push_back(f);
    size_t i = rp.q.size() - 1;
    while (i > rp.head && f.before(rp.q[i - 1])) {
      rp.q[i] = rp.q[i - 1];
      --i;
    }
    rp.q[i] = f;
    if (i == rp.head) rx_queue_.set(static_cast<uint32_t>(port_of(dst, lane)), head_done(rp), queue_.next_seq());
  }

  // When a bucket whose empty time is `tat` holds a frame again.
  Picos bucket_holds(Picos tat) const { return tat > tau_ ? tat - tau_ : 0; }

  // When the head frame of an rx port will have crossed it.
  Picos head_done(const RxPort& rp) const {
    const Pending& h = rp.q[rp.head];
    Picos start = std::max(h.first_bit, rp.free);
    if (tau_ > 0) start = std::max(start, bucket_holds(rp.tat));
    return std::max(start + d_wire_[h.seg + 1 == m_], h.ready);
  }

  void deliver_frame(uint32_t port) {
    RxPort& rp = rx_[port];
    ++res_.events;
    const Pending f = rp.q[rp.head++];
    rp.free = now_;
    if (tau_ > 0) {
      const bool last = f.seg + 1 == m_;
      rp.tat = std::max(rp.tat, now_ > d_wire_[last] ? now_ - d_wire_[last] : 0) + d_port_[last];
    }
    // The receiver's lines are cold at 4096 nodes: ask for them now and let the
    // queue updates below run while they come.
    const Rank dst = static_cast<Rank>(port / ports_per_node_);
    NodeState& node = node_[dst];
    __builtin_prefetch(node.machine);
    if (opt_.validate) valid_.prefetch(dst, f.seg);
    // Keep queues small and hot, and give back what a burst (incast) made them
    // grow to: p ports keeping room for p frames each would cost p^2 memory.
    if (rp.head == rp.q.size()) {
      rp.q.clear();
      rp.head = 0;
      if (rp.q.capacity() > kKeepCapacity) std::vector<Pending>().swap(rp.q);
      rx_queue_.pop();
    } else {
      if (rp.head >= 32 && 2 * rp.head >= rp.q.size()) {
        rp.q.erase(rp.q.begin(), rp.q.begin() + static_cast<ptrdiff_t>(rp.head));
        rp.head = 0;
        if (rp.q.capacity() > kKeepCapacity && rp.q.capacity() > 8 * rp.q.size()) rp.q.shrink_to_fit();
      }
      rx_queue_.set(port, head_done(rp), queue_.next_seq());
    }
    // The next delivery is most likely the new top: fetch its frame and its
    // receiver's state while this one's machine runs.
    if (!rx_queue_.empty()) {
      const uint32_t next = rx_queue_.top_key();
      const RxPort& nx = rx_[next];
      __builtin_prefetch(&node_[next / ports_per_node_]);
      __builtin_prefetch(nx.q.data() + nx.head);
    }
    wake(rp);
    me_ = dst;
    node.bytes_received += len_[f.seg + 1 == m_];
    node.last_receive = now_;
    if (opt_.validate) valid_.set_held(dst, f.seg);
    if (now_ < start_at_[dst]) return queue_.push(start_at_[dst], Event::Held, f.src, dst, f.seg, f.lane);
    node.machine->on_segment(f.seg, f.src, f.lane, *this);
    note_done(dst);
  }

  // Called after every event of rank r. A timer armed after done() is refused
  // in arm(), so checking for a pending one when done() first holds covers all.
  void note_done(Rank r) {
    NodeState& n = node_[r];
    if (n.done_at != kNever || !n.machine->done()) return;
    if (timer_pending_[r]) bad("reports done() with a timer pending");
    n.done_at = now_;
  }

  // FIFO ports put frames on the wire (into their receivers' rx queues) at most
  // `horizon_` ahead of time; the rest waits compactly in the port's backlog
  // and a Refill event tops the wire up every half horizon.
  void schedule_refill(size_t port) {
    fifo_[port].refill_pending = true;
    const Picos half = horizon_ / 2;
    const Picos at = tx_free_[port] > now_ + half ? tx_free_[port] - half : now_;
    queue_.push(at, Event::Refill, static_cast<uint32_t>(port), 0, 0, 0);
  }

  void refill_event(const Event& e) {
    queue_.pop();
    fifo_[e.a].refill_pending = false;
    fill(e.a);
  }

  // Puts the backlog's frames on the wire up to the horizon, unless the next
  // one's rx port is full: then the port waits for that queue to shorten.
  void fill(size_t port) {
    FifoBacklog& b = fifo_[port];
    while (!b.empty() && tx_free_[port] <= now_ + horizon_) {
      const Send s = b.front();
      if (full(s)) {
        b.waiting = true;
        rx_[port_of(s.dst, s.lane)].waiters.push_back(static_cast<uint32_t>(port));
        return;
      }
      start_frame(port, b.pop(), std::max(now_, tx_free_[port]));
    }
    if (!b.empty() && !b.refill_pending) schedule_refill(port);
  }

  // Frames in the switch queue of an rx port: arrived (first bit in) and not yet
  // through. Frames still on the wire do not count: a pause takes effect one t0
  // late, which is why PFC keeps headroom.
  size_t queued(const RxPort& rp) const {
    const auto begin = rp.q.begin() + static_cast<ptrdiff_t>(rp.head);
    const auto arrived = std::partition_point(begin, rp.q.end(), [&](const Pending& f) { return f.first_bit <= now_; });
    return static_cast<size_t>(arrived - begin);
  }

  // A multicast is a datagram: never paused (a real switch would drop it instead).
  bool full(const Send& s) const {
    return net_.switch_buffer_frames > 0 && s.dst != kMulticast &&
           queued(rx_[port_of(s.dst, s.lane)]) >= net_.switch_buffer_frames;
  }

  // A frame left rx port `port`: wake the tx ports waiting for room there.
  void wake(RxPort& rp) {
    if (rp.waiters.empty() || queued(rp) >= net_.switch_buffer_frames) return;
    std::vector<uint32_t> w;
    w.swap(rp.waiters);
    for (uint32_t t : w) {
      fifo_[t].waiting = false;
      fill(t);
    }
  }

  // Round-robin ports start a frame whenever the previous one is done.
  void start_rr(size_t port) {
    RrPort& rp = rr_[port];
    rp.busy = !rp.empty();
    if (!rp.busy) return;
    start_frame(port, rp.pop(), now_);
    queue_.push(tx_free_[port], Event::TxFree, static_cast<uint32_t>(port), 0, 0, 0);
  }

  void tx_free_event(const Event& e) {
    queue_.pop();
    start_rr(e.a);
  }

  // Process skew, timers and signals (see simulator.h).
  void start_rank(Rank r) {
    me_ = r;
    node_[r].machine->start(*this);
    note_done(r);
  }

  void waiting_event(const Event& e) {
    queue_.pop();
    switch (e.kind) {
      case Event::Start: return start_rank(e.a);
      case Event::Timer:
        me_ = e.a;
        timer_pending_[e.a] = 0;
        ++res_.timers;
        node_[e.a].machine->on_timer(e.b, *this);
        return note_done(e.a);
      case Event::Signal:
        me_ = e.b;
        node_[e.b].machine->on_signal(e.a, e.c, *this);
        return note_done(e.b);
      case Event::Held:
        me_ = e.b;
        node_[e.b].machine->on_segment(e.c, e.a, e.lane, *this);
        return note_done(e.b);
      default: return;
    }
  }

  SimResult finish() {
    res_.finish.assign(p_, 0);
    res_.bytes_sent.resize(p_);
    res_.bytes_received.resize(p_);
    res_.frames_sent.resize(p_);
    res_.last_receive.resize(p_);
    for (Rank r = 0; r < p_; ++r) {
      res_.bytes_sent[r] = node_[r].bytes_sent;
      res_.bytes_received[r] = node_[r].bytes_received;
      res_.frames_sent[r] = node_[r].frames_sent;
      res_.last_receive[r] = node_[r].last_receive;
    }
    if (lanes_ == 1) res_.lane_bytes_sent = res_.bytes_sent;
    res_.complete = true;
    uint32_t unfinished = 0, short_of = 0;
    Rank first_unfinished = kNoRank, first_short = kNoRank;
    for (Rank r = 0; r < p_; ++r) {
      const NodeState& n = node_[r];
      if (n.done_at == kNever) {
        if (unfinished++ == 0) first_unfinished = r;
        res_.finish[r] = std::max(now_, n.last_tx_end);
      } else {
        res_.finish[r] = std::max(n.done_at, n.last_tx_end);
      }
      if (r != plan_.root() && n.delivered != m_ && short_of++ == 0) first_short = r;
      if (opt_.validate && r != plan_.root() && n.delivered == m_ && delivered_mix_[r] != all_mix_)
        throw std::logic_error("sim: rank " + std::to_string(r) + " delivered " + std::to_string(m_) +
                               " segments, but not each exactly once (one twice, another never)");
      res_.completion = std::max(res_.completion, res_.finish[r]);
    }
    if (unfinished > 0) {
      res_.complete = false;
      res_.problem = std::to_string(unfinished) + " node(s) never reported done (first: rank " +
                     std::to_string(first_unfinished) + ")";
    } else if (short_of > 0) {
      res_.complete = false;
      res_.problem = std::to_string(short_of) + " node(s) finished without every segment (first: rank " +
                     std::to_string(first_short) + ", " + std::to_string(node_[first_short].delivered) + " of " +
                     std::to_string(m_) + ")";
    }
    res_.peers = peers_.counts();
    return std::move(res_);
  }

  const Plan& plan_;
  const Network& net_;
  SimOptions opt_;
  uint32_t p_;
  uint16_t lanes_;
  uint16_t ports_per_node_;
  uint32_t m_;
  Picos d_port_[2] = {0, 0};  // port time of a full and of the last segment
  Picos d_wire_[2] = {0, 0};  // ... on the wire: d_port_ without a bucket, the fixed cost with one
  Picos tau_ = 0;             // the bucket (Network::port_burst_bytes) as link time; 0: none
  std::vector<Picos> tx_tat_;  // per tx port with a bucket: when it would be empty again (GCRA)
  Picos d_bp_[2] = {0, 0};    // backplane time of a full and of the last segment
  uint32_t len_[2] = {0, 0};

  std::vector<std::unique_ptr<Machine>> machines_;
  EventQueue queue_;
  Picos now_ = 0;
  Rank me_ = 0;
  // Per rank, what a frame's arrival or emission touches, in one cache line.
  struct alignas(64) NodeState {
    Machine* machine = nullptr;
    uint64_t bytes_sent = 0, bytes_received = 0, frames_sent = 0;  // payload bytes, every lane
    Picos last_receive = 0, last_tx_end = 0, done_at = kNever;
    uint32_t delivered = 0;
  };
  std::vector<NodeState> node_;
  std::vector<Picos> tx_free_;
  std::vector<RxPort> rx_;
  KeyedQueue rx_queue_;  // per rx port: when its head frame will have crossed it
  Picos backplane_free_ = 0;
  std::vector<RrPort> rr_;
  std::vector<FifoBacklog> fifo_;
  Picos horizon_ = 1;
  HeldTable valid_;                     // held segments
  std::vector<uint64_t> delivered_mix_;  // per rank: multiset hash of its deliveries
  uint64_t all_mix_ = 0;                 // the hash of every segment once
  PeerSet peers_;
  std::mt19937_64 loss_rng_;  // multicast losses
  std::vector<Picos> start_at_;        // per rank: when its machine starts (skew)
  std::vector<uint8_t> timer_pending_;  // per rank
  Picos d_signal_ = 0;                  // port time of a header-only frame
  SimResult res_;
};

}  // namespace

SimResult simulate(const Plan& plan, const MachineFactory& make, const Network& net,
                   const SimOptions& opt) {
  Sim sim(plan, net, opt);
  return sim.run(make);
}

SimResult simulate(Algo algo, const Plan& plan, const Network& net, const SimOptions& opt) {
  return simulate(plan, [&](Rank r) { return make_machine(algo, plan, r); }, net, opt);
}

}  // namespace lanecast::algos::sim
