#include "drivers/delay/delay_port.h"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace lanecast::drivers {
namespace {

bool address_less(const PeerAddress& a, const PeerAddress& b) {
  if (a.len != b.len) return a.len < b.len;
  return std::memcmp(a.bytes, b.bytes, a.len) < 0;
}

constexpr uint16_t kPullBurst = 64;

}  // namespace

namespace {
std::unique_ptr<Port> non_null(std::unique_ptr<Port> p) {
  if (!p) throw std::invalid_argument("delay port: no port to delay");
  return p;
}
}  // namespace

DelayPort::DelayPort(std::unique_ptr<Port> inner, const DelayOptions& o)
    : ForwardingPort(non_null(std::move(inner))), clock_(o.clock) {
  if (clock_ == nullptr) throw std::invalid_argument("delay port: no clock");
  // Classes: one per distinct delay, plus "no delay" for unknown sources.
  std::vector<uint64_t> delays;
  for (const auto& [addr, d] : o.delay_ns_of_source)
    if (std::find(delays.begin(), delays.end(), d) == delays.end()) delays.push_back(d);
  auto zero = std::find(delays.begin(), delays.end(), uint64_t{0});
  if (zero == delays.end()) {
    delays.push_back(0);
    zero = delays.end() - 1;
  }
  no_delay_class_ = static_cast<uint32_t>(zero - delays.begin());
  for (const auto& [addr, d] : o.delay_ns_of_source) {
    const uint32_t cls = static_cast<uint32_t>(std::find(delays.begin(), delays.end(), d) - delays.begin());
    sources_.emplace_back(addr, cls);
  }
  std::sort(sources_.begin(), sources_.end(), [](const auto& a, const auto& b) { return address_less(a.first, b.first); });
  for (size_t i = 1; i < sources_.size(); ++i)
    if (sources_[i].first == sources_[i - 1].first)
      throw std::invalid_argument("delay port: source " + format_address(sources_[i].first) + " given twice");
  uint64_t cap = 1;
  while (cap < std::max<uint32_t>(o.queue_frames, kPullBurst)) cap <<= 1;
  lanes_.resize(in_.lanes());
  for (auto& classes : lanes_)
    for (uint64_t d : delays) {
      Fifo f;
      f.delay_ns = d;
      f.ring.resize(cap);
      classes.push_back(std::move(f));
    }
}

DelayPort::~DelayPort() {
  for (auto& classes : lanes_)
    for (Fifo& f : classes)
      for (; !f.empty(); ++f.head) rte_pktmbuf_free(f.front().frame);
}

uint32_t DelayPort::class_of(const rte_mbuf* frame) const {
  const PeerAddress src = in_.source_of(rte_pktmbuf_mtod(frame, const uint8_t*));
  const auto it = std::lower_bound(sources_.begin(), sources_.end(), src,
                                   [](const auto& e, const PeerAddress& a) { return address_less(e.first, a); });
  return it != sources_.end() && it->first == src ? it->second : no_delay_class_;
}

// Moves what the inner port has into the FIFOs, as much as the fullest FIFO
// can take (a frame's class is known only once it is read). Returns the
// clock, read after the burst: a frame may have come while this core did
// not run, after any earlier reading, and a hold counted from before its
// arrival would be short.
uint64_t DelayPort::take_arrivals(uint16_t lane) {
  auto& classes = lanes_[lane];
  uint64_t room = UINT64_MAX;
  for (const Fifo& f : classes) room = std::min<uint64_t>(room, f.ring.size() - f.size());
  rte_mbuf* got[kPullBurst];
  const uint16_t n = in_.rx_burst(lane, got, static_cast<uint16_t>(std::min<uint64_t>(room, kPullBurst)));
  const uint64_t now = clock_();
  for (uint16_t i = 0; i < n; ++i) {
    Fifo& f = classes[class_of(got[i])];
    f.ring[f.tail & (f.ring.size() - 1)] = Held{got[i], now + f.delay_ns};
    ++f.tail;
  }
  return now;
}

uint16_t DelayPort::rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) {
  const uint64_t now = take_arrivals(lane);
  auto& classes = lanes_[lane];
  uint16_t out = 0;
  while (out < max) {
    Fifo* first = nullptr;
    for (Fifo& f : classes)
      if (!f.empty() && f.front().due_ns <= now && (first == nullptr || f.front().due_ns < first->front().due_ns))
        first = &f;
    if (first == nullptr) break;
    frames[out++] = first->front().frame;
    ++first->head;
  }
  return out;
}

uint64_t DelayPort::held_until_ns() const {
  uint64_t at = in_.held_until_ns();  // a port beneath may hold frames too (a backlog)
  for (const auto& classes : lanes_)
    for (const Fifo& f : classes)
      if (!f.empty()) at = std::min(at, f.front().due_ns);
  return at;
}

uint64_t DelayPort::frames_held() const {
  uint64_t n = 0;
  for (const auto& classes : lanes_)
    for (const Fifo& f : classes) n += f.size();
  return n;
}

}  // namespace lanecast::drivers
