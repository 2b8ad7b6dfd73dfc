// A lane string that names a verbs port: "verbs:DEVICE:PORT" (an InfiniBand
// or RoCE adapter's port, driven through rdma-core: drivers/verbs/), beside
// DPDK devargs. All of a member's lanes then name the same adapter port - one
// UD queue pair per lane - and the group forms by pmix or discovery: queue
// pair numbers exist only once the port is open, so no file can hold them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "drivers/port.h"

struct rte_mempool;

namespace lanecast::engine {

struct VerbsLane {
  std::string device;    // e.g. "mlx5_0"
  uint8_t port_num = 1;  // the adapter's port, 1..255

  bool operator==(const VerbsLane&) const = default;
};

// nullopt unless `lane` starts with "verbs:"; throws std::invalid_argument
// (saying what is allowed) for a malformed one.
std::optional<VerbsLane> parse_verbs_lane(const std::string& lane);

// The adapter port a member's lanes name, nullopt if none names one; throws
// std::invalid_argument when they mix verbs and DPDK or name two ports.
std::optional<VerbsLane> member_verbs_lane(const std::vector<std::string>& lanes);

// Why a group whose members have verbs lanes cannot form this way ("" if
// it can): a lanecast built without the verbs port, the static bootstrap, or
// discovery with a key (a hello's source queue pair is not under its seal on
// verbs, so a replayed hello could teach another; pmix carries addresses).
std::string verbs_group_refusal(const std::string& bootstrap, bool keyed);

// Discovery hears each lane of a member on its own (one QPN per hello):
// makes the lanes' addresses one address holding every lane's QPN, as the
// member's port names itself. "" or why they do not belong together.
std::string merge_verbs_lanes(std::vector<drivers::PeerAddress>* lanes);

// An address as `lanecast run --show-endpoints` prints it: a UD endpoint's
// GID, LID and QPNs, anything else as drivers::format_address does.
std::string describe_lane_address(const drivers::PeerAddress& a);

// Built with the verbs port (lane_port_verbs.cc) or not (lane_port_no_verbs.cc).
bool verbs_port_built();
// The adapter port's active MTU: the largest datagram after its headers.
// Opens the device for the question; throws std::runtime_error (no device,
// port down, ...) or std::invalid_argument (not built).
uint32_t verbs_mtu(const VerbsLane& lane);
// Receive buffers the port keeps posted for `lanes` lanes.
uint32_t verbs_rx_buffers_held(uint16_t lanes);
// Opens it: one UD queue pair per lane, receiving into `rx_pool`, datagrams
// of at most `max_datagram` bytes (lanecast's headers and a segment). With
// `capabilities`, says what the adapter reported (for --show-placement).
std::unique_ptr<drivers::Port> open_verbs_port(const VerbsLane& lane, uint16_t lanes, rte_mempool* rx_pool,
                                               uint32_t max_datagram, std::string* capabilities = nullptr);

}  // namespace lanecast::engine
