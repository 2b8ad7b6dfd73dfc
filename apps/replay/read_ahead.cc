#include "apps/replay/read_ahead.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace lanecast::replay {
namespace {

// A record: this head, then the message's bytes, padded to 8. A record never
// wraps: where the ring's end leaves too little room, the reader writes a
// head marked kWrap (or, with under a head's room left, nothing) and goes on
// at the ring's start; the walks skip alike.
struct Head {
  uint64_t due_ns;
  uint32_t len;
  uint32_t flags;
};
constexpr uint32_t kLoopStart = 1, kWrap = 2;
constexpr uint64_t kDetached = UINT64_MAX;

constexpr uint64_t record_bytes(uint64_t len) { return (sizeof(Head) + len + 7) & ~uint64_t{7}; }

}  // namespace

bool ReadAhead::Walk::peek(RingEntry& out) {
  const uint64_t head = ra_->head_.load(std::memory_order_acquire);
  const std::byte* ring = ra_->ring_.get();
  for (;;) {
    if (pos_ >= head) return false;
    const uint64_t at = pos_ % ra_->cap_, left = ra_->cap_ - at;
    if (left < sizeof(Head)) {
      pos_ += left;
      continue;
    }
    Head h;
    std::memcpy(&h, ring + at, sizeof h);
    if (h.flags & kWrap) {
      pos_ += left;
      continue;
    }
    out.due_ns = h.due_ns;
    out.loop_start = (h.flags & kLoopStart) != 0;
    out.data = std::span<const std::byte>(ring + at + sizeof h, h.len);
    len_ = h.len;
    return true;
  }
}

void ReadAhead::Walk::advance() {
  pos_ += record_bytes(len_);
  ++records_;
}

ReadAhead::ReadAhead(const Options& o)
    : o_(o),
      // Room for four of the largest records at least, so the ring never
      // holds less than a few messages.
      cap_(std::max(o.bytes, o.capture.max_message < (uint64_t{1} << 40) ? 4 * record_bytes(o.capture.max_message) : 0) &
           ~uint64_t{7}),
      ring_(new std::byte[cap_]),
      reader_(o.capture),
      tails_(1 + o.checkers) {
  if (cap_ < 4 * sizeof(Head)) throw std::invalid_argument("replay: a read-ahead ring of " + std::to_string(cap_) + " bytes");
  if (o_.max_records == 0) throw std::invalid_argument("replay: a read-ahead ring that holds no message");
  thread_ = std::thread([this] { read_all(); });
}

ReadAhead::~ReadAhead() {
  stop_.store(true, std::memory_order_relaxed);
  thread_.join();
}

void ReadAhead::fill() const {
  while (!waiting_.load(std::memory_order_acquire) && !finished() && !failed_.load(std::memory_order_acquire))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void ReadAhead::release(uint32_t slot, const Walk& w) {
  tails_[slot].records.store(w.records_, std::memory_order_release);
  tails_[slot].pos.store(w.pos_, std::memory_order_release);
}

void ReadAhead::detach(uint32_t slot) {
  tails_[slot].records.store(kDetached, std::memory_order_release);
  tails_[slot].pos.store(kDetached, std::memory_order_release);
}

std::string ReadAhead::failure() const {
  std::lock_guard<std::mutex> lock(failure_mutex_);
  return failure_;
}

// Whether the ring may hold everything up to byte `end` and `records`
// records: every attached slot released enough. A slot's marks are loaded
// with acquire, so its reads of a record come before the record is reused.
bool ReadAhead::room_for(uint64_t end, uint64_t records) const {
  uint64_t pos = written_pos_, recs = written_records_;
  for (const Tail& t : tails_) {
    const uint64_t p = t.pos.load(std::memory_order_acquire);
    const uint64_t r = t.records.load(std::memory_order_acquire);
    if (p == kDetached) continue;
    pos = std::min(pos, p);
    recs = std::min(recs, r);
  }
  return end - pos <= cap_ && records - recs <= o_.max_records;
}

bool ReadAhead::write(uint64_t due, bool loop_start, std::span<const std::byte> data) {
  const uint64_t need = record_bytes(data.size());
  if (need > cap_)
    throw std::runtime_error("--pcap " + o_.capture.path + ": a message of " + std::to_string(data.size()) +
                             " bytes does not fit the read-ahead ring (" + std::to_string(cap_) + " bytes)");
  const uint64_t at = written_pos_ % cap_, left = cap_ - at;
  const uint64_t skip = left < need ? left : 0;
  const uint64_t end = written_pos_ + skip + need, records = written_records_ + 1;
  if (!room_for(end, records)) {
    // Full: wake again once an eighth of the ring is free, not for every
    // message taken, so the reader runs seldom and in bursts. Everything
    // taken frees everything, so the wait always ends.
    const uint64_t slack = std::min(cap_ / 8, cap_ - (end - written_pos_));
    const uint64_t slack_records = std::min(o_.max_records / 8, o_.max_records - 1);
    waiting_.store(true, std::memory_order_release);
    while (!room_for(end + slack, records + slack_records)) {
      if (stop_.load(std::memory_order_relaxed)) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    waiting_.store(false, std::memory_order_relaxed);
  }
  std::byte* ring = ring_.get();
  if (skip != 0 && left >= sizeof(Head)) {
    const Head wrap{0, 0, kWrap};
    std::memcpy(ring + at, &wrap, sizeof wrap);
  }
  const uint64_t to = (written_pos_ + skip) % cap_;
  const Head h{due, static_cast<uint32_t>(data.size()), loop_start ? kLoopStart : 0};
  std::memcpy(ring + to, &h, sizeof h);
  if (!data.empty()) std::memcpy(ring + to + sizeof h, data.data(), data.size());
  written_pos_ = end;
  written_records_ = records;
  head_.store(end, std::memory_order_release);
  return true;
}

void ReadAhead::read_all() {
  try {
    Schedule schedule(o_.timing);
    CaptureMessage m;
    // A capture whose messages fit a quarter of the ring is kept after its
    // first loop and looped from that copy: opening the file again for
    // every loop of a few packets would bound the rate at a few reopens.
    struct Kept {
      uint64_t ts_ns, offset;
      uint32_t len;
    };
    std::vector<Kept> kept;
    std::vector<std::byte> kept_bytes;
    bool keeping = o_.loops > 1;
    for (uint64_t loop = 0; loop < o_.loops; ++loop) {
      schedule.restart();
      if (loop > 0 && keeping) {
        for (size_t i = 0; i < kept.size(); ++i)
          if (!write(schedule.next(kept[i].ts_ns, kept[i].len), i == 0,
                     std::span(kept_bytes.data() + kept[i].offset, kept[i].len)))
            return;
        continue;
      }
      if (loop > 0) reader_.rewind();
      uint64_t n = 0;
      const auto changed = [&](const std::string& what) {
        return std::runtime_error("--pcap " + o_.capture.path + ": the file changed while it was replayed: loop " +
                                  std::to_string(loop + 1) + " " + what + " the " + std::to_string(o_.messages) +
                                  " messages it had");
      };
      while (reader_.next(m)) {
        if (n == o_.messages) throw changed("holds more than");
        if (keeping) {
          if (kept_bytes.size() + m.data.size() + (kept.size() + 1) * sizeof(Kept) <= cap_ / 4) {
            kept.push_back({m.ts_ns, kept_bytes.size(), static_cast<uint32_t>(m.data.size())});
            kept_bytes.insert(kept_bytes.end(), m.data.begin(), m.data.end());
          } else {
            keeping = false;
            std::vector<Kept>().swap(kept);
            std::vector<std::byte>().swap(kept_bytes);
          }
        }
        if (!write(schedule.next(m.ts_ns, static_cast<uint32_t>(m.data.size())), n == 0, m.data)) return;
        ++n;
      }
      if (n != o_.messages) throw changed("holds " + std::to_string(n) + " of");
    }
    finished_.store(true, std::memory_order_release);
  } catch (const std::exception& e) {
    {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      failure_ = e.what();
    }
    failed_.store(true, std::memory_order_release);
  }
}

}  // namespace lanecast::replay
