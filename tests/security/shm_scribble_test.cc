// The shared-memory format (ipc/) against a peer that writes what it likes
// into the memory both map. Every ring here lives in a heap block of exactly
// its size, so under ASan (tools/test.sh --sanitize) a read or write outside
// it is a failure, not luck. Each test names the defect it pins down.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <span>
#include <vector>

#include "ipc/client_file.h"
#include "ipc/delivery_reader.h"
#include "ipc/notice_ring.h"
#include "ipc/record_ring.h"

namespace lanecast::ipc {
namespace {

// A ring in a heap block of exactly bytes_for(cap) bytes (aligned new takes
// any size, so ASan sees the block end where the ring ends).
struct Block {
  explicit Block(uint64_t cap)
      : bytes(RecordRing::bytes_for(cap)), mem(static_cast<uint8_t*>(::operator new(bytes, std::align_val_t{64}))) {
    std::memset(mem.get(), 0, bytes);
    h = RecordRing::init(mem.get(), cap);
  }
  struct Free {
    void operator()(uint8_t* p) const { ::operator delete(p, std::align_val_t{64}); }
  };
  size_t bytes;
  std::unique_ptr<uint8_t, Free> mem;
  RecordRingHeader* h;
  const uint8_t* begin() const { return mem.get() + sizeof(RecordRingHeader); }
  const uint8_t* end() const { return mem.get() + bytes; }
  bool inside(const RecordView& v) const { return v.data >= begin() && v.data + v.len <= end(); }
};

struct Msg {
  uint32_t publisher = 0;
  uint16_t stream = 0;
  uint64_t seq = 0, timestamp_ns = 0;
  std::span<const std::byte> data;
};

const uint64_t kAdversarial[] = {0,
                                 ~uint64_t{0},
                                 1,
                                 7,
                                 4095,
                                 4096,
                                 4104,
                                 uint64_t{1} << 31,
                                 uint64_t{1} << 32,
                                 (uint64_t{1} << 32) + 8,
                                 uint64_t{1} << 40,
                                 uint64_t{1} << 63,
                                 0x7fffffffffffffffULL,
                                 0xfffffffffffff000ULL};

// Defect 1: the capacity was read from the shared header at every call, so
// a peer that wrote a huge one sent the other side's reads and writes past
// the block. The view reads it once, when it attaches; later scribbles of
// the capacity word change nothing.
TEST(RingAgainstScribbles, ACapacityWrittenLaterIsNeverUsed) {
  for (const uint64_t scribble : kAdversarial) {
    Block b(4096);
    RecordRing prod(b.h), cons(b.h);
    b.h->capacity = scribble;  // after both attached
    uint32_t written = 0, read = 0;
    for (int round = 0; round < 2000; ++round) {
      const uint64_t len = (round * 37) % 900;
      if (uint8_t* p = prod.reserve(len, written)) {
        ASSERT_GE(p, b.begin());
        ASSERT_LE(p + len, b.end());
        std::memset(p, static_cast<int>(written & 0xff), len);
        prod.commit();
        ++written;
      }
      for (RecordView v = cons.peek(); v.data != nullptr; v = cons.peek()) {
        ASSERT_TRUE(b.inside(v));
        ASSERT_EQ(v.tag, read);
        cons.pop();
        ++read;
      }
    }
    EXPECT_EQ(read, written) << scribble;
    EXPECT_FALSE(cons.corrupt());
  }
}

// The producer's head, as the consumer sees it: every value that is no
// position of the ring makes it corrupt; none moves it off the block.
TEST(RingAgainstScribbles, AProducerHeadThatMakesNoSenseMakesItCorrupt) {
  for (const uint64_t scribble : kAdversarial) {
    Block b(4096);
    RecordRing prod(b.h);
    for (int i = 0; i < 5; ++i) {
      ASSERT_NE(prod.reserve(100, 0), nullptr);
      prod.commit();
    }
    RecordRing cons(b.h);
    cons.peek();
    cons.pop();
    b.h->head.store(scribble);
    for (int i = 0; i < 10; ++i) {
      const RecordView v = cons.peek();
      if (v.data == nullptr) break;
      ASSERT_TRUE(b.inside(v));
      cons.pop();
    }
    const uint64_t tail = b.h->tail.load();
    const bool sane = scribble >= tail && scribble - tail <= 4096;
    if (!sane) {
      EXPECT_TRUE(cons.corrupt()) << scribble;
    }
  }
}

// The consumer's tail, as the producer sees it: the producer keeps its own
// head, so a tail that is no position of the ring is corruption, not an
// address.
TEST(RingAgainstScribbles, AConsumerTailThatMakesNoSenseMakesItCorrupt) {
  for (const uint64_t scribble : kAdversarial) {
    Block b(4096);
    RecordRing prod(b.h);
    for (int i = 0; i < 3; ++i) {
      ASSERT_NE(prod.reserve(100, 0), nullptr);
      prod.commit();
    }
    b.h->tail.store(scribble);
    b.h->head.store(scribble);  // its own head word too: the producer never reads it back
    for (int i = 0; i < 100; ++i) {
      uint8_t* p = prod.reserve(64, 0);
      if (p == nullptr) break;
      ASSERT_GE(p, b.begin());
      ASSERT_LE(p + 64, b.end());
      prod.commit();
    }
    const uint64_t head = 3 * RecordRing::footprint(100);
    const bool sane = scribble <= head && head - scribble <= 4096 && scribble % 8 == 0;
    if (!sane) {
      EXPECT_TRUE(prod.corrupt()) << scribble;
    }
  }
}

// Every word of the block - header and records - rewritten at random
// between the two sides' steps, many times over: neither side ever leaves
// the block, and a record it takes is always inside it.
TEST(RingAgainstScribbles, RandomWordsEverywhereNeverLeaveTheBlock) {
  const uint64_t seed = std::random_device{}();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  uint64_t corrupt = 0;
  for (int ring = 0; ring < 200; ++ring) {
    const uint64_t cap = 64 + 8 * (rng() % 600);
    Block b(cap);
    RecordRing prod = RecordRing::fresh(b.mem.get(), cap), cons = RecordRing::shared(b.h, cap);
    ASSERT_TRUE(cons.valid());
    for (int step = 0; step < 400; ++step) {
      if (uint8_t* p = prod.reserve(rng() % (cap / 2 + 16), 0)) {
        ASSERT_GE(p, b.begin());
        ASSERT_LE(p, b.end());
        prod.commit();
      }
      for (int k = 0; k < 3; ++k) {
        const RecordView v = cons.peek();
        if (v.data == nullptr) break;
        ASSERT_TRUE(b.inside(v));
        cons.pop();
      }
      const uint64_t word = rng() % (b.bytes / 8);
      uint64_t value = rng() % 3 == 0 ? kAdversarial[rng() % std::size(kAdversarial)] : rng();
      if (rng() % 4 == 0) value = b.h->tail.load() + (rng() % 64) * 8;  // plausible positions
      std::memcpy(b.mem.get() + word * 8, &value, 8);
    }
    corrupt += cons.corrupt() || prod.corrupt();
  }
  EXPECT_GT(corrupt, 0u);
}

// Defect 1 (lengths): a record's length is a 32-bit field. reserve() takes
// 64 bits and refuses what the field cannot say - it never writes a
// truncated length that would make the consumer read another record.
TEST(RingAgainstScribbles, ALengthPastWhatAHeadCanSayIsRefusedNotTruncated) {
  // 16 GiB of address space, only the touched pages real.
  const uint64_t cap = uint64_t{1} << 34;
  const size_t bytes = RecordRing::bytes_for(cap);
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  RecordRing r = RecordRing::fresh(mem, cap);
  EXPECT_EQ(r.max_record(), RecordRing::kMaxLength);
  EXPECT_EQ(r.reserve(uint64_t{1} << 32, 0), nullptr);           // would be written down as 0
  EXPECT_EQ(r.reserve((uint64_t{1} << 32) + 100, 0), nullptr);   // ... as 100
  EXPECT_EQ(r.reserve(~uint64_t{0}, 0), nullptr);
  uint8_t* p = r.reserve(RecordRing::kMaxLength, 7);
  ASSERT_NE(p, nullptr);
  uint32_t len;
  std::memcpy(&len, p - RecordRing::kHeadBytes, 4);
  EXPECT_EQ(len, RecordRing::kMaxLength);
  ::munmap(mem, bytes);

  Block small(4096);
  RecordRing s(small.h);
  EXPECT_EQ(s.max_record(), 4096 / 2 - 8);
  EXPECT_EQ(s.reserve(s.max_record() + 1, 0), nullptr);
  // The largest record fits an empty ring wherever its position is.
  RecordRing cons(small.h);
  for (int i = 0; i < 50; ++i) {
    ASSERT_NE(s.reserve(8 * (i % 7), 0), nullptr);
    s.commit();
    cons.peek();
    cons.pop();
    ASSERT_NE(s.reserve(s.max_record(), 1), nullptr) << i;
    s.commit();
    ASSERT_NE(cons.peek().data, nullptr);
    cons.pop();
  }
}

// Defect 1 (reader): a record shorter than a delivered message's head used
// to stop DeliveryReader::next() for good (it returned false and never
// moved on). Such records are skipped and counted; the messages after them
// come through.
TEST(DeliveryReaderAgainstScribbles, AShortRecordIsSkippedAndCounted) {
  Block b(4096);
  RecordRing prod(b.h);
  auto put = [&](uint64_t len, uint64_t seq) {
    uint8_t* p = prod.reserve(len, 0);
    ASSERT_NE(p, nullptr);
    std::memset(p, 0, len);
    if (len >= sizeof(DeliveredHead)) {
      const DeliveredHead h{seq, 0, 0, 0, 0};
      std::memcpy(p, &h, sizeof h);
    }
    prod.commit();
  };
  put(10, 0);
  put(0, 0);
  put(sizeof(DeliveredHead) + 5, 42);
  put(23, 0);
  put(sizeof(DeliveredHead), 43);
  DeliveryReader reader(b.h);
  Msg m;
  ASSERT_TRUE(reader.next(m));
  EXPECT_EQ(m.seq, 42u);
  EXPECT_EQ(m.data.size(), 5u);
  ASSERT_TRUE(reader.next(m));
  EXPECT_EQ(m.seq, 43u);
  EXPECT_EQ(m.data.size(), 0u);
  EXPECT_FALSE(reader.next(m));
  EXPECT_EQ(reader.skipped(), 3u);
  // A ring of nothing but short records: each call moves on, none hangs.
  for (int i = 0; i < 300; ++i)
    if (uint8_t* p = prod.reserve(1, 0)) {
      *p = 0;
      prod.commit();
    }
  int calls = 0;
  while (reader.waiting() && calls < 100) {
    EXPECT_FALSE(reader.next(m));
    ++calls;
  }
  EXPECT_LT(calls, 100);
  EXPECT_FALSE(reader.corrupt());
}

// The notice ring: the daemon's producer side against a scribbled tail, the
// application's consumer side against records of the wrong size.
TEST(NoticeRingAgainstScribbles, AScribbledTailStopsTheDaemonNotMovesIt) {
  Block b(NoticeRing::capacity());
  NoticeRing daemon(RecordRing::fresh(b.mem.get(), NoticeRing::capacity()));
  NoticeRing app(RecordRing::shared(b.h, NoticeRing::capacity()));
  ASSERT_TRUE(app.valid());
  for (uint32_t i = 0; i < NoticeRing::kNotices; ++i) ASSERT_TRUE(daemon.push(Notice{Notice::Evicted, i, i}));
  EXPECT_FALSE(daemon.push(Notice{}));  // full
  EXPECT_FALSE(daemon.corrupt());
  for (uint32_t i = 0; i < 10; ++i) {
    const auto n = app.pop();
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(n->peer, i);
  }
  b.h->tail.store(~uint64_t{0} - 7);
  EXPECT_FALSE(daemon.push(Notice{}));
  EXPECT_TRUE(daemon.corrupt());

  Block c(NoticeRing::capacity());
  RecordRing raw = RecordRing::fresh(c.mem.get(), NoticeRing::capacity());
  NoticeRing reader(RecordRing::shared(c.h, NoticeRing::capacity()));
  for (int i = 0; i < 20; ++i) {
    ASSERT_NE(raw.reserve(i % 3 == 0 ? sizeof(Notice) : 3, 0), nullptr);
    raw.commit();
  }
  int got = 0;
  for (int i = 0; i < 40; ++i) got += reader.pop().has_value();
  EXPECT_EQ(got, 7);
}

// A client's whole file as the application receives it: every header word
// that disagrees with the layout its sizes make is refused, and any file
// accepted has its rings inside the mapping.
TEST(ClientFileAgainstScribbles, AHeaderThatDisagreesWithItsLayoutIsRefused) {
  const auto lay = client_layout(Role::Both, 8192, 16384);
  ASSERT_TRUE(lay.has_value());
  auto fresh = [&] {
    std::unique_ptr<uint8_t, Block::Free> m(static_cast<uint8_t*>(::operator new(lay->bytes, std::align_val_t{64})));
    std::memset(m.get(), 0, lay->bytes);
    make_client_file(m.get(), *lay, {1, 0, 1, 1000});
    return m;
  };
  {
    auto m = fresh();
    std::string why;
    const auto v = open_client_file(m.get(), lay->bytes, &why);
    ASSERT_TRUE(v.has_value()) << why;
    EXPECT_EQ(v->id.max_message, 1000u);
    EXPECT_FALSE(open_client_file(m.get(), lay->bytes - 64, &why).has_value());
    EXPECT_FALSE(open_client_file(m.get(), lay->bytes + 64, &why).has_value());
  }
  const size_t fields[] = {offsetof(ClientHeader, magic),           offsetof(ClientHeader, version),
                           offsetof(ClientHeader, file_bytes),      offsetof(ClientHeader, notice_offset),
                           offsetof(ClientHeader, publish_offset),  offsetof(ClientHeader, delivery_offset),
                           offsetof(ClientHeader, publish_capacity), offsetof(ClientHeader, delivery_capacity)};
  for (const size_t f : fields)
    for (const uint64_t v : kAdversarial) {
      auto m = fresh();
      uint64_t old;
      std::memcpy(&old, m.get() + f, 8);
      if (f == offsetof(ClientHeader, version)) {
        const uint32_t v32 = static_cast<uint32_t>(v);
        if (v32 == kFormatVersion) continue;
        std::memcpy(m.get() + f, &v32, 4);
      } else {
        if (v == old) continue;
        std::memcpy(m.get() + f, &v, 8);
      }
      std::string why;
      EXPECT_FALSE(open_client_file(m.get(), lay->bytes, &why).has_value()) << "field at " << f << " = " << v;
    }
  // Ring headers whose magic or capacity disagree with the layout.
  for (const uint64_t ring : {lay->notice, lay->publish, lay->delivery})
    for (const size_t f : {offsetof(RecordRingHeader, magic), offsetof(RecordRingHeader, capacity)}) {
      auto m = fresh();
      const uint64_t v = 1 << 20;
      std::memcpy(m.get() + ring + f, &v, 8);
      std::string why;
      EXPECT_FALSE(open_client_file(m.get(), lay->bytes, &why).has_value()) << ring << " " << f;
    }
}

}  // namespace
}  // namespace lanecast::ipc
