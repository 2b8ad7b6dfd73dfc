#include "engine/bootstrap/endpoint_record.h"

namespace lanecast::engine::bootstrap {
namespace {

constexpr uint8_t kMagic[4] = {'L', 'C', 'E', 'P'};
constexpr size_t kFixedBytes = 4 + 2 + 2 + 4 + 8 + 8;
// The exchange bootstrap promises applications a bound (lanecast/group_spec.h).
static_assert(kFixedBytes + kRecordMaxLanes * (1 + drivers::PeerAddress::kMaxBytes) <= kMaxEndpointRecordBytes,
              "an endpoint record must fit kMaxEndpointRecordBytes");

void put(std::vector<uint8_t>& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

// Reads little-endian fields from a span, never past its end.
struct Reader {
  std::span<const uint8_t> b;
  size_t at = 0;
  bool has(size_t n) const { return b.size() - at >= n; }
  uint64_t get(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{b[at++]} << (8 * i);
    return v;
  }
};

}  // namespace

std::vector<uint8_t> encode_record(const EndpointRecord& r) {
  std::vector<uint8_t> out(kMagic, kMagic + 4);
  put(out, kRecordVersion, 2);
  put(out, r.endpoint.lanes.size(), 2);
  put(out, r.endpoint.rank, 4);
  put(out, r.endpoint.incarnation, 8);
  put(out, r.spec_digest, 8);
  for (const drivers::PeerAddress& a : r.endpoint.lanes) {
    out.push_back(a.len);
    out.insert(out.end(), a.bytes, a.bytes + a.len);
  }
  return out;
}

std::variant<EndpointRecord, std::string> decode_record(std::span<const uint8_t> bytes) {
  Reader in{bytes};
  if (!in.has(kFixedBytes))
    return std::to_string(bytes.size()) + " bytes, shorter than a record's " + std::to_string(kFixedBytes);
  for (uint8_t m : kMagic)
    if (in.get(1) != m) return std::string("not a lanecast endpoint record (no LCEP mark)");
  const auto version = static_cast<uint16_t>(in.get(2));
  if (version != kRecordVersion)
    return "record version " + std::to_string(version) + " (this lanecast reads version " +
           std::to_string(kRecordVersion) + ": members run different lanecast builds)";
  const auto lanes = static_cast<uint16_t>(in.get(2));
  if (lanes == 0 || lanes > kRecordMaxLanes)
    return std::to_string(lanes) + " lanes (1.." + std::to_string(kRecordMaxLanes) + " allowed)";
  EndpointRecord r;
  r.endpoint.rank = static_cast<uint32_t>(in.get(4));
  r.endpoint.incarnation = in.get(8);
  r.spec_digest = in.get(8);
  for (uint16_t l = 0; l < lanes; ++l) {
    if (!in.has(1)) return "ends before lane " + std::to_string(l) + "'s address";
    drivers::PeerAddress a;
    const auto len = static_cast<uint8_t>(in.get(1));
    if (len == 0 || len > drivers::PeerAddress::kMaxBytes)
      return "lane " + std::to_string(l) + "'s address is " + std::to_string(len) + " bytes (1.." +
             std::to_string(drivers::PeerAddress::kMaxBytes) + " allowed)";
    if (!in.has(len)) return "ends inside lane " + std::to_string(l) + "'s address";
    a.len = len;
    for (uint8_t i = 0; i < len; ++i) a.bytes[i] = static_cast<uint8_t>(in.get(1));
    r.endpoint.lanes.push_back(a);
  }
  if (in.has(1)) return std::to_string(bytes.size() - in.at) + " bytes after the last lane";
  return r;
}

}  // namespace lanecast::engine::bootstrap
