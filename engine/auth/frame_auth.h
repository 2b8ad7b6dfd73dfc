// One member's seals in a group with a key (docs/security.md): it seals
// every frame it sends and opens every frame it receives, each under the
// epoch's keys (epoch_keys.h).
//
//   frame seal    every frame: a tag over the link header, the lanecast
//                 header, the body and (data) the payload seal, by the
//                 sender, under a counter of its own that is also the
//                 frame's number for the receiver's anti-replay window (one
//                 per sender, not per pair: so the destination address is
//                 under the tag, or a frame sent to one member would open
//                 at another that never saw its counter).
//   payload seal  a data frame's payload: a tag over the bytes, made once by
//                 whoever made them - the broadcast's root, the stream's
//                 publisher - and carried unchanged by every member that
//                 forwards them, so a forwarder never reads a payload to
//                 seal it again; each receiver checks it once.
//
// A frame without a seal, with a tag that does not verify, or with a counter
// the window has seen or left behind is dropped and counted by the node
// under its reason. Sealing happens as frames leave (TxLanes::flush), a
// burst at a time; opening happens before anything else reads the frame.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/auth/epoch_keys.h"
#include "engine/auth/replay_window.h"
#include "engine/auth/sealer.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::auth {

class FrameAuth {
 public:
  FrameAuth(const EpochKeys& keys, uint32_t rank, uint32_t nodes);

  // --- sending
  // Seals a frame that starts at `frame` with a link header of `link`
  // bytes, its lanecast header written with kFlagSealed: its tag over
  // frame[0, link + seal_at), written there. `seal_at` counts from the
  // lanecast header (wire::frame_seal_at).
  void seal_frame(uint8_t* frame, uint16_t link, uint16_t seal_at);
  wire::Seal seal_payload(const uint8_t* bytes, uint32_t len);

  // --- receiving
  enum class Verdict : uint8_t { Ok, BadTag, Replayed, Stale };
  // Checks a sealed frame from `src` (< nodes), laid out as seal_frame's,
  // and, if good, takes its counter into src's window.
  Verdict open_frame(const uint8_t* frame, uint16_t link, uint16_t seal_at, uint32_t src);
  bool payload_ok(const uint8_t* bytes, uint32_t len, uint32_t sealer, const wire::Seal& seal) const;

  size_t bytes() const { return sizeof *this + windows_.capacity() * sizeof(ReplayWindow); }

 private:
  Sealer frame_, payload_;
  uint32_t rank_;
  // Random at the start of each life: a member restarted into the same
  // epoch (a static group file) never repeats a nonce of its earlier life.
  uint64_t next_counter_;
  std::vector<ReplayWindow> windows_;  // per sender
};

}  // namespace lanecast::engine::auth
