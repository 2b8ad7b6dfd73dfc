// libFuzzer target: the frame parser, wire::parse and wire::payload_crc_ok,
// on any bytes, whole or cut in two chained mbufs (input format in
// fuzz_input.h). Frames live on the heap (heap_frame.h), so a read past a
// frame's end is an AddressSanitizer report. Beyond "no crash", every verdict
// is checked against a plain reading of the format (wire.h), an accepted
// header must be written back byte for byte by write_data/write_ack, and the
// chain-walking checksums must agree with the flat ones.
#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "engine/checksum/crc32c.h"
#include "engine/checksum/crc32c_mbuf.h"
#include "engine/runtime/eal.h"
#include "engine/wire/wire.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/fuzz/heap_frame.h"

namespace lanecast::fuzz {
namespace {

using engine::wire::FrameType;
using engine::wire::Verdict;

rte_mempool* g_headers = nullptr;

[[noreturn]] void fail(const char* what, Verdict got, Verdict want) {
  std::fprintf(stderr, "wire_fuzz: %s (verdict %s, expected %s)\n", what, wire::verdict_name(got),
               wire::verdict_name(want));
  std::abort();
}

uint32_t le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return rte_le_to_cpu_32(v);
}

// What wire.h says a frame of `f` (first mbuf holding `first` bytes) is.
Verdict expected(const std::vector<uint8_t>& f, uint32_t first, uint16_t link) {
  const size_t n = f.size();
  if (n < link + sizeof(wire::FrameHeader)) return Verdict::TooShort;
  if (first < link + sizeof(wire::FrameHeader)) return Verdict::HeaderSplit;
  const uint8_t* h = f.data() + link;
  if (h[0] != wire::kVersion) return Verdict::BadVersion;
  size_t body;
  if (h[1] == static_cast<uint8_t>(FrameType::Data) || h[1] == static_cast<uint8_t>(FrameType::Datagram))
    body = sizeof(wire::DataBody);
  else if (h[1] == static_cast<uint8_t>(FrameType::Ack))
    body = sizeof(wire::AckBody);
  else if (h[1] == static_cast<uint8_t>(FrameType::Hello))
    body = sizeof(wire::HelloBody);
  else if (h[1] == static_cast<uint8_t>(FrameType::Failed))
    body = sizeof(wire::FailedBody);
  else
    return Verdict::BadType;
  // A sealed frame's seals follow the body: the payload's (data and
  // datagrams) and the frame's own, 24 bytes each.
  const bool data = body == sizeof(wire::DataBody);
  const bool sealed = (le32(h) >> 16 & wire::kFlagSealed) != 0;  // flags: bytes 2..3
  const size_t headers = link + sizeof(wire::FrameHeader) + body + (sealed ? (data ? 48 : 24) : 0);
  if (n < headers) return Verdict::TooShort;
  if (first < headers) return Verdict::HeaderSplit;
  std::vector<uint8_t> copy(h, h + sizeof(wire::FrameHeader) + body);
  std::memset(copy.data() + offsetof(wire::FrameHeader, header_crc), 0, 4);
  if (engine::crc32c(0, copy.data(), copy.size()) != le32(h + offsetof(wire::FrameHeader, header_crc)))
    return Verdict::BadHeaderCrc;
  if (data && le32(h + sizeof(wire::FrameHeader) + offsetof(wire::DataBody, payload_len)) != n - headers)
    return Verdict::BadLength;
  return Verdict::Ok;
}

// An accepted frame: its fields written back must give its bytes again,
// unless it set what the writers always clear (reserved fields, an ack's flags).
void check_round_trip(const std::vector<uint8_t>& f, uint16_t link, const wire::Parsed& p) {
  const uint8_t* h = f.data() + link;
  uint8_t again[wire::kDataHeaderBytes + 2 * wire::kSealBytes];
  size_t len;
  bool cleared_something;
  const wire::Origin from{p.group, p.epoch, p.src};
  // Reserved fields are written as zero: a header with any set does not come back byte for byte.
  uint32_t header_reserved;
  std::memcpy(&header_reserved, h + offsetof(wire::FrameHeader, reserved), sizeof header_reserved);
  if (p.type == FrameType::Failed) {
    wire::write_failed(again, from, p.failed, p.flags);
    len = wire::kFailedBytes;
    const uint8_t* r = h + sizeof(wire::FrameHeader) + offsetof(wire::FailedBody, reserved);
    cleared_something = r[0] != 0 || r[1] != 0 || r[2] != 0;
  } else if (p.type == FrameType::Hello) {
    wire::write_hello(again, from, p.hello, p.flags);
    len = wire::kHelloBytes;
    cleared_something = h[sizeof(wire::FrameHeader) + offsetof(wire::HelloBody, reserved)] != 0;
  } else if (p.type == FrameType::Ack) {
    wire::write_ack(again, from, p.ack, p.flags);
    len = wire::kAckHeaderBytes;
    const uint8_t* b = h + sizeof(wire::FrameHeader);
    uint32_t reserved2;
    std::memcpy(&reserved2, b + offsetof(wire::AckBody, reserved2), sizeof reserved2);
    cleared_something = b[offsetof(wire::AckBody, reserved)] != 0 || b[offsetof(wire::AckBody, reserved) + 1] != 0 ||
                        reserved2 != 0;
  } else {
    wire::write_data(again, from, p.data, p.flags, p.type);
    len = wire::kDataHeaderBytes;
    if (p.sealed) {  // the payload's seal, which parse() reads
      wire::write_payload_seal(again, p.payload_seal);
      len += wire::kSealBytes;
    }
    cleared_something = h[sizeof(wire::FrameHeader) + offsetof(wire::DataBody, reserved)] != 0 ||
                        h[sizeof(wire::FrameHeader) + offsetof(wire::DataBody, reserved) + 1] != 0;
  }
  // The frame's own seal is not read by parse(), only located: right after
  // what was written back.
  if (p.sealed != ((p.flags & wire::kFlagSealed) != 0) || (p.sealed && p.seal_at != len))
    fail("a sealed frame's seal is not where the format puts it", Verdict::Ok, Verdict::Ok);
  const size_t written = len;
  if (p.sealed) len += wire::kSealBytes;
  if (p.payload_offset != link + len) fail("payload_offset is not past the headers", Verdict::Ok, Verdict::Ok);
  cleared_something = cleared_something || header_reserved != 0;
  if (!cleared_something && std::memcmp(again, h, written) != 0)
    fail("an accepted header does not survive parse + write", Verdict::Ok, Verdict::Ok);
}

// The payload checks that walk the chain against the same sums over flat bytes.
void check_payload(const rte_mbuf* m, const std::vector<uint8_t>& f, const wire::Parsed& p) {
  const uint32_t len = p.data.payload_len;
  const uint32_t flat = engine::crc32c(0, f.data() + p.payload_offset, len);
  if (wire::payload_crc_ok(m, p) != (flat == p.data.payload_crc))
    fail("payload_crc_ok disagrees with the flat CRC", Verdict::Ok, Verdict::Ok);
  std::vector<uint8_t> dst(len);  // exactly the payload: writing one byte more is a report
  uint32_t crc = 0;
  if (!engine::crc32c_mbuf_copy(m, p.payload_offset, len, dst.data(), &crc) || crc != flat ||
      !std::equal(dst.begin(), dst.end(), f.begin() + p.payload_offset))
    fail("crc32c_mbuf_copy disagrees with the flat copy", Verdict::Ok, Verdict::Ok);
}

}  // namespace
}  // namespace lanecast::fuzz

using namespace lanecast::fuzz;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  lanecast::engine::EalOptions o;
  o.memory_mb = 256;
  o.polling_cores = 1;
  lanecast::engine::eal_start(o);
  g_headers = rte_pktmbuf_pool_create("wire_fuzz", 63, 0, 0, 0, SOCKET_ID_ANY);
  if (g_headers == nullptr) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kWirePrefix || size - kWirePrefix > 9000) return 0;  // up to a jumbo frame
  const uint8_t mode = data[0];
  const uint16_t link = kWireLinkBytes[mode & 3];
  std::vector<uint8_t> f(data + kWirePrefix, data + size);
  if (f.size() > link) {
    if (mode & kWireFixPayload) fix_payload(f.data() + link, f.size() - link);
    if (mode & kWireFixHeader) fix_header_crc(f.data() + link, f.size() - link);
  }
  const auto n = static_cast<uint16_t>(f.size());
  const uint16_t cut = (mode & kWireChained) ? static_cast<uint16_t>(data[1] % (n + 1)) : n;
  rte_mbuf* m = heap_frame(g_headers, f.data(), cut);
  if (m == nullptr) std::abort();
  if (cut < n) {
    rte_mbuf* tail = heap_frame(g_headers, f.data() + cut, static_cast<uint16_t>(n - cut));
    if (tail == nullptr || rte_pktmbuf_chain(m, tail) != 0) std::abort();
  }

  lanecast::engine::wire::Parsed p;
  const Verdict v = lanecast::engine::wire::parse(m, link, &p);
  const Verdict want = expected(f, cut, link);
  if (v != want) fail("parse disagrees with the format", v, want);
  if (v == Verdict::Ok) {
    check_round_trip(f, link, p);
    if (p.type == FrameType::Data || p.type == FrameType::Datagram) check_payload(m, f, p);
  }
  rte_pktmbuf_free(m);
  if (rte_mempool_in_use_count(g_headers) != 0) fail("an mbuf was not returned", v, want);
  return 0;
}
