// Lane strings that name verbs ports: parsing and the rules a group of them
// follows. Opening one is lane_port_verbs.cc's (or, in a build without the
// verbs port, lane_port_no_verbs.cc's refusal).
#include "engine/group/lane_port.h"

#include <stdexcept>

namespace lanecast::engine {

namespace {

constexpr std::string_view kPrefix = "verbs:";
const char* const kForm = "verbs:DEVICE:PORT, e.g. verbs:mlx5_0:1 (ibv_devices lists the devices)";

bool device_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

}  // namespace

std::optional<VerbsLane> parse_verbs_lane(const std::string& lane) {
  if (lane.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  const std::string rest = lane.substr(kPrefix.size());
  const size_t colon = rest.find(':');
  VerbsLane v;
  v.device = rest.substr(0, colon);
  if (v.device.empty() || v.device.size() > 63)
    throw std::invalid_argument("lane '" + lane + "' names no device; allowed: " + kForm);
  for (char c : v.device)
    if (!device_char(c)) throw std::invalid_argument("lane '" + lane + "': bad device name; allowed: " + kForm);
  if (colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    unsigned n = 0;
    bool digits = !port.empty() && port.size() <= 3;
    for (char c : port) digits = digits && c >= '0' && c <= '9', n = n * 10 + static_cast<unsigned>(c - '0');
    if (!digits || n < 1 || n > 255)
      throw std::invalid_argument("lane '" + lane + "': the port must be 1..255; allowed: " + kForm);
    v.port_num = static_cast<uint8_t>(n);
  }
  return v;
}

std::optional<VerbsLane> member_verbs_lane(const std::vector<std::string>& lanes) {
  std::optional<VerbsLane> first;
  size_t verbs = 0;
  for (const std::string& l : lanes) {
    const std::optional<VerbsLane> v = parse_verbs_lane(l);
    if (!v) continue;
    ++verbs;
    if (first && !(*first == *v))
      throw std::invalid_argument("lanes '" + lanes[0] + "' and '" + l +
                                  "' name two adapter ports; a member's verbs lanes are queue pairs on one port");
    first = v;
  }
  if (verbs != 0 && verbs != lanes.size())
    throw std::invalid_argument("a member's lanes are all verbs ports or all DPDK devargs, not both");
  return first;
}

std::string verbs_group_refusal(const std::string& bootstrap, bool keyed) {
  if (!verbs_port_built())
    return "this lanecast was built without the verbs port (install libibverbs-dev and librdmacm-dev, then "
           "meson setup --reconfigure -Dverbs=enabled)";
  if (bootstrap == "static")
    return "a group of verbs lanes forms by bootstrap \"pmix\", \"discovery\" or \"exchange\", not \"static\": "
           "queue pair numbers exist only once the port is open, so no file can list them";
  if (bootstrap == "discovery" && keyed)
    return "a group with a key on verbs lanes forms by bootstrap \"pmix\": a hello's source queue pair is not under "
           "its seal on verbs, so a hello sent again from another queue pair could teach a forged address";
  return "";
}

}  // namespace lanecast::engine
