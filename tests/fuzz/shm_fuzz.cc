// shm_fuzz: arbitrary bytes as a client's shared memory of `lanecast daemon`
// (ipc/). The file is laid out by the daemon's own code in a heap block of
// exactly its size; then the input's steps (shm_input.h) interleave the
// daemon's side of every ring (taking the application's records, delivering,
// telling), the client library's side (checking the file, reading deliveries
// and notices, publishing) and an attacker's writes of any bytes or chosen
// words anywhere - headers, positions, record heads, records, torn halves.
//
// Checked: no access outside the block (ASan), every record either side is
// handed lies inside the ring it came from, no step loops for long (each is
// bounded by its input), a ring that breaks stays broken (the daemon then
// stops using the file, as it cuts the client off). SHM_FUZZ_VERBOSE=1
// prints what each side got, to replay an input by hand.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>

#include "ipc/client_file.h"
#include "ipc/delivered_head.h"
#include "tests/fuzz/shm_input.h"

namespace {

using namespace lanecast::ipc;
using lanecast::fuzz::ShmStep;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "shm_fuzz: %s\n", what);
  std::abort();
}

struct Input {
  const uint8_t* p;
  size_t n;
  bool empty() const { return n == 0; }
  uint8_t u8() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{u8()} << (8 * i);
    return v;
  }
};

struct Msg {
  uint32_t publisher = 0;
  uint16_t stream = 0;
  uint64_t seq = 0, timestamp_ns = 0;
  std::span<const std::byte> data;
};

// Where a ring's record bytes lie in the file.
struct Span {
  const uint8_t* lo = nullptr;
  const uint8_t* hi = nullptr;
  bool holds(const void* p, uint64_t len) const {
    const auto* b = static_cast<const uint8_t*>(p);
    return b >= lo && b <= hi && len <= static_cast<uint64_t>(hi - b);
  }
};
Span ring_span(uint8_t* file, uint64_t offset, uint64_t capacity) {
  const uint8_t* lo = file + offset + sizeof(RecordRingHeader);
  return {lo, lo + capacity};
}

uint8_t sink[65536];  // what either side copies out of a record: ASan checks every byte read

uint64_t word_value(uint8_t kind, uint64_t current, const ClientLayout& lay, const uint8_t* file, uint64_t at, Input& in) {
  // The ring the word falls in, for values relative to it.
  uint64_t ring = lay.publish != 0 ? lay.publish : lay.delivery, cap = lay.publish_capacity ? lay.publish_capacity : lay.delivery_capacity;
  if (lay.delivery != 0 && at >= lay.delivery) ring = lay.delivery, cap = lay.delivery_capacity;
  else if (at >= lay.notice && (lay.publish == 0 || at < lay.publish) && (lay.delivery == 0 || at < lay.delivery))
    ring = lay.notice, cap = NoticeRing::capacity();
  const auto* h = reinterpret_cast<const RecordRingHeader*>(file + ring);
  switch (kind % lanecast::fuzz::kShmWordKinds) {
    case lanecast::fuzz::kWordRaw: return in.u64();
    case lanecast::fuzz::kWordZero: return 0;
    case lanecast::fuzz::kWordOnes: return ~uint64_t{0};
    case lanecast::fuzz::kWordCapacity: return cap;
    case lanecast::fuzz::kWordCapacityMinus1: return cap - 1;
    case lanecast::fuzz::kWordPastEnd: return cap + 8;
    case lanecast::fuzz::kWordFileBytes: return lay.bytes;
    case lanecast::fuzz::kWordHeadPlusCap: return h->head.load(std::memory_order_relaxed) + cap + 8;
    case lanecast::fuzz::kWordTailMinus8: return h->tail.load(std::memory_order_relaxed) - 8;
    case lanecast::fuzz::kWordHuge: return uint64_t{1} << 63;
    case lanecast::fuzz::kWordPlus8: return current + 8;
    case lanecast::fuzz::kWordLow32: return (current & ~uint64_t{0xFFFFFFFF}) | 0xFFFFFFFF;
    default: return uint64_t{RecordRing::kSkipTag} << 32;  // a skip head, read as {length 0, tag skip}
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Input in{data, size};
  const uint8_t shape = in.u8();
  const Role role = (shape & 3) == 1 ? Role::Publisher : (shape & 3) == 2 ? Role::Subscriber : Role::Both;
  const auto lay = client_layout(role, lanecast::fuzz::kShmRings[(shape >> 2) & 7], lanecast::fuzz::kShmRings[(shape >> 5) & 7]);
  if (!lay) fail("the layout refused sizes it must take");
  const uint64_t max_message = 16 + 8 * uint64_t{in.u8()};
  auto* file = static_cast<uint8_t*>(std::aligned_alloc(64, lay->bytes));
  std::memset(file, 0, lay->bytes);
  DaemonView daemon = make_client_file(file, *lay, {1, 0, 2, max_message});
  bool cut_off = false;  // the daemon found a ring of this client broken: it uses the file no more
  const Span publish = ring_span(file, lay->publish, lay->publish_capacity);
  const Span delivery = ring_span(file, lay->delivery, lay->delivery_capacity);
  const Span whole{file, file + lay->bytes};
  std::optional<ClientView> client;  // the application's views, once it checked the file
  struct {
    uint64_t taken = 0, given = 0, told = 0, opened = 0, refused = 0, read = 0, notices = 0, put = 0;
    std::string why;
  } seen;

  while (!in.empty()) {
    const uint8_t op = in.u8();
    const uint8_t n = op >> 3;
    switch (static_cast<ShmStep>(op & 7)) {
      case ShmStep::Bytes: {
        const uint64_t at = in.u16() % lay->bytes;
        for (uint64_t i = 0; i <= n && at + i < lay->bytes; ++i) file[at + i] = in.u8();
        break;
      }
      case ShmStep::Word: {
        const uint64_t at = (in.u16() % (lay->bytes / 8)) * 8;
        uint64_t cur;
        std::memcpy(&cur, file + at, 8);
        const uint64_t v = word_value(in.u8(), cur, *lay, file, at, in);
        std::memcpy(file + at, &v, 8);
        break;
      }
      case ShmStep::DaemonTake: {
        if (cut_off || !daemon.publish.valid()) break;
        for (int i = 0; i <= n; ++i) {
          const RecordView r = daemon.publish.peek();
          if (r.data == nullptr) {
            cut_off = daemon.publish.corrupt();
            break;
          }
          if (!publish.holds(r.data, r.len)) fail("the daemon was handed a record outside the publish ring");
          std::memcpy(sink, r.data, r.len);
          daemon.publish.pop();
          ++seen.taken;
        }
        break;
      }
      case ShmStep::DaemonGive: {
        if (cut_off || !daemon.delivery.valid()) break;
        const uint64_t len = in.u16() % 4096;
        uint8_t* at = daemon.delivery.reserve(sizeof(DeliveredHead) + len, 0);
        if (at == nullptr) {
          cut_off = daemon.delivery.corrupt();
          break;
        }
        if (!delivery.holds(at, sizeof(DeliveredHead) + len)) fail("the daemon reserved outside the delivery ring");
        const DeliveredHead h{7, 8, 0, 0, 0};
        std::memcpy(at, &h, sizeof h);
        std::memset(at + sizeof h, 0x33, len);
        daemon.delivery.commit();
        ++seen.given;
        break;
      }
      case ShmStep::DaemonTell:
        if (cut_off) break;
        if (daemon.notices.push(Notice{Notice::Evicted, n, 1})) ++seen.told;
        else cut_off = daemon.notices.corrupt();
        break;
      case ShmStep::ClientOpen: {
        std::string why;
        if (auto v = open_client_file(file, lay->bytes, &why)) {
          if (v->layout.bytes != lay->bytes) fail("a file the application accepted is not its mapping's size");
          client = *v;
          ++seen.opened;
        } else {
          ++seen.refused;
          seen.why = why;
        }
        break;
      }
      case ShmStep::ClientTake: {
        if (!client) break;
        Msg m;
        for (int i = 0; i <= n; ++i) {
          if (!client->delivery.next(m)) break;
          if (!whole.holds(m.data.data(), m.data.size())) fail("the application was lent a message outside its file");
          std::memcpy(sink, m.data.data(), m.data.size());
          ++seen.read;
        }
        for (int i = 0; i <= n; ++i) {
          if (!client->notices.pop()) break;
          ++seen.notices;
        }
        break;
      }
      case ShmStep::ClientPut: {
        if (!client || !client->publish.valid()) break;
        const uint64_t len = in.u16() % 4096;
        if (len > client->id.max_message) break;
        uint8_t* at = client->publish.reserve(len, 0);
        if (at == nullptr) break;
        if (!whole.holds(at, len)) fail("the application reserved outside its file");
        std::memset(at, 0x44, len);
        client->publish.commit();
        ++seen.put;
        break;
      }
    }
    // A broken ring stays broken.
    if (daemon.publish.valid() && daemon.publish.corrupt() && daemon.publish.peek().data != nullptr)
      fail("a corrupt ring handed out a record");
  }
  if (std::getenv("SHM_FUZZ_VERBOSE") != nullptr) {
    std::fprintf(stderr,
                 "shm_fuzz: file of %llu bytes; application: put %llu, read %llu (skipped %llu), notices %llu, "
                 "file accepted %llu, refused %llu%s%s; daemon: took %llu, gave %llu, told %llu%s\n",
                 static_cast<unsigned long long>(lay->bytes), static_cast<unsigned long long>(seen.put),
                 static_cast<unsigned long long>(seen.read),
                 static_cast<unsigned long long>(client ? client->delivery.skipped() : 0),
                 static_cast<unsigned long long>(seen.notices), static_cast<unsigned long long>(seen.opened),
                 static_cast<unsigned long long>(seen.refused), seen.why.empty() ? "" : ": ", seen.why.c_str(),
                 static_cast<unsigned long long>(seen.taken), static_cast<unsigned long long>(seen.given),
                 static_cast<unsigned long long>(seen.told), cut_off ? "; cut the client off" : "");
  }
  std::free(file);
  return 0;
}
