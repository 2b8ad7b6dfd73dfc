// lanecast::pmix_rank() (lanecast/lanecast.h): the rank a PMIx launcher gave
// this process, read where PMIx_Init itself reads it, without connecting.
// Needs no libpmix, so a build without PMIx still tells a launched process
// its rank (and then refuses the join, saying why).
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "lanecast/lanecast.h"

namespace lanecast {

std::optional<Rank> pmix_rank() {
  // A launcher's PMIx server (PMIx_server_setup_fork) sets both in the
  // environment of every process it starts.
  const char* rank = std::getenv("PMIX_RANK");
  if (rank == nullptr || std::getenv("PMIX_NAMESPACE") == nullptr) return std::nullopt;
  const std::string s(rank);
  uint64_t v = 0;
  bool ok = !s.empty() && s.size() <= 10;
  for (char c : s) {
    ok = ok && c >= '0' && c <= '9';
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || v >= kNoRank)
    throw std::runtime_error("PMIX_RANK='" + s + "' in the environment is not a rank");
  return static_cast<Rank>(v);
}

}  // namespace lanecast
