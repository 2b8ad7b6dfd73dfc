// A single-producer, single-consumer ring of variable-length records in one
// block of memory that holds no pointers, so it works the same on the heap
// between two threads (an application and its polling core, engine/stream/)
// and in a file mapped by two processes (`lanecast daemon` and its
// applications, client_file.h). A record is an 8-byte head {length, tag} and
// its bytes, padded to 8; it never wraps: when the end of the block is too
// near, the producer writes a skip head there and starts again at the front.
//
// Boost.Lockfree's spsc_queue carries fixed-size elements; a stream's
// messages vary from two bytes to megabytes, and the consumer reads each in
// place, so they travel in this ring instead.
//
// The peer is hostile. Of the shared header each side reads exactly one word
// after it attached: the other side's position (the consumer the producer's
// head, the producer the consumer's tail). The capacity and this side's own
// position live in the view (private memory), so no word the peer writes
// can choose an address: every offset is this side's position modulo this
// side's capacity. The peer's position is checked against this side's
// (never more than the capacity apart) and every record head against the
// block and against what the producer committed; a ring that breaks either
// is `corrupt()` for good and this side stops using it. A peer can make the
// ring corrupt, fill it, or lie about its records' bytes - never make this
// side read or write outside the block.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lanecast::ipc {

struct RecordRingHeader {
  static constexpr uint64_t kMagic = 0x32676e69726c636cULL;  // "lclring2"
  uint64_t magic;
  uint64_t capacity;  // bytes of record space after the header, a multiple of 8
  alignas(64) std::atomic<uint64_t> head;  // bytes ever written (producer)
  alignas(64) std::atomic<uint64_t> tail;  // bytes ever consumed (consumer)
  // The record bytes follow the header (64-aligned: sizeof is a multiple).
  uint8_t* data() { return reinterpret_cast<uint8_t*>(this + 1); }
};
static_assert(sizeof(RecordRingHeader) % 64 == 0);
static_assert(std::atomic<uint64_t>::is_always_lock_free, "rings shared between processes need lock-free words");

struct RecordView {
  const uint8_t* data = nullptr;
  uint32_t len = 0;
  uint32_t tag = 0;
};

class RecordRing {
 public:
  static constexpr uint32_t kHeadBytes = 8;
  static constexpr uint32_t kSkipTag = 0xFFFFFFFFu;  // the rest of the block is unused: go to the front
  static constexpr uint64_t kMinCapacity = 64;
  // Record positions are 64-bit counters that never wrap in practice; the
  // capacity bound keeps `head - tail` and every footprint far from overflow.
  static constexpr uint64_t kMaxCapacity = uint64_t{1} << 40;
  // A record's length is a 32-bit field: the largest that can be written down.
  static constexpr uint64_t kMaxLength = UINT32_MAX - 7;

  // Bytes of memory a ring of `capacity` record bytes needs (capacity is
  // rounded up to 8).
  static size_t bytes_for(uint64_t capacity) { return sizeof(RecordRingHeader) + round8(capacity); }
  // Lays a fresh ring out in `mem` (bytes_for(capacity) bytes, 64-aligned).
  static RecordRingHeader* init(void* mem, uint64_t capacity) {
    auto* h = static_cast<RecordRingHeader*>(mem);
    h->magic = RecordRingHeader::kMagic;
    h->capacity = round8(capacity);
    h->head.store(0, std::memory_order_relaxed);
    h->tail.store(0, std::memory_order_relaxed);
    return h;
  }
  // Lays a fresh ring out and returns a view that never reads the header's
  // capacity: the side that makes a ring in memory a peer maps uses this.
  static RecordRing fresh(void* mem, uint64_t capacity) {
    RecordRing r;
    r.attach(init(mem, capacity), round8(capacity), 0, 0);
    return r;
  }
  // A view on a ring of `capacity` bytes that this side was told of
  // privately (the layout it checked, client_file.h): the header's magic and
  // capacity must agree with it, read once, here. Either position is taken
  // from the header once, here; from then on each side trusts only its own.
  static RecordRing shared(RecordRingHeader* h, uint64_t capacity) {
    RecordRing r;
    if (h != nullptr && h->magic == RecordRingHeader::kMagic && h->capacity == capacity && capacity_ok(capacity))
      r.attach(h, capacity, h->head.load(std::memory_order_acquire), h->tail.load(std::memory_order_acquire));
    return r;
  }
  // A view on a ring in memory this process owns (the engine's heap): the
  // capacity is read from the header once, here. A null header, a bad magic
  // or an impossible capacity give an unusable view (valid() false).
  RecordRing() = default;
  explicit RecordRing(RecordRingHeader* h) {
    if (h != nullptr && h->magic == RecordRingHeader::kMagic) {
      const uint64_t cap = h->capacity;
      if (capacity_ok(cap))
        attach(h, cap, h->head.load(std::memory_order_acquire), h->tail.load(std::memory_order_acquire));
    }
  }

  bool valid() const { return h_ != nullptr; }
  uint64_t capacity() const { return cap_; }
  // Bytes a record of `len` takes in the ring.
  static constexpr uint64_t footprint(uint64_t len) { return kHeadBytes + round8(len); }
  // The largest record reserve() takes: one that fits an empty ring
  // wherever its position is (half the capacity, with its head), and whose
  // length its 32-bit head can say.
  uint64_t max_record() const {
    if (cap_ < kMinCapacity) return 0;
    const uint64_t half = cap_ / 2 - kHeadBytes;
    return half < kMaxLength ? half : kMaxLength;
  }

  // --- producer
  // Room for a record of `len` bytes: a pointer to write them to, then
  // commit(). nullptr when the ring is full, corrupt, or len is more than
  // max_record() (never truncated).
  uint8_t* reserve(uint64_t len, uint32_t tag) {
    if (corrupt_ || h_ == nullptr || len > max_record()) return nullptr;
    const uint64_t need = footprint(len);
    const uint64_t tail = h_->tail.load(std::memory_order_acquire);
    const uint64_t used = head_ - tail;
    if (used > cap_ || tail % 8 != 0) {  // the consumer's word is no position of this ring
      corrupt_ = true;
      return nullptr;
    }
    const uint64_t off = head_ % cap_;
    const uint64_t to_end = cap_ - off;
    uint64_t at = head_;
    if (to_end < need) {
      if (used + to_end + need > cap_) return nullptr;
      write_head(off, 0, kSkipTag);
      at += to_end;
    } else if (used + need > cap_) {
      return nullptr;
    }
    write_head(at % cap_, static_cast<uint32_t>(len), tag);  // len <= kMaxLength: it fits
    pending_ = at + need;
    return data_ + at % cap_ + kHeadBytes;
  }
  // Publishes the record reserve() returned.
  void commit() {
    head_ = pending_;
    h_->head.store(head_, std::memory_order_release);
  }
  // Bytes the producer may still write (records need their heads too); 0
  // when the consumer's position makes no sense.
  uint64_t free_bytes() const {
    if (h_ == nullptr) return 0;
    const uint64_t used = head_ - h_->tail.load(std::memory_order_acquire);
    return used > cap_ ? 0 : cap_ - used;
  }

  // The consumer's word for what it has taken, as it wrote it: to see that
  // it moves, never to address anything.
  uint64_t consumer_claim() const { return h_ == nullptr ? 0 : h_->tail.load(std::memory_order_acquire); }
  uint64_t produced() const { return head_; }  // bytes this producer committed

  // --- consumer
  // The oldest record, or an empty view (data null) when there is none or
  // the ring is corrupt.
  RecordView peek() {
    if (corrupt_ || h_ == nullptr) return {};
    const uint64_t head = producer_head();
    for (int skips = 0; skips < 2; ++skips) {
      const uint64_t avail = head - tail_;
      if (avail == 0) return {};
      if (avail > cap_) return fail();  // the producer's word is no position of this ring
      const uint64_t off = tail_ % cap_;
      uint32_t len, tag;
      std::memcpy(&len, data_ + off, 4);
      std::memcpy(&tag, data_ + off + 4, 4);
      if (tag == kSkipTag) {
        const uint64_t to_end = cap_ - off;
        if (to_end > avail) return fail();
        tail_ += to_end;
        h_->tail.store(tail_, std::memory_order_release);
        continue;
      }
      const uint64_t need = footprint(len);
      if (need > cap_ - off || need > avail) return fail();
      taken_ = need;
      return RecordView{data_ + off + kHeadBytes, len, tag};
    }
    return fail();  // two skips in a row: no producer writes that
  }
  // Precondition: peek() returned a record.
  void pop() {
    tail_ += taken_;
    taken_ = 0;
    h_->tail.store(tail_, std::memory_order_release);
  }
  bool empty() const { return h_ == nullptr || producer_head() == tail_; }
  // Bytes the producer wrote that the consumer has not taken, records' heads
  // and padding included (at most the capacity, whatever the header says).
  uint64_t bytes_waiting() const {
    if (h_ == nullptr) return 0;
    const uint64_t head = producer_head();
    return head > tail_ ? std::min(head - tail_, cap_) : 0;
  }
  bool corrupt() const { return corrupt_; }
  // The producer is gone (it hung up): what it committed so far is all
  // there is. The consumer stops reading its head - a process that closed
  // its socket but still writes to the memory is not read any further.
  void producer_gone() {
    if (h_ != nullptr && !frozen_) {
      frozen_head_ = h_->head.load(std::memory_order_acquire);
      frozen_ = true;
    }
  }

 private:
  static constexpr uint64_t round8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
  static bool capacity_ok(uint64_t cap) { return cap >= kMinCapacity && cap <= kMaxCapacity && cap % 8 == 0; }
  void attach(RecordRingHeader* h, uint64_t cap, uint64_t head, uint64_t tail) {
    h_ = h;
    data_ = h->data();
    cap_ = cap;
    // Each side keeps its own position; the other is only ever read as the
    // peer's claim. 8-aligned whatever the header said.
    head_ = head & ~uint64_t{7};
    tail_ = tail & ~uint64_t{7};
  }
  uint64_t producer_head() const { return frozen_ ? frozen_head_ : h_->head.load(std::memory_order_acquire); }
  void write_head(uint64_t off, uint32_t len, uint32_t tag) {
    std::memcpy(data_ + off, &len, 4);
    std::memcpy(data_ + off + 4, &tag, 4);
  }
  RecordView fail() {
    corrupt_ = true;
    return {};
  }

  RecordRingHeader* h_ = nullptr;
  uint8_t* data_ = nullptr;  // h_->data(), computed once
  uint64_t cap_ = 0;         // the capacity this side knows, never re-read
  uint64_t head_ = 0;        // producer: bytes it committed
  uint64_t pending_ = 0;     // producer: head after the reserved record
  uint64_t tail_ = 0;        // consumer: bytes it consumed
  uint64_t taken_ = 0;       // consumer: bytes the peeked record spans
  uint64_t frozen_head_ = 0; // consumer: the producer's last head (producer_gone)
  bool frozen_ = false;
  bool corrupt_ = false;
};

}  // namespace lanecast::ipc

// The engine's streams use this ring between an application and its polling
// core under the names they always had.
namespace lanecast::engine::stream {
using ipc::RecordRing;
using ipc::RecordRingHeader;
using ipc::RecordView;
}  // namespace lanecast::engine::stream
