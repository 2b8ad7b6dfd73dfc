// What liblanecast-mpi runs with, read from the environment (docs/mpi.md
// lists every variable, its default and range). Two kinds:
//
// - the job's (JobSettings): what every rank must do alike - whether
//   lanecast carries anything, from which size, the algorithm, the group
//   settings. A rank-local choice that differed would hang the job, so only
//   world rank 0 reads them and broadcasts the bytes to all (a fixed-size,
//   trivially copyable struct); what the other ranks' environments say of
//   them is not read.
// - the host's (HostSettings): which interfaces this rank's lanes use, how
//   much memory its engine takes, whether it prints its counters - each rank
//   its own.
//
// A value that does not parse never aborts the job: the job's make lanecast
// step aside for the whole job (rank 0 says why, once); a host's make that
// rank's start fail, which the job then agrees on (job.h).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "lanecast/group_spec.h"

namespace lanecast::mpi {

struct JobSettings {
  bool enabled = true;                 // LANECAST_MPI: on | off
  char error[192] = {};                // why rank 0's settings were refused ("" when they were not)
  uint64_t min_bytes = 0;              // LANECAST_MPI_MIN_BYTES: smaller broadcasts go to MPI
  uint64_t max_message = 8u << 20;     // LANECAST_MPI_MAX_MESSAGE: a group's message limit (pools); larger go in pieces
  double timeout_ms = kMaxTimeoutMs;   // LANECAST_MPI_TIMEOUT_MS: the peer timeout
  char algo[32] = "auto";              // LANECAST_MPI_ALGO
  char auto_rules[256] = {};           // LANECAST_MPI_AUTO_RULES: a `lanecast tune` rules file, read on every rank
  double rate_mbit = 0;                // LANECAST_MPI_RATE_MBIT: each lane's ceiling (0: found from the network)
  uint32_t overhead_bytes = 24;        // LANECAST_MPI_PORT_OVERHEAD: bytes the link adds to a frame (0 under tbf)
  uint32_t segment = 0;                // LANECAST_MPI_SEGMENT: 0, from the MTU
  uint32_t window = 128;               // LANECAST_MPI_WINDOW: frames in flight per peer
  bool multicast = true;               // LANECAST_MPI_MULTICAST: 1 | 0
  uint32_t look_us = 1000;             // LANECAST_MPI_LOOK_US: between calls, the engine looks this often
};
static_assert(std::is_trivially_copyable_v<JobSettings>, "JobSettings travel as bytes (PMPI_Bcast)");

struct HostSettings {
  std::string lanes;       // LANECAST_MPI_LANES: lanes as a group file's (devargs or verbs:DEV:PORT), ';' between
  std::string ifaces;      // LANECAST_MPI_IFACE: interface names, ',' between (one lane each, af_packet)
  std::string group_file;  // LANECAST_MPI_GROUP_FILE: a group file whose [[member]] of this world rank names the lanes
  bool bypass_qdisc = false;  // LANECAST_MPI_QDISC_BYPASS: af_packet lanes skip the interface's qdisc
  uint32_t memory_mb = 0;     // LANECAST_MPI_MEMORY_MB: the engine's memory (0: from the message limit)
  uint32_t groups = 4;        // LANECAST_MPI_GROUPS: communicators with a group at once the memory is sized for
  // LANECAST_MPI_STATS: 1, one line of counters on stderr at MPI_Finalize;
  // 2, also a line per group alive then with its member's counters (drops
  // by reason, resends, timeouts) and its port's.
  int stats = 0;
  // LANECAST_MPI_LOG: DPDK's log level. Its errors are lanecast-mpi's to
  // tell (one line, naming the cause): DPDK's own lines only on request.
  std::string log_level = "critical";
  std::string error;          // what did not parse ("" when all did)
};

// World rank 0's view: the environment (and a group file's [group] table
// under it: LANECAST_MPI_GROUP_FILE). Never throws: a value that does not
// parse disables lanecast and says why in `error`.
JobSettings read_job_settings();
HostSettings read_host_settings();

// The group settings a communicator's group runs with (members, lanes and
// the exchange are the caller's).
GroupSpec group_spec_of(const JobSettings& s);

}  // namespace lanecast::mpi
