// A single-producer, single-consumer ring of variable-length records in one
// block of memory that holds no pointers, so it works the same on the heap
// between two threads and in a file mapped by two processes (the daemon's
// rings, apps/daemon/). A record is an 8-byte head {length, tag} and its
// bytes, padded to 8; it never wraps: when the end of the block is too near,
// the producer writes a skip record there and starts again at the front.
//
// Boost.Lockfree's spsc_queue carries fixed-size elements (the engine's
// submissions, the daemon's control ring); a stream's messages vary from
// two bytes to megabytes, and the consumer reads each in place, so they
// travel in this ring instead.
//
// The consumer never trusts the producer's bytes: a head that does not fit
// the block (a client that crashed mid-write, or scribbled) makes the ring
// `corrupt()`, and the consumer stops reading it instead of following it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lanecast::engine::stream {

struct RecordRingHeader {
  static constexpr uint64_t kMagic = 0x676e6972636c6e6cULL;  // "lnclring"
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
  static constexpr uint32_t kSkipTag = 0xFFFFFFFFu;

  // Bytes of memory a ring of `capacity` record bytes needs.
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
  // A view on a ring laid out by init() (perhaps by another process); null
  // header or a bad magic give an unusable view (valid() false).
  RecordRing() = default;
  explicit RecordRing(RecordRingHeader* h) : h_(h) {
    if (h_ != nullptr && (h_->magic != RecordRingHeader::kMagic || h_->capacity < 16 || h_->capacity % 8 != 0))
      h_ = nullptr;
  }
  bool valid() const { return h_ != nullptr; }
  uint64_t capacity() const { return h_->capacity; }
  // Bytes a record of `len` takes in the ring.
  static uint64_t footprint(uint64_t len) { return kHeadBytes + round8(len); }
  // The largest record that always fits an empty ring.
  uint64_t max_record() const { return h_->capacity / 2 - kHeadBytes; }

  // --- producer
  // Room for a record of `len` bytes: a pointer to write them to, then
  // commit(). nullptr when the ring is full (or len too large for it).
  uint8_t* reserve(uint32_t len, uint32_t tag) {
    const uint64_t need = footprint(len);
    const uint64_t cap = h_->capacity;
    if (need > cap) return nullptr;
    const uint64_t head = h_->head.load(std::memory_order_relaxed);
    const uint64_t tail = h_->tail.load(std::memory_order_acquire);
    const uint64_t off = head % cap;
    const uint64_t to_end = cap - off;
    uint64_t at = head;
    if (to_end < need) {
      if (head + to_end + need - tail > cap) return nullptr;
      write_head(off, static_cast<uint32_t>(to_end - kHeadBytes), kSkipTag);
      at = head + to_end;
    } else if (head + need - tail > cap) {
      return nullptr;
    }
    write_head(at % cap, len, tag);
    pending_ = at + need;
    return h_->data() + at % cap + kHeadBytes;
  }
  void commit() { h_->head.store(pending_, std::memory_order_release); }
  // Bytes the producer may still write (records need their heads too).
  uint64_t free_bytes() const {
    return h_->capacity - (h_->head.load(std::memory_order_relaxed) - h_->tail.load(std::memory_order_acquire));
  }

  // --- consumer
  // The oldest record, or an empty view (data null) when there is none or
  // the ring is corrupt.
  RecordView peek() {
    if (corrupt_) return {};
    const uint64_t cap = h_->capacity;
    uint64_t tail = h_->tail.load(std::memory_order_relaxed);
    const uint64_t head = h_->head.load(std::memory_order_acquire);
    for (int skips = 0; skips < 2; ++skips) {
      if (tail == head) return {};
      if (head - tail > cap || tail % 8 != 0) return fail();
      const uint64_t off = tail % cap;
      uint32_t len, tag;
      std::memcpy(&len, h_->data() + off, 4);
      std::memcpy(&tag, h_->data() + off + 4, 4);
      const uint64_t need = footprint(len);
      if (need > cap - off || need > head - tail) return fail();
      if (tag == kSkipTag) {
        tail += need;
        h_->tail.store(tail, std::memory_order_release);
        continue;
      }
      taken_ = need;
      return RecordView{h_->data() + off + kHeadBytes, len, tag};
    }
    return fail();
  }
  // Precondition: peek() returned a record.
  void pop() { h_->tail.store(h_->tail.load(std::memory_order_relaxed) + taken_, std::memory_order_release); }
  bool empty() const {
    return h_->head.load(std::memory_order_acquire) == h_->tail.load(std::memory_order_relaxed);
  }
  bool corrupt() const { return corrupt_; }

 private:
  static uint64_t round8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
  void write_head(uint64_t off, uint32_t len, uint32_t tag) {
    std::memcpy(h_->data() + off, &len, 4);
    std::memcpy(h_->data() + off + 4, &tag, 4);
  }
  RecordView fail() {
    corrupt_ = true;
    return {};
  }

  RecordRingHeader* h_ = nullptr;
  uint64_t pending_ = 0;  // producer: head after the reserved record
  uint64_t taken_ = 0;    // consumer: bytes the peeked record spans
  bool corrupt_ = false;
};

}  // namespace lanecast::engine::stream
