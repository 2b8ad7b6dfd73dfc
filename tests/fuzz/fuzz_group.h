// A small group for the receive-path fuzzers (node_fuzz, stream_fuzz): 2-3
// members and one attacker port on the in-process fabric, driven by hand in
// virtual time (as tests/engine/node_harness.h does for the engine tests).
// What it adds: the mempools are made once per process (a fuzzer runs
// thousands of inputs a second), frames are sent from any port with their
// bytes on the heap (heap_frame.h), a member's port may be watched (a tap
// that keeps what it sends: the frames an attacker on the segment captures),
// and teardown() takes the members and the fabric down and then reports any
// pool that did not get all its buffers back - an mbuf leak, caught at the
// input that caused it.
#pragma once

#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "drivers/fabric/fabric.h"
#include "engine/auth/epoch_keys.h"
#include "engine/runtime/eal.h"
#include "engine/node/node.h"
#include "tests/engine/port_decorator.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/heap_frame.h"

namespace lanecast::fuzz {

// The targets' own loops over message bytes - filling a message, checking
// one delivered - stay out of the coverage instrumentation: the fuzzer
// learns nothing from them, and tracing every byte compared cost more than
// the code under test. (Never inlined: inlined into a traced caller, a loop
// is traced again.)
#define LANECAST_FUZZ_UNTRACED __attribute__((no_sanitize("coverage"), noinline))

template <typename Byte>
LANECAST_FUZZ_UNTRACED void fill_bytes(uint8_t* at, size_t n, Byte&& byte) {
  for (size_t i = 0; i < n; ++i) at[i] = byte(i);
}
// The first of `n` bytes that is not byte(i), or n.
template <typename Byte>
LANECAST_FUZZ_UNTRACED size_t first_difference(const uint8_t* at, size_t n, Byte&& byte) {
  for (size_t i = 0; i < n; ++i)
    if (at[i] != byte(i)) return i;
  return n;
}

struct GroupPools {
  rte_mempool* payload = nullptr;  // the members' segment buffers
  rte_mempool* header = nullptr;   // the members' header and ack frames, the switch's replicas
  rte_mempool* inject = nullptr;   // headers of the frames the fuzzer sends (heap_frame.h)

  static GroupPools make(uint32_t buffers) {
    GroupPools p;
    p.payload = rte_pktmbuf_pool_create("fz_payload", buffers, 0, 0, RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
    p.header = rte_pktmbuf_pool_create("fz_header", buffers, 0, 0, RTE_PKTMBUF_HEADROOM + 192, SOCKET_ID_ANY);
    p.inject = rte_pktmbuf_pool_create("fz_inject", buffers, 0, 0, 0, SOCKET_ID_ANY);
    if (!p.payload || !p.header || !p.inject) throw std::runtime_error("fuzz group: no mempools");
    return p;
  }
};

// What a fuzz target sets up once per process: EAL, the pools, and the
// memzones that exist between inputs (anything more after an input leaked).
struct FuzzProcess {
  const char* target = "fuzz";
  GroupPools pools;
  unsigned memzones = 0;
  bool verbose = false;
};

inline FuzzProcess& fuzz_process() {
  static FuzzProcess p;
  return p;
}

[[noreturn]] inline void die(const std::string& why) {
  std::fprintf(stderr, "%s: %s\n", fuzz_process().target, why.c_str());
  std::abort();
}

inline unsigned memzones() {
  unsigned n = 0;
  rte_memzone_walk([](const rte_memzone*, void* arg) { ++*static_cast<unsigned*>(arg); }, &n);
  return n;
}

// LLVMFuzzerInitialize's work: `verbose_env` set in the environment makes
// the target print what each member counted.
inline void start_fuzz_process(const char* target, const char* verbose_env) {
  engine::EalOptions o;
  o.memory_mb = 512;
  o.polling_cores = 1;
  engine::eal_start(o);
  FuzzProcess& p = fuzz_process();
  p.target = target;
  p.pools = GroupPools::make(4095);
  p.memzones = memzones();
  p.verbose = std::getenv(verbose_env) != nullptr;
}

// The group both targets run: node_fuzz's group id, epoch and segment size
// (the seeds' frames carry them), small windows and stash so that inputs
// reach them full, and timers short enough that a deadline passes within
// the virtual time an input runs.
inline engine::NodeConfig small_group_config(uint64_t peer_timeout_ns) {
  engine::NodeConfig c;
  c.group_id = kNodeGroup;
  c.epoch = kNodeEpoch;
  c.segment_bytes = kNodeSegment;
  c.max_message_bytes = 32 * kNodeSegment;
  c.window = 16;
  c.stash_frames = 16;
  c.peer_timeout_ns = peer_timeout_ns;
  c.rtt.initial_rto_ns = 200'000;
  c.rtt.min_rto_ns = 100'000;
  c.rtt.max_rto_ns = 2'000'000;
  c.ack_delay_ns = 50'000;
  return c;
}

// The epoch's keys of a group with a key (made once per process: a fuzzer
// runs thousands of inputs a second).
inline const std::shared_ptr<const engine::auth::EpochKeys>& group_keys() {
  static const auto keys = std::make_shared<const engine::auth::EpochKeys>(engine::auth::derive_formation_keys(
      *AuthKey::from_hex(std::string(64, 'c'), "fuzz group"), kNodeGroup, kNodeEpoch, {}));
  return keys;
}

// A member's port that keeps a copy of every frame it hands to the fabric
// (up to `limit`): what a host on the segment captures, to replay later.
class TapPort final : public engine::test::PortDecorator {
 public:
  TapPort(drivers::Port& in, size_t limit) : PortDecorator(in), limit_(limit) {}
  uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) override {
    // Only what the port took left; one thread: the switch has not moved it yet.
    const uint16_t n = in_.tx_burst(lane, frames, count);
    for (uint16_t i = 0; i < n && captured_.size() < limit_; ++i) {
      std::vector<uint8_t> f(frames[i]->pkt_len);
      const void* at = rte_pktmbuf_read(frames[i], 0, frames[i]->pkt_len, f.data());
      if (at != f.data()) std::copy_n(static_cast<const uint8_t*>(at), f.size(), f.data());
      captured_.push_back(Captured{lane, std::move(f)});
    }
    return n;
  }
  struct Captured {
    uint16_t lane;
    std::vector<uint8_t> bytes;  // link header included
  };
  const std::vector<Captured>& captured() const { return captured_; }

 private:
  size_t limit_;
  std::vector<Captured> captured_;
};

class FuzzGroup {
 public:
  // tap_frames > 0: each member's port keeps that many of the frames it sends.
  FuzzGroup(uint32_t members, uint16_t lanes, const engine::NodeConfig& cfg, const GroupPools& pools,
            size_t tap_frames = 0)
      : pools_(pools) {
    drivers::Fabric::Options fo;
    fo.nodes = members + 1;  // the last port is the attacker's
    fo.lanes = lanes;
    fo.max_frame_bytes = 2000;
    fo.ring_size = 256;
    fo.queue_frames = 256;
    fo.pool = pools.header;
    fabric_ = std::make_unique<drivers::Fabric>(fo);
    std::vector<drivers::PeerAddress> addrs;
    for (uint32_t r = 0; r < members; ++r) addrs.push_back(fabric_->address(r));
    for (uint32_t r = 0; r < members; ++r) {
      drivers::Port* port = &fabric_->port(r);
      if (tap_frames > 0) {
        taps_.push_back(std::make_unique<TapPort>(*port, tap_frames));
        port = taps_.back().get();
      }
      engine::NodeConfig nc = cfg;
      nc.rank = r;
      nc.nodes = members;
      nc.lanes = lanes;
      nodes_.push_back(std::make_unique<engine::Node>(nc, *port, engine::Pools{pools.payload, pools.header}, addrs));
    }
  }

  uint32_t members() const { return static_cast<uint32_t>(nodes_.size()); }
  uint32_t attacker() const { return members(); }
  engine::Node& node(uint32_t r) { return *nodes_.at(r); }
  drivers::Fabric& fabric() { return *fabric_; }
  uint64_t now() const { return now_; }
  // Member r's tap (only with tap_frames > 0).
  const TapPort& tap(uint32_t r) const { return *taps_.at(r); }

  // One round: time advances, the switch moves frames, every member polls.
  void step(uint64_t advance_ns) {
    now_ += advance_ns;
    fabric_->poll(now_);
    for (auto& n : nodes_) n->poll(now_);
  }
  // Time passes with nothing polled (every core stalled).
  void wait(uint64_t ns) { now_ += ns; }
  // How far the next round may move time: to the earliest timer of a
  // member or of the switch (cores that sleep until their next deadline, as
  // polling cores do, so virtual seconds of deadlines pass in a few rounds),
  // at least 1 us and at most `most_ns`.
  uint64_t next_round_ns(uint64_t most_ns) const {
    uint64_t next = fabric_->next_event_ns();
    for (const auto& n : nodes_) next = std::min(next, n->next_wakeup_ns());
    const uint64_t gap = next > now_ ? next - now_ : 0;
    return std::clamp<uint64_t>(gap, 1000, std::max<uint64_t>(1000, most_ns));
  }

  // Hands `f` (link header included) to fabric port `port`'s lane, its bytes
  // on the heap; false when the port's ring was full (the frame is lost, as
  // on a wire).
  bool send(uint32_t port, uint16_t lane, const std::vector<uint8_t>& f) {
    rte_mbuf* m = heap_frame(pools_.inject, f.data(), static_cast<uint16_t>(f.size()));
    if (m == nullptr) die("the inject pool ran dry");
    if (fabric_->port(port).tx_burst(lane, &m, 1) == 1) return true;
    rte_pktmbuf_free(m);
    return false;
  }

  bool all_ready(uint32_t op) {
    for (auto& n : nodes_)
      if (!n->completions().ready(op)) return false;
    return true;
  }

  // Every member's counters that are not zero (transmit counters left out),
  // after `what`: for the verbose mode of a target.
  void print_counters(const std::function<std::string(uint32_t rank)>& what) {
    for (uint32_t r = 0; r < members(); ++r) {
      std::fprintf(stderr, "rank %u %s:", r, what(r).c_str());
      node(r).counters().for_each([](std::string_view name, uint64_t v) {
        if (v != 0 && name.substr(0, 3) != "tx_")
          std::fprintf(stderr, " %.*s=%llu", static_cast<int>(name.size()), name.data(),
                       static_cast<unsigned long long>(v));
      });
      std::fprintf(stderr, "\n");
    }
  }

  // Members first (they hold frames), then the fabric (it holds the rest).
  // Returns "" when every pool has all its buffers back, else which did not.
  std::string teardown() {
    nodes_.clear();
    taps_.clear();
    fabric_.reset();
    std::string leaks;
    for (rte_mempool* p : {pools_.payload, pools_.header, pools_.inject})
      if (const unsigned n = rte_mempool_in_use_count(p); n != 0)
        leaks += std::string(leaks.empty() ? "" : ", ") + p->name + " " + std::to_string(n);
    return leaks;
  }
  // teardown(), and the end of a target's input: every mbuf back in its
  // pool and every memzone (rings) back to DPDK, or the target dies.
  void teardown_clean() {
    if (const std::string leaks = teardown(); !leaks.empty()) die("mbufs not back in their pools: " + leaks);
    if (const unsigned now = memzones(); now != fuzz_process().memzones)
      die("memzones leaked: " + std::to_string(now - fuzz_process().memzones));
  }

 private:
  GroupPools pools_;
  std::unique_ptr<drivers::Fabric> fabric_;
  std::vector<std::unique_ptr<TapPort>> taps_;
  std::vector<std::unique_ptr<engine::Node>> nodes_;
  uint64_t now_ = 1'000'000;
};

}  // namespace lanecast::fuzz
