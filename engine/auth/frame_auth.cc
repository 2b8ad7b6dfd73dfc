#include "engine/auth/frame_auth.h"

#include <cstring>

namespace lanecast::engine::auth {
namespace {

wire::Seal read_seal(const uint8_t* at) {
  wire::Seal s;
  std::memcpy(&s, at, sizeof s);
  return s;  // the counter is little-endian on the wire, as on every host lanecast runs on
}

}  // namespace

FrameAuth::FrameAuth(const EpochKeys& keys, uint32_t rank, uint32_t nodes)
    : frame_(keys.frame), payload_(keys.payload), rank_(rank), windows_(nodes) {
  uint32_t r;
  randombytes_buf(&r, sizeof r);
  next_counter_ = uint64_t{r} << 31;  // below 2^63: a life never runs out
}

void FrameAuth::seal_frame(uint8_t* frame, uint16_t link, uint16_t seal_at) {
  const size_t tagged = size_t{link} + seal_at;
  wire::Seal s;
  s.counter = next_counter_++;
  frame_.tag(frame, tagged, rank_, s.counter, s.tag);
  std::memcpy(frame + tagged, &s, sizeof s);
}

wire::Seal FrameAuth::seal_payload(const uint8_t* bytes, uint32_t len) {
  wire::Seal s;
  s.counter = next_counter_++;
  payload_.tag(bytes, len, rank_, s.counter, s.tag);
  return s;
}

FrameAuth::Verdict FrameAuth::open_frame(const uint8_t* frame, uint16_t link, uint16_t seal_at, uint32_t src) {
  const size_t tagged = size_t{link} + seal_at;
  const wire::Seal s = read_seal(frame + tagged);
  ReplayWindow& w = windows_[src];
  // The window first: a replay costs no tag check (RFC 4303's order).
  switch (w.check(s.counter)) {
    case ReplayWindow::Check::Replayed: return Verdict::Replayed;
    case ReplayWindow::Check::Stale: return Verdict::Stale;
    case ReplayWindow::Check::New: break;
  }
  if (!frame_.check(frame, tagged, src, s.counter, s.tag)) return Verdict::BadTag;
  w.accept(s.counter);
  return Verdict::Ok;
}

bool FrameAuth::payload_ok(const uint8_t* bytes, uint32_t len, uint32_t sealer, const wire::Seal& seal) const {
  return payload_.check(bytes, len, sealer, seal.counter, seal.tag);
}

}  // namespace lanecast::engine::auth
