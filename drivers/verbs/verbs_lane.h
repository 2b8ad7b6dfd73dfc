// One lane of the verbs port: its UD queue pair, its two completion queues,
// the receives it has posted and the sends in flight. Owned by the core that
// polls the lane; the counters are read by others (relaxed atomics).
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "drivers/verbs/verbs_port.h"

namespace lanecast::drivers::verbs {

inline constexpr uint16_t kBurst = 32;       // work requests posted per call, completions read per poll
inline constexpr uint32_t kMaxSendSge = 4;   // header + payload, and room for a longer chain

// "ibv_create_qp failed: Cannot allocate memory": what the port's errors say.
inline std::string failed(const char* call, int err) { return std::string(call) + " failed: " + std::strerror(err); }

class LaneCount {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

struct VerbsPort::Lane {
  uint16_t index = 0;
  ibv_cq* send_cq = nullptr;
  ibv_cq* recv_cq = nullptr;
  ibv_qp* qp = nullptr;
  uint32_t max_send_sge = 1;
  uint32_t max_inline = 0;

  // Posted receives, oldest first: a UD QP completes receives in the order
  // they were posted, so the ring's head is the next completion's buffer.
  std::vector<rte_mbuf*> rq;
  uint32_t rq_head = 0;
  uint32_t rq_posted = 0;
  bool rq_was_low = false, rq_was_empty = false;  // count each approach to running dry once

  // Sends in flight: slot (seq % size) holds the frame of send `seq`
  // (nullptr when it went inline). A signalled completion for `seq` retires
  // every send up to it - the queue pair's own rule for unsignalled sends.
  std::vector<rte_mbuf*> sq;
  uint64_t sq_next = 0;     // sequence of the next send
  uint64_t sq_retired = 0;  // sends up to here are done and freed
  uint32_t since_signal = 0;
  bool broken = false;      // an error completion left the QP in the error state

  // Scratch for one burst: the datapath allocates nothing.
  ibv_recv_wr recv_wr[kBurst];
  ibv_sge recv_sge[kBurst];
  ibv_send_wr send_wr[kBurst];
  ibv_sge send_sge[kBurst * kMaxSendSge];
  ibv_wc wc[kBurst];

  struct {
    LaneCount rx_posted, rx_completed, rx_errors, rx_no_buffer, rq_low, rq_empty, tx_posted, tx_completions, tx_inline,
        tx_full, tx_unresolved, tx_errors, tx_too_many_segments, qp_recovered, rx_frames, tx_frames;
  } c;

  uint32_t sq_in_flight() const { return static_cast<uint32_t>(sq_next - sq_retired); }
};

}  // namespace lanecast::drivers::verbs
