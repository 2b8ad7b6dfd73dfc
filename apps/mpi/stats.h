// liblanecast-mpi's counters: where each MPI_Bcast went, and why when it
// went to MPI. Read by lanecast_mpi_get_stats (lanecast/mpi.h) from any
// thread, and printed as one line at MPI_Finalize with LANECAST_MPI_STATS=1.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "lanecast/mpi.h"

namespace lanecast::mpi {

struct Stats {
  std::atomic<uint64_t> carried{0}, carried_bytes{0}, packed{0};
  std::atomic<uint64_t> off{0}, small{0}, comm{0}, group{0};
  std::atomic<uint64_t> formed{0}, refused{0};
  std::atomic<int32_t> enabled{0}, world_rank{0};

  static void add(std::atomic<uint64_t>& c, uint64_t n = 1) { c.fetch_add(n, std::memory_order_relaxed); }
  lanecast_mpi_stats read() const;
  // "lanecast-mpi: rank 3 of 8: carried 120 (1048576 bytes), fell back 4 (...)"
  std::string line(int world_size, const std::string& lanes) const;
};

// One line on stderr, "lanecast-mpi: " first, written at once (ranks share
// the terminal: lines of different ranks must not interleave).
void say(const std::string& text);

}  // namespace lanecast::mpi
