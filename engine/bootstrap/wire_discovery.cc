#include "engine/bootstrap/wire_discovery.h"

#include <rte_mbuf.h>
#include <time.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/bootstrap/hello_gate.h"
#include "engine/runtime/clock.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::bootstrap {
namespace {

class WireDiscovery final : public Bootstrap {
 public:
  WireDiscovery(const GroupSpec& s, drivers::Port& port, rte_mempool* pool, const DiscoveryOptions& o)
      : spec_(s), port_(port), pool_(pool), o_(o), digest_(spec_digest(s)),
        gate_(s, port.rx_link_header_bytes(), port.sealed_link_bytes()) {}

  std::vector<EarlyFrame> take_early_frames() override { return early_ ? early_->take() : std::vector<EarlyFrame>{}; }

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
    said_.assign(n, 0);
    me_ = mine.rank;
    early_ = std::make_unique<EarlyFrames>(spec_, port_, me_);
    // Hellos sent before this moment, by their sender's clock, come from
    // before this life began: they end nothing (hello_gate.h).
    started_ms_ = unix_ms();
    // Where hellos go: the link's broadcast address, or a group the port
    // joins (verbs); left however the exchange ends.
    hello_to_.assign(spec_.lanes, drivers::ethernet::broadcast());
    struct Leave {
      WireDiscovery& d;
      uint16_t joined = 0;
      ~Leave() {
        for (uint16_t l = 0; l < joined; ++l) d.port_.leave_hellos(d.spec_.id, l);
      }
    } leave{*this};
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      drivers::PeerAddress to;
      if (std::string why = port_.join_hellos(spec_.id, lane, &to); !why.empty())
        throw std::runtime_error(where() + ": discovery on " + port_.name() + ": " + why);
      leave.joined = static_cast<uint16_t>(lane + 1);
      if (to.len != 0) hello_to_[lane] = to;
    }

    const uint64_t start = now_ns();
    const uint64_t deadline = start + static_cast<uint64_t>(spec_.bootstrap_timeout_ms * 1e6);
    uint64_t next_hello = start;
    uint32_t lingered = 0;
    for (;;) {
      const uint64_t now = now_ns();
      const bool busy = receive();
      if (now >= next_hello) {
        send_hellos(mine.incarnation);
        next_hello = now + o_.interval_ns;
        if (everyone_agrees() && ++lingered > o_.linger_rounds) break;
      }
      if (now > deadline) throw std::runtime_error(missing(now - start));
      if (busy) continue;  // the port did not run dry: read on, after the clock
      timespec ts{0, 200'000};  // the control path: no core to spare for spinning
      nanosleep(&ts, nullptr);
    }
    table_.epoch = epoch_of(spec_.id, table_.members);
    return table_;
  }

  // With a key, the hellos refused on the way (`lanecast run` prints it
  // with the join's steps): what a forger on the segment achieved. Hellos
  // of lives before this member's. And the frames of a peer's first
  // operation kept for the node.
  std::string steps() const override {
    std::string s;
    if (gate_.sealed() && gate_.bad_tags() + gate_.unsealed() + gate_.stale() > 0)
      s = "hellos refused: " + std::to_string(gate_.unsealed()) + " unsealed, " + std::to_string(gate_.bad_tags()) +
          " with a bad tag, " + std::to_string(gate_.stale()) + " stale";
    if (earlier_ > 0) s += (s.empty() ? "" : ", ") + std::to_string(earlier_) + " hellos from before this member started set aside";
    const std::string early = early_ ? early_->steps() : std::string{};
    if (!early.empty()) s += (s.empty() ? "" : ", ") + early;
    return s;
  }

 private:
  std::string where() const { return spec_.source.empty() ? spec_.name : spec_.source; }

  // Every rank heard: the lives this member would start with, hashed.
  uint64_t formation() const { return heard_everyone() ? formation_of(spec_.id, table_.members) : 0; }

  void send_hellos(uint64_t incarnation) {
    wire::HelloBody h{};
    h.incarnation = incarnation;
    h.spec_digest = digest_;
    h.nodes = static_cast<uint32_t>(spec_.members.size());
    h.lanes = spec_.lanes;
    h.formation = formation();
    h.heard_all = h.formation != 0 ? 1 : 0;
    h.sent_unix_ms = unix_ms();
    const uint16_t link = port_.link_header_bytes();
    const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Hello);
    const uint32_t bytes = wire::kHelloBytes + (gate_.sealed() ? wire::kSealBytes : 0);
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) continue;  // the next round sends it
      auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(link + bytes)));
      if (at == nullptr) {
        rte_pktmbuf_free(m);
        continue;
      }
      port_.write_link_header(at, hello_to_[lane]);
      wire::write_hello(at + link, {spec_.id, 0, me_}, h, gate_.sealed() ? wire::kFlagSealed : 0);
      if (gate_.sealed()) gate_.seal(at, link, seal_at, me_);
      if (port_.tx_burst(lane, &m, 1) != 1) rte_pktmbuf_free(m);
    }
  }

  // At most frames_per_turn frames per lane; true when a lane had more.
  bool receive() {
    rte_mbuf* burst[32];
    bool busy = false;
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      uint32_t read = 0;
      uint16_t got = 0;
      while (read < o_.frames_per_turn &&
             (got = port_.rx_burst(lane, burst, static_cast<uint16_t>(std::min<uint32_t>(32, o_.frames_per_turn - read)))) > 0) {
        read += got;
        for (uint16_t i = 0; i < got; ++i)
          if (!take(burst[i], lane)) rte_pktmbuf_free(burst[i]);
      }
      busy = busy || read >= o_.frames_per_turn;
    }
    return busy;
  }

  // A frame the port read: a hello is learnt from, another frame of the
  // group from a peer may be kept for the node (true: the frame is kept).
  bool take(rte_mbuf* m, uint16_t lane) {
    const uint16_t link = port_.rx_link_header_bytes();
    if (m->data_len < link) return false;
    const auto* hdr = rte_pktmbuf_mtod(m, const uint8_t*);
    if (!port_.accepts(hdr)) return false;
    wire::Parsed p;
    if (wire::parse(m, link, &p) != wire::Verdict::Ok) return false;
    if (p.group != spec_.id || p.src >= spec_.members.size()) return false;
    if (p.type != wire::FrameType::Hello) return early_->offer(m, p, lane);
    learn(m, p, lane, hdr);
    return false;
  }

  // Whether a hello that would end this member's bootstrap was sent since
  // it started: otherwise it is set aside (counted), as a replay of an
  // earlier life would be - a process with this rank started earlier and
  // still running sends later ones too.
  bool sent_in_my_life(const wire::Parsed& p) {
    if (p.hello.sent_unix_ms >= started_ms_) return true;
    ++earlier_;
    return false;
  }

  void learn(const rte_mbuf* m, const wire::Parsed& p, uint16_t lane, const uint8_t* hdr) {
    const drivers::PeerAddress from = port_.source_of(hdr);
    if (p.src == me_ && p.hello.incarnation == table_.members[me_].incarnation) return;  // our own, looped back
    bool new_life = false;
    const HelloGate::Verdict v = gate_.check(m, p, lane, &new_life);
    if (v == HelloGate::Verdict::Refused) return;
    if (p.src == me_) {  // another process with our rank
      if (!sent_in_my_life(p)) return;
      throw std::runtime_error(where() + ": another member at " + format_address(from) + " was started as rank " +
                               std::to_string(me_) + " too");
    }
    if (p.hello.spec_digest != digest_ || p.hello.nodes != spec_.members.size() || p.hello.lanes != spec_.lanes) {
      if (!sent_in_my_life(p)) return;
      throw std::runtime_error(where() + ": rank " + std::to_string(p.src) + " at " + format_address(from) +
                               " was started with other group settings (name, size, lanes, algorithm, segment, "
                               "message limit, window or timeout differ)");
    }
    Endpoint& e = table_.members[p.src];
    const bool moved = heard_[p.src][lane] && !(e.lanes[lane] == from);
    if ((v == HelloGate::Verdict::Returned || (moved && !new_life)) && sent_in_my_life(p))
      throw std::runtime_error(where() + ": rank " + std::to_string(p.src) + " answers from two addresses, " +
                               format_address(e.lanes[lane]) + " and " + format_address(from) +
                               ": two members were started with the same rank");
    if (moved && !new_life) return;  // set aside (counted)
    if (new_life) {
      // The member restarted while we were still looking: forget its old life.
      heard_[p.src].assign(spec_.lanes, false);
      said_[p.src] = 0;
    }
    e.incarnation = p.hello.incarnation;
    e.lanes[lane] = from;
    heard_[p.src][lane] = true;
    said_[p.src] = p.hello.heard_all != 0 ? p.hello.formation : 0;
    if (const uint64_t f = formation(); f != known_formation_) {
      known_formation_ = f;
      early_->know(f != 0 ? &table_ : nullptr);
    }
  }

  bool heard_everyone() const {
    for (const auto& lanes : heard_)
      for (bool h : lanes)
        if (!h) return false;
    return true;
  }
  // Every rank said it heard the formation this member heard: the same
  // lives everywhere, so the same epoch and keys. A hello of a life that is
  // gone cannot say it (the formation has this member's life in it).
  bool everyone_agrees() const {
    const uint64_t mine = formation();
    if (mine == 0) return false;
    for (uint32_t r = 0; r < said_.size(); ++r)
      if (r != me_ && said_[r] != mine) return false;
    return true;
  }

  std::string missing(uint64_t waited_ns) const {
    const uint64_t mine = formation();
    std::string never, unsure;
    for (uint32_t r = 0; r < heard_.size(); ++r) {
      bool all = true;
      for (bool h : heard_[r]) all = all && h;
      if (!all) never += (never.empty() ? "" : ", ") + std::to_string(r);
      else if (r != me_ && (mine == 0 || said_[r] != mine)) unsure += (unsure.empty() ? "" : ", ") + std::to_string(r);
    }
    std::string msg = where() + ": rank " + std::to_string(me_) + " gave up finding its group after " +
                      std::to_string(waited_ns / 1'000'000) + " ms (bootstrap discovery): ";
    if (!never.empty()) msg += "never heard rank(s) " + never;
    if (!unsure.empty())
      msg += (never.empty() ? "" : "; ") + std::string("rank(s) ") + unsure + " did not hear everyone" +
             (mine != 0 ? " as this member did" : "");
    if (gate_.bad_tags() > 0)
      msg += "; " + std::to_string(gate_.bad_tags()) + " hellos of this group whose seal did not open (another group key? "
             "this member's is " + gate_.key_print() + ")";
    if (gate_.unsealed() > 0)
      msg += "; " + std::to_string(gate_.unsealed()) + " hellos without a seal (a member without the group key?)";
    if (gate_.stale() > 0)
      msg += "; " + std::to_string(gate_.stale()) + " hellos refused as replays (" +
             (gate_.sealed() ? "older than " + std::to_string(kHelloMaxAgeMs / 1000) + " s - clocks apart? - or " : "") +
             "older than the sender's last)";
    if (earlier_ > 0)
      msg += "; " + std::to_string(earlier_) + " hellos from before this member started set aside (another process "
             "with a rank or settings of its own, sent again - or a clock behind this one)";
    return msg;
  }

  GroupSpec spec_;
  drivers::Port& port_;
  rte_mempool* pool_;
  DiscoveryOptions o_;
  uint64_t digest_;
  HelloGate gate_;
  uint32_t me_ = 0;
  uint64_t started_ms_ = 0;
  EndpointTable table_;
  std::vector<std::vector<bool>> heard_;  // [rank][lane]
  std::vector<uint64_t> said_;            // per rank: the formation it said it heard (0: not yet)
  std::vector<drivers::PeerAddress> hello_to_;  // per lane
  uint64_t earlier_ = 0;  // hellos that would have ended it, sent before it started
  uint64_t known_formation_ = 0;  // the one early_ knows
  std::unique_ptr<EarlyFrames> early_;
};

}  // namespace

std::unique_ptr<Bootstrap> make_wire_discovery(const GroupSpec& spec, drivers::Port& port, rte_mempool* pool,
                                               const DiscoveryOptions& o) {
  return std::make_unique<WireDiscovery>(spec, port, pool, o);
}

}  // namespace lanecast::engine::bootstrap
