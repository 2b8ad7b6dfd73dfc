#include "algos/sim/stream_sim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "algos/sim/latency_histogram.h"
#include "algos/topology/stream_tree.h"

namespace lanecast::algos::sim {
namespace {

// A batch as the publisher cut it.
struct Batch {
  Picos formed;         // when the publisher's port started it
  Picos port_time;      // d: one copy's time on a port
  uint64_t done_first;  // messages whose last piece it carries: [done_first, done_first + done_count)
  uint32_t done_count;
};

Picos publish_time(const StreamModel& m, uint64_t i) {
  if (m.rate <= 0) return 0;
  return static_cast<Picos>(std::llround(static_cast<double>(i) * 1e12 / m.rate));
}

Picos port_time(const StreamModel& m, uint64_t bytes) {
  const double ps = static_cast<double>(bytes + m.frame_overhead_bytes) * 1e12 / m.bytes_per_second;
  return static_cast<Picos>(std::llround(ps)) + m.frame_time;
}

// The publisher's batches: cut whenever its port is free, from what was
// published by then (waiting for the next message if none was), a frame's
// payload at most; its port is then busy for one copy per child (one in all
// for a multicast).
std::vector<Batch> cut_batches(const StreamModel& m, uint32_t copies) {
  std::vector<Batch> out;
  Picos port_free = 0;
  uint64_t next = 0;       // the first message not wholly cut
  uint64_t cut_of_next = 0;  // bytes of it already in earlier batches
  while (next < m.messages) {
    const Picos at = std::max(port_free, publish_time(m, next));
    Batch b{at, 0, next, 0};
    uint64_t bytes = 0;
    while (next < m.messages && publish_time(m, next) <= at && m.segment - bytes > kStreamRecordHead) {
      const uint64_t room = m.segment - bytes - kStreamRecordHead;
      const uint64_t left = m.message_bytes - cut_of_next;
      const uint64_t piece = std::min(room, left);
      bytes += kStreamRecordHead + piece;
      if (piece == left) {  // its last piece
        ++b.done_count;
        ++next;
        cut_of_next = 0;
      } else {
        cut_of_next += piece;
        break;  // the batch is full
      }
    }
    b.port_time = port_time(m, bytes);
    port_free = at + copies * b.port_time;
    out.push_back(b);
  }
  return out;
}

class Walk {
 public:
  Walk(const StreamModel& m, const std::vector<Batch>& batches) : m_(m), b_(batches) {}

  // Every member below the publisher, depth first (a vector of send starts
  // per open level: depth x batches of memory, whatever the fanout).
  void run() {
    if (m_.multicast) {
      std::vector<Picos> held(b_.size());
      for (size_t j = 0; j < b_.size(); ++j) held[j] = b_[j].formed + m_.t0 + b_[j].port_time;
      for (uint32_t v = 1; v < m_.nodes; ++v) deliver(held, 1);
      copies_ = b_.size();
      return;
    }
    // The publisher's sends start as the batches were cut.
    struct Level {
      Rank v;
      std::vector<Picos> starts;  // when its port starts each batch (copy 0)
      uint32_t next_child = 0;
      uint32_t depth;
    };
    std::vector<Level> stack;
    stack.push_back(Level{0, {}, 0, 0});
    stack.back().starts.resize(b_.size());
    for (size_t j = 0; j < b_.size(); ++j) stack.back().starts[j] = b_[j].formed;
    std::vector<Picos> held(b_.size());
    while (!stack.empty()) {
      Level& top = stack.back();
      const uint32_t children = tree(top.v).children();
      if (top.next_child >= children) {
        stack.pop_back();
        continue;
      }
      const uint32_t c = top.next_child++;
      const Rank child = tree(top.v).child(c);
      copies_ += b_.size();
      for (size_t j = 0; j < b_.size(); ++j) held[j] = top.starts[j] + (c + 1) * b_[j].port_time + m_.t0;
      const uint32_t depth = top.depth + 1;
      deliver(held, depth);
      const uint32_t its_children = tree(child).children();
      if (its_children == 0) continue;  // a leaf
      // Its own port: each batch as soon as it holds it and the port is free,
      // one copy per child of its own.
      Level next{child, std::move(held), 0, depth};
      Picos free = 0;
      for (size_t j = 0; j < b_.size(); ++j) {
        const Picos start = std::max(next.starts[j], free);
        next.starts[j] = start;
        free = start + its_children * b_[j].port_time;
      }
      held.assign(b_.size(), 0);
      // The last child of a level is done with it: a chain keeps one level.
      if (c + 1 == children) stack.pop_back();
      stack.push_back(std::move(next));
    }
  }

  StreamPrediction result() const {
    StreamPrediction r;
    r.batches = b_.size();
    r.copies = copies_;
    r.messages_per_batch = b_.empty() ? 0 : static_cast<double>(m_.messages) / static_cast<double>(b_.size());
    r.depth = depth_;
    r.last_delivery = last_;
    const Picos first = publish_time(m_, 0);
    r.msgs_per_second = last_ > first ? static_cast<double>(m_.messages) * 1e12 / static_cast<double>(last_ - first) : 0;
    r.p50 = hist_.quantile(0.50);
    r.p99 = hist_.quantile(0.99);
    r.p999 = hist_.quantile(0.999);
    r.max = hist_.max();
    r.mean = hist_.mean();
    r.deliveries = hist_.total();
    return r;
  }

 private:
  // The engine's stream tree, the publisher at rank 0.
  StreamTree tree(Rank v) const { return StreamTree(m_.nodes, 0, v, m_.fanout); }

  // A member holds batch j at held[j]: the messages it completes are delivered.
  void deliver(const std::vector<Picos>& held, uint32_t depth) {
    depth_ = std::max(depth_, depth);
    for (size_t j = 0; j < b_.size(); ++j) {
      const Batch& b = b_[j];
      for (uint64_t i = b.done_first; i < b.done_first + b.done_count; ++i) hist_.add(held[j] - publish_time(m_, i));
      if (b.done_count > 0) last_ = std::max(last_, held[j]);
    }
  }

  const StreamModel& m_;
  const std::vector<Batch>& b_;
  LatencyHistogram hist_;
  uint64_t copies_ = 0;
  uint32_t depth_ = 0;
  Picos last_ = 0;
};

}  // namespace

std::string stream_model_problem(const StreamModel& m) {
  if (m.nodes < 2) return "a stream needs at least 2 members";
  if (m.messages == 0) return "no messages";
  if (m.fanout == 0) return "fanout must be at least 1";
  if (m.segment <= kStreamRecordHead) return "a batch must hold a record head and a byte (segment > 16)";
  if (!(m.bytes_per_second > 0)) return "the link rate must be positive";
  if (m.rate < 0 || !std::isfinite(m.rate)) return "the message rate must be 0 (all at once) or positive";
  if (m.messages > kStreamMaxMessages) return "at most " + std::to_string(kStreamMaxMessages) + " messages";
  const uint64_t pieces = m.message_bytes / (m.segment - kStreamRecordHead) + 1;  // batches a message may take
  const double work = static_cast<double>(m.nodes) * static_cast<double>(m.messages) * static_cast<double>(pieces);
  if (work > static_cast<double>(kStreamMaxWork))
    return "members x messages x batches per message is " + std::to_string(static_cast<uint64_t>(work)) +
           ", over the model's " + std::to_string(kStreamMaxWork) + " (hours of work): fewer messages or members";
  return "";
}

StreamPrediction simulate_stream(const StreamModel& model) {
  if (const std::string p = stream_model_problem(model); !p.empty()) throw std::invalid_argument(p);
  StreamModel m = model;
  m.fanout = std::min(m.fanout, m.nodes - 1);
  const std::vector<Batch> batches = cut_batches(m, m.multicast ? 1 : std::min<uint32_t>(m.fanout, m.nodes - 1));
  Walk w(m, batches);
  w.run();
  return w.result();
}

}  // namespace lanecast::algos::sim
