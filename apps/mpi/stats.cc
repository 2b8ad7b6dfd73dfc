#include "apps/mpi/stats.h"

#include <unistd.h>

namespace lanecast::mpi {

lanecast_mpi_stats Stats::read() const {
  const auto get = [](const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); };
  lanecast_mpi_stats s{};
  s.carried = get(carried);
  s.carried_bytes = get(carried_bytes);
  s.packed = get(packed);
  s.fell_back_off = get(off);
  s.fell_back_small = get(small);
  s.fell_back_comm = get(comm);
  s.fell_back_group = get(group);
  s.fell_back = s.fell_back_off + s.fell_back_small + s.fell_back_comm + s.fell_back_group;
  s.groups_formed = get(formed);
  s.groups_refused = get(refused);
  s.enabled = enabled.load(std::memory_order_relaxed);
  s.world_rank = world_rank.load(std::memory_order_relaxed);
  return s;
}

std::string Stats::line(int world_size, const std::string& lanes) const {
  const lanecast_mpi_stats s = read();
  const auto n = [](uint64_t v) { return std::to_string(v); };
  return "rank " + std::to_string(s.world_rank) + " of " + std::to_string(world_size) + ": carried " + n(s.carried) +
         " (" + n(s.carried_bytes) + " bytes, " + n(s.packed) + " packed), fell back " + n(s.fell_back) + " (off " +
         n(s.fell_back_off) + ", small " + n(s.fell_back_small) + ", communicator " + n(s.fell_back_comm) +
         ", no group " + n(s.fell_back_group) + "); groups " + n(s.groups_formed) + " formed, " + n(s.groups_refused) +
         " refused" + (lanes.empty() ? "" : "; lanes " + lanes);
}

void say(const std::string& text) {
  const std::string line = "lanecast-mpi: " + text + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
}

}  // namespace lanecast::mpi
