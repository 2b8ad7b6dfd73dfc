#include "engine/bootstrap/early_frames.h"

#include <rte_mbuf.h>

#include <utility>

#include "engine/auth/epoch_keys.h"

namespace lanecast::engine::bootstrap {

EarlyFrames::EarlyFrames(const GroupSpec& spec, const drivers::Port& port, uint32_t me)
    : spec_(spec), port_(port), me_(me) {}

EarlyFrames::~EarlyFrames() {
  for (const Bootstrap::EarlyFrame& f : kept_) rte_pktmbuf_free(f.frame);
}

void EarlyFrames::know(const EndpointTable* table) {
  known_ = table != nullptr;
  auth_.reset();
  if (!known_) return;
  epoch_ = epoch_of(spec_.id, table->members);
  if (!spec_.key) return;
  std::vector<uint64_t> lives;
  for (const Endpoint& e : table->members) lives.push_back(e.incarnation);
  const auth::EpochKeys keys = auth::derive_formation_keys(*spec_.key, spec_.id, epoch_, lives);
  auth_ = std::make_unique<auth::FrameAuth>(keys, me_, static_cast<uint32_t>(table->members.size()));
}

bool EarlyFrames::offer(rte_mbuf* m, const wire::Parsed& p, uint16_t lane) {
  if (p.src == me_) return false;
  if (!known_ || p.epoch != epoch_) {
    ++refused_;
    return false;
  }
  if (auth_ != nullptr) {
    const uint16_t link = port_.rx_link_header_bytes(), sealed = port_.sealed_link_bytes();
    if (!p.sealed || auth_->open_frame(rte_pktmbuf_mtod(m, const uint8_t*) + (link - sealed), sealed, p.seal_at,
                                       p.src) != auth::FrameAuth::Verdict::Ok) {
      ++refused_;
      return false;
    }
  }
  if (kept_.size() >= kEarlyFramesKept) {
    ++dropped_;
    return false;
  }
  kept_.push_back(Bootstrap::EarlyFrame{m, lane});
  ++kept_count_;
  return true;
}

std::string EarlyFrames::steps() const {
  if (kept_count_ + dropped_ + refused_ == 0) return {};
  std::string s = std::to_string(kept_count_) + " early frames kept for the node";
  if (refused_ > 0) s += ", " + std::to_string(refused_) + " refused (not of the formation)";
  if (dropped_ > 0) s += ", " + std::to_string(dropped_) + " dropped";
  return s;
}

}  // namespace lanecast::engine::bootstrap
