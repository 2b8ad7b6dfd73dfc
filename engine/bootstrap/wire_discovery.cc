#include "engine/bootstrap/wire_discovery.h"

#include <rte_mbuf.h>
#include <time.h>

#include <stdexcept>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/clock.h"
#include "engine/wire.h"

namespace lanecast::engine::bootstrap {
namespace {

class WireDiscovery final : public Bootstrap {
 public:
  WireDiscovery(const GroupSpec& s, drivers::Port& port, rte_mempool* pool, const DiscoveryOptions& o)
      : spec_(s), port_(port), pool_(pool), o_(o), digest_(spec_digest(s)) {}

  EndpointTable exchange(const Endpoint& mine) override {
    const uint32_t n = static_cast<uint32_t>(spec_.members.size());
    table_.members.assign(n, Endpoint{});
    for (uint32_t r = 0; r < n; ++r) {
      table_.members[r].rank = r;
      table_.members[r].lanes.assign(spec_.lanes, drivers::PeerAddress{});
    }
    table_.members[mine.rank] = mine;
    heard_.assign(n, std::vector<bool>(spec_.lanes, false));
    heard_.at(mine.rank).assign(spec_.lanes, true);
    done_.assign(n, false);
    me_ = mine.rank;

    const uint64_t start = now_ns();
    const uint64_t deadline = start + static_cast<uint64_t>(spec_.bootstrap_timeout_ms * 1e6);
    uint64_t next_hello = start;
    uint32_t lingered = 0;
    for (;;) {
      const uint64_t now = now_ns();
      receive();
      const bool all_heard = heard_everyone();
      done_[me_] = all_heard;
      if (now >= next_hello) {
        send_hellos(mine.incarnation, all_heard);
        next_hello = now + o_.interval_ns;
        if (everyone_done() && ++lingered > o_.linger_rounds) break;
      }
      if (now > deadline) throw std::runtime_error(missing(now - start));
      timespec ts{0, 200'000};  // the control path: no core to spare for spinning
      nanosleep(&ts, nullptr);
    }
    table_.epoch = epoch_of(spec_.id, table_.members);
    return table_;
  }

 private:
  void send_hellos(uint64_t incarnation, bool heard_all) {
    wire::HelloBody h{};
    h.incarnation = incarnation;
    h.spec_digest = digest_;
    h.nodes = static_cast<uint32_t>(spec_.members.size());
    h.lanes = spec_.lanes;
    h.heard_all = heard_all ? 1 : 0;
    const uint16_t link = port_.link_header_bytes();
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) continue;  // the next round sends it
      auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(link + wire::kHelloBytes)));
      if (at == nullptr) {
        rte_pktmbuf_free(m);
        continue;
      }
      port_.write_link_header(at, drivers::ethernet::broadcast());
      wire::write_hello(at + link, {spec_.id, 0, me_}, h);
      if (port_.tx_burst(lane, &m, 1) != 1) rte_pktmbuf_free(m);
    }
  }

  void receive() {
    rte_mbuf* burst[32];
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      uint16_t got;
      while ((got = port_.rx_burst(lane, burst, 32)) > 0)
        for (uint16_t i = 0; i < got; ++i) {
          take(burst[i], lane);
          rte_pktmbuf_free(burst[i]);
        }
    }
  }

  void take(const rte_mbuf* m, uint16_t lane) {
    const uint16_t link = port_.link_header_bytes();
    if (m->data_len < link) return;
    const auto* hdr = rte_pktmbuf_mtod(m, const uint8_t*);
    if (!port_.accepts(hdr)) return;
    wire::Parsed p;
    if (wire::parse(m, link, &p) != wire::Verdict::Ok || p.type != wire::FrameType::Hello) return;
    if (p.group != spec_.id || p.src >= spec_.members.size()) return;
    const std::string where = spec_.source.empty() ? spec_.name : spec_.source;
    if (p.src == me_) {  // our own hello looped back, or another process with our rank
      if (p.hello.incarnation == table_.members[me_].incarnation) return;
      throw std::runtime_error(where + ": another member at " + format_address(port_.source_of(hdr)) +
                               " was started as rank " + std::to_string(me_) + " too");
    }
    if (p.hello.spec_digest != digest_ || p.hello.nodes != spec_.members.size() || p.hello.lanes != spec_.lanes)
      throw std::runtime_error(where + ": rank " + std::to_string(p.src) + " at " +
                               format_address(port_.source_of(hdr)) +
                               " was started with other group settings (name, size, lanes, algorithm, segment, "
                               "message limit, window or timeout differ)");
    Endpoint& e = table_.members[p.src];
    const drivers::PeerAddress from = port_.source_of(hdr);
    if (heard_[p.src][lane] && !(e.lanes[lane] == from))
      throw std::runtime_error(where + ": rank " + std::to_string(p.src) + " answers from two addresses, " +
                               format_address(e.lanes[lane]) + " and " + format_address(from) +
                               ": two members were started with the same rank");
    if (e.incarnation != 0 && e.incarnation != p.hello.incarnation) {
      // The member restarted while we were still looking: forget its old life.
      heard_[p.src].assign(spec_.lanes, false);
      done_[p.src] = false;
    }
    e.incarnation = p.hello.incarnation;
    e.lanes[lane] = from;
    heard_[p.src][lane] = true;
    done_[p.src] = p.hello.heard_all != 0;
  }

  bool heard_everyone() const {
    for (const auto& lanes : heard_)
      for (bool h : lanes)
        if (!h) return false;
    return true;
  }
  bool everyone_done() const {
    for (bool d : done_)
      if (!d) return false;
    return true;
  }

  std::string missing(uint64_t waited_ns) const {
    std::string never, unsure;
    for (uint32_t r = 0; r < heard_.size(); ++r) {
      bool all = true;
      for (bool h : heard_[r]) all = all && h;
      if (!all) never += (never.empty() ? "" : ", ") + std::to_string(r);
      else if (!done_[r]) unsure += (unsure.empty() ? "" : ", ") + std::to_string(r);
    }
    const std::string where = spec_.source.empty() ? spec_.name : spec_.source;
    std::string msg = where + ": rank " + std::to_string(me_) + " gave up finding its group after " +
                      std::to_string(waited_ns / 1'000'000) + " ms (bootstrap discovery): ";
    if (!never.empty()) msg += "never heard rank(s) " + never;
    if (!unsure.empty()) msg += (never.empty() ? "" : "; ") + std::string("rank(s) ") + unsure + " did not hear everyone";
    return msg;
  }

  GroupSpec spec_;
  drivers::Port& port_;
  rte_mempool* pool_;
  DiscoveryOptions o_;
  uint64_t digest_;
  uint32_t me_ = 0;
  EndpointTable table_;
  std::vector<std::vector<bool>> heard_;  // [rank][lane]
  std::vector<bool> done_;                // rank said it heard everyone
};

}  // namespace

std::unique_ptr<Bootstrap> make_wire_discovery(const GroupSpec& spec, drivers::Port& port, rte_mempool* pool,
                                               const DiscoveryOptions& o) {
  return std::make_unique<WireDiscovery>(spec, port, pool, o);
}

}  // namespace lanecast::engine::bootstrap
