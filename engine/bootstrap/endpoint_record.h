// A member's endpoint as bytes, for bootstraps that pass it through someone
// else's store (PMIx's key-value store): who wrote it, its link address per
// lane, its incarnation and the digest of its group file.
//
// The bytes come from another process, possibly another lanecast build or
// something that is not lanecast at all, so decoding checks every length and
// says what is wrong instead of trusting the blob. Layout, little-endian:
//
//   magic "LCEP" (4) | version u16 | lanes u16 | rank u32 | incarnation u64 |
//   spec digest u64 | per lane: address length u8, address bytes
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

inline constexpr uint16_t kRecordVersion = 1;
inline constexpr uint16_t kRecordMaxLanes = 4;

struct EndpointRecord {
  Endpoint endpoint;
  uint64_t spec_digest = 0;
};

std::vector<uint8_t> encode_record(const EndpointRecord& r);
// The record, or what is wrong with the bytes ("12 bytes, shorter than a
// record's 32", "version 2 (this lanecast reads version 1)").
std::variant<EndpointRecord, std::string> decode_record(std::span<const uint8_t> bytes);

}  // namespace lanecast::engine::bootstrap
