// Frames of a peer's first operation that reach a member while it still
// discovers its group (a member done first has begun): kept, up to
// kEarlyFramesKept, for the member's node (Bootstrap::take_early_frames).
// Dropping them cost that member a retransmission timeout - and, finding
// its rate, a lane cut to 70 Mbit/s out of slow start - at every start.
//
// A peer is done only once this member has told it, in a hello, that it
// heard every rank (wire_discovery.cc), so a genuine early frame comes
// when this member knows the formation: every member's incarnation, and so
// the epoch and, with a key, the formation's keys. Only frames of that
// formation are kept - its epoch, and with a key a frame seal that opens
// under its keys (checked here with a window of its own; the node opens
// each again with its own) - so frames forged or sent again before the
// group formed cannot take the slots from genuine ones. Without a key a
// forger who read the epoch off the wire still can: genuine frames over
// the limit are dropped and sent again by their channels.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "drivers/port.h"
#include "engine/auth/frame_auth.h"
#include "engine/bootstrap/endpoints.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::bootstrap {

// A first operation's frames from every peer: a window (128) from each of a
// few, more than a chain or tree sends any member before it answers.
inline constexpr uint32_t kEarlyFramesKept = 512;

class EarlyFrames {
 public:
  EarlyFrames(const GroupSpec& spec, const drivers::Port& port, uint32_t me);
  ~EarlyFrames();

  // The formation this member knows now (every rank heard), or none
  // (`table` null): frames come for it only once it is known.
  void know(const EndpointTable* table);
  // A frame of the group other than a hello, from another rank: kept (true,
  // the caller lets go of it) or refused (false: the caller frees it).
  bool offer(rte_mbuf* m, const wire::Parsed& p, uint16_t lane);

  std::vector<Bootstrap::EarlyFrame> take() { return std::exchange(kept_, {}); }
  // "N early frames kept for the node, N refused, N dropped", or empty.
  std::string steps() const;

 private:
  GroupSpec spec_;
  const drivers::Port& port_;
  uint32_t me_;
  bool known_ = false;
  uint32_t epoch_ = 0;
  std::unique_ptr<auth::FrameAuth> auth_;  // with a key: the formation's
  std::vector<Bootstrap::EarlyFrame> kept_;
  uint64_t kept_count_ = 0;
  uint64_t refused_ = 0;  // not of the formation known, or none known yet
  uint64_t dropped_ = 0;  // over kEarlyFramesKept: sent again by their channels
};

}  // namespace lanecast::engine::bootstrap
