#include "engine/bootstrap/wire_discovery.h"

#include <rte_mbuf.h>
#include <time.h>

#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include "drivers/ethernet.h"
#include "engine/auth/epoch_keys.h"
#include "engine/auth/sealer.h"
#include "engine/runtime/clock.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::bootstrap {
namespace {

// A sealed hello older than this (or this far in the sender's future) is a
// replay of an earlier formation: members' clocks must agree within it.
constexpr int64_t kHelloMaxAgeMs = 30'000;

uint64_t unix_ms() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

class WireDiscovery final : public Bootstrap {
 public:
  WireDiscovery(const GroupSpec& s, drivers::Port& port, rte_mempool* pool, const DiscoveryOptions& o)
      : spec_(s), port_(port), pool_(pool), o_(o), digest_(spec_digest(s)) {
    if (s.key) {
      // Hellos are sealed under a key of the group id alone (the epoch is
      // what the hellos decide), with a counter random per life.
      sealer_ = std::make_unique<auth::Sealer>(auth::derive_hello_key(*s.key, s.id).key);
      randombytes_buf(&counter_, sizeof counter_);
      counter_ >>= 1;
      key_print_ = s.key->fingerprint();
    }
  }

  ~WireDiscovery() override {
    for (const EarlyFrame& f : early_) rte_pktmbuf_free(f.frame);
  }

  std::vector<EarlyFrame> take_early_frames() override { return std::exchange(early_, {}); }

  EndpointTable exchange(const Endpoint& mine) override {
    const uint32_t n = static_cast<uint32_t>(spec_.members.size());
    table_.members.assign(n, Endpoint{});
    for (uint32_t r = 0; r < n; ++r) {
      table_.members[r].rank = r;
      table_.members[r].lanes.assign(spec_.lanes, drivers::PeerAddress{});
    }
    table_.members[mine.rank] = mine;
    latest_.assign(size_t{n} * spec_.lanes, Latest{});
    heard_.assign(n, std::vector<bool>(spec_.lanes, false));
    heard_.at(mine.rank).assign(spec_.lanes, true);
    done_.assign(n, false);
    me_ = mine.rank;
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
        throw std::runtime_error((spec_.source.empty() ? spec_.name : spec_.source) + ": discovery on " +
                                 port_.name() + ": " + why);
      leave.joined = static_cast<uint16_t>(lane + 1);
      if (to.len != 0) hello_to_[lane] = to;
    }

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

  // With a key, the hellos refused on the way (`lanecast run` prints it
  // with the join's steps): what a forger on the segment achieved.
  // And the frames of a peer's first operation it kept for the node.
  std::string steps() const override {
    std::string s;
    if (sealer_ && bad_tags_ + unsealed_ + stale_ > 0)
      s = "hellos refused: " + std::to_string(unsealed_) + " unsealed, " + std::to_string(bad_tags_) +
          " with a bad tag, " + std::to_string(stale_) + " stale";
    if (early_kept_ + early_dropped_ > 0)
      s += (s.empty() ? "" : ", ") + std::to_string(early_kept_) + " early frames kept for the node" +
           (early_dropped_ > 0 ? ", " + std::to_string(early_dropped_) + " dropped" : "");
    return s;
  }

 private:
  void send_hellos(uint64_t incarnation, bool heard_all) {
    wire::HelloBody h{};
    h.incarnation = incarnation;
    h.spec_digest = digest_;
    h.nodes = static_cast<uint32_t>(spec_.members.size());
    h.lanes = spec_.lanes;
    h.heard_all = heard_all ? 1 : 0;
    h.sent_unix_ms = unix_ms();
    const uint16_t link = port_.link_header_bytes();
    const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Hello);
    const uint32_t bytes = wire::kHelloBytes + (sealer_ ? wire::kSealBytes : 0);
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      rte_mbuf* m = rte_pktmbuf_alloc(pool_);
      if (m == nullptr) continue;  // the next round sends it
      auto* at = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(link + bytes)));
      if (at == nullptr) {
        rte_pktmbuf_free(m);
        continue;
      }
      port_.write_link_header(at, hello_to_[lane]);
      wire::write_hello(at + link, {spec_.id, 0, me_}, h, sealer_ ? wire::kFlagSealed : 0);
      if (sealer_) {
        wire::Seal seal{};
        seal.counter = counter_++;
        // Over the link header too: the source address is what a member
        // learns from a hello, so it is under the tag (its sealed part:
        // Port::sealed_link_bytes; all of an Ethernet header).
        const uint16_t skip = static_cast<uint16_t>(link - port_.sealed_link_bytes());
        sealer_->tag(at + skip, link - skip + seal_at, me_, seal.counter, seal.tag);
        std::memcpy(at + link + seal_at, &seal, sizeof seal);
      }
      if (port_.tx_burst(lane, &m, 1) != 1) rte_pktmbuf_free(m);
    }
  }

  // With a key: a hello counts only if its seal opens (over the link header
  // too: a genuine hello sent again from another address does not), it is
  // recent, and it is newer than what this rank said before - a replayed
  // hello of an earlier life or formation, or a forged one, changes nothing
  // here. Each refusal is counted for the message a time-out gives.
  bool sealed_hello_ok(const rte_mbuf* m, const wire::Parsed& p, uint16_t lane) {
    if (!sealer_) return true;
    if (!p.sealed) {
      ++unsealed_;
      return false;
    }
    const uint16_t link = port_.rx_link_header_bytes();
    const auto* frame = rte_pktmbuf_mtod(m, const uint8_t*);
    wire::Seal seal;
    std::memcpy(&seal, frame + link + p.seal_at, sizeof seal);
    const uint16_t skip = static_cast<uint16_t>(link - port_.sealed_link_bytes());
    if (!sealer_->check(frame + skip, link - skip + p.seal_at, p.src, seal.counter, seal.tag)) {
      ++bad_tags_;
      return false;
    }
    const int64_t age = static_cast<int64_t>(unix_ms()) - static_cast<int64_t>(p.hello.sent_unix_ms);
    Latest& last = latest_[size_t{p.src} * spec_.lanes + lane];  // each lane's hellos count on their own
    const bool same_life = p.hello.incarnation == last.incarnation;
    if (age > kHelloMaxAgeMs || age < -kHelloMaxAgeMs || (same_life && seal.counter <= last.counter) ||
        (!same_life && p.hello.sent_unix_ms < last.sent_unix_ms)) {
      ++stale_;
      return false;
    }
    last = Latest{p.hello.incarnation, seal.counter, p.hello.sent_unix_ms};
    return true;
  }

  void receive() {
    rte_mbuf* burst[32];
    for (uint16_t lane = 0; lane < spec_.lanes; ++lane) {
      uint16_t got;
      while ((got = port_.rx_burst(lane, burst, 32)) > 0)
        for (uint16_t i = 0; i < got; ++i)
          if (!take(burst[i], lane)) rte_pktmbuf_free(burst[i]);
    }
  }

  // A frame the port read: a hello is learnt from, another frame of the
  // group from a peer is kept for the node (true: the frame is kept).
  bool take(rte_mbuf* m, uint16_t lane) {
    const uint16_t link = port_.rx_link_header_bytes();
    if (m->data_len < link) return false;
    const auto* hdr = rte_pktmbuf_mtod(m, const uint8_t*);
    if (!port_.accepts(hdr)) return false;
    wire::Parsed p;
    if (wire::parse(m, link, &p) != wire::Verdict::Ok) return false;
    if (p.group != spec_.id || p.src >= spec_.members.size()) return false;
    if (p.type != wire::FrameType::Hello) return keep_early(m, p, lane);
    learn(m, p, lane, hdr);
    return false;
  }

  // Nothing of it is believed here: the node checks it as any frame (epoch,
  // source, seal) once it starts.
  bool keep_early(rte_mbuf* m, const wire::Parsed& p, uint16_t lane) {
    if (p.src == me_) return false;
    if (early_.size() >= kEarlyFramesKept) {
      ++early_dropped_;
      return false;
    }
    early_.push_back(EarlyFrame{m, lane});
    ++early_kept_;
    return true;
  }

  void learn(const rte_mbuf* m, const wire::Parsed& p, uint16_t lane, const uint8_t* hdr) {
    if (!sealed_hello_ok(m, p, lane)) return;
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
    if (bad_tags_ > 0)
      msg += "; " + std::to_string(bad_tags_) + " hellos of this group whose seal did not open (another group key? "
             "this member's is " + key_print_ + ")";
    if (unsealed_ > 0)
      msg += "; " + std::to_string(unsealed_) + " hellos without a seal (a member without the group key?)";
    if (stale_ > 0)
      msg += "; " + std::to_string(stale_) + " sealed hellos refused as replays (older than " +
             std::to_string(kHelloMaxAgeMs / 1000) + " s - clocks apart? - or older than the sender's last)";
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
  // With a key: the hellos' seals, and per rank the newest hello taken.
  std::unique_ptr<auth::Sealer> sealer_;
  uint64_t counter_ = 0;
  std::string key_print_;
  struct Latest {
    uint64_t incarnation = 0, counter = 0, sent_unix_ms = 0;
  };
  std::vector<Latest> latest_;  // [rank][lane]
  std::vector<drivers::PeerAddress> hello_to_;  // per lane
  uint64_t bad_tags_ = 0, unsealed_ = 0, stale_ = 0;
  std::vector<EarlyFrame> early_;  // take_early_frames()
  uint64_t early_kept_ = 0;
  uint64_t early_dropped_ = 0;  // over kEarlyFramesKept: sent again by their channels
};

}  // namespace

std::unique_ptr<Bootstrap> make_wire_discovery(const GroupSpec& spec, drivers::Port& port, rte_mempool* pool,
                                               const DiscoveryOptions& o) {
  return std::make_unique<WireDiscovery>(spec, port, pool, o);
}

}  // namespace lanecast::engine::bootstrap
