// The tree a stream's batches travel: a k-ary tree over virtual ranks
// (v = (rank - publisher) mod p), the publisher at v = 0. Node v forwards to
// v*k+1 .. v*k+k and reports what its subtree delivered to (v-1)/k.
//
//   k = 1        the pipelined chain ("segmented seqtree": each node sends
//                every batch once; the most throughput on one shared link)
//   k = 2        the pipelined binary tree (depth log2 p: less latency)
//   k = p - 1    linear (the publisher sends to everyone)
//
// A message larger than a batch is cut into segments that follow each other
// down the same tree: the segmented chain / binary tree of the broadcast
// algorithms (algos/chain.h, algos/binary.h), with a stream's many messages
// in the pipe at once. Children are a range of virtual ranks, so nothing is
// allocated per stream.
#pragma once

#include <algorithm>
#include <cstdint>

#include "algos/types.h"

namespace lanecast::algos {

class StreamTree {
 public:
  // Precondition: publisher, rank < nodes; fanout >= 1.
  StreamTree(uint32_t nodes, Rank publisher, Rank rank, uint32_t fanout)
      : nodes_(nodes), publisher_(publisher), k_(std::max<uint32_t>(1, std::min(fanout, std::max<uint32_t>(1, nodes - 1)))) {
    v_ = (rank + nodes - publisher) % nodes;
    const uint64_t first = uint64_t{v_} * k_ + 1;
    first_child_ = static_cast<uint32_t>(std::min<uint64_t>(first, nodes));
    last_child_ = static_cast<uint32_t>(std::min<uint64_t>(first + k_, nodes));
  }
  bool is_publisher() const { return v_ == 0; }
  Rank parent() const { return v_ == 0 ? kNoRank : real((v_ - 1) / k_); }
  uint32_t children() const { return last_child_ - first_child_; }
  // Precondition: i < children().
  Rank child(uint32_t i) const { return real(first_child_ + i); }
  // The child whose subtree holds `rank`'s place, as an index, or children()
  // if `rank` is not below this node. Used to check who may report.
  uint32_t child_index(Rank rank) const {
    for (uint32_t i = 0; i < children(); ++i)
      if (child(i) == rank) return i;
    return children();
  }
  uint32_t fanout() const { return k_; }
  // Hops from the publisher.
  uint32_t depth() const {
    uint32_t d = 0;
    for (uint32_t v = v_; v != 0; v = (v - 1) / k_) ++d;
    return d;
  }

 private:
  Rank real(uint32_t v) const { return (v + publisher_) % nodes_; }
  uint32_t nodes_;
  Rank publisher_;
  uint32_t k_;
  uint32_t v_;
  uint32_t first_child_, last_child_;
};

}  // namespace lanecast::algos
