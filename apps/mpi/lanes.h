// Which lanes this rank's groups use. Named by the user - LANECAST_MPI_LANES
// (lanes as a group file writes them), LANECAST_MPI_IFACE (interfaces, an
// af_packet lane each) or a group file's [[member]] of this world rank - or
// found: an InfiniBand / RoCE adapter port that is up (verbs lanes need no
// privilege), else the host's one usable Ethernet interface, else among
// several the one whose subnet holds most of the other ranks' addresses -
// the interface that carries MPI's own traffic to its peers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "apps/mpi/settings.h"

namespace lanecast::mpi {

// This host's IPv4 addresses on usable interfaces, as every rank sends them
// to every other (PMPI_Allgather) for the choice among several interfaces.
struct HostAddresses {
  static constexpr uint32_t kMax = 8;
  uint32_t count = 0;
  struct Net {
    uint32_t addr = 0, mask = 0;  // network byte order
  } nets[kMax];
};
HostAddresses host_addresses();

// Ways to run this rank's lanes, the preferred first: each a lane list as
// a group's member names it (DPDK devargs or verbs:DEVICE:PORT). Empty, with
// `error` saying why, when none can be found.
struct LaneChoice {
  std::vector<std::vector<std::string>> candidates;
  std::string error;
};
LaneChoice lane_candidates(const HostSettings& h, int world_rank, const std::vector<HostAddresses>& everyone);

// "verbs" or "ethernet": ranks of one job must agree.
std::string lane_kind(const std::vector<std::string>& lanes);
// "af_packet on v0", "verbs:mlx5_0:1": for messages.
std::string describe_lanes(const std::vector<std::string>& lanes);
// `lanes` with each DPDK port's name made new ("net_af_packet0,iface=v0" ->
// "net_af_packet7,iface=v0"): a process opens each name once at a time, and
// every communicator's group opens ports of its own. *next counts up.
std::vector<std::string> renamed(const std::vector<std::string>& lanes, uint32_t* next);

}  // namespace lanecast::mpi
