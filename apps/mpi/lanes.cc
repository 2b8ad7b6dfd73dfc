#include "apps/mpi/lanes.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <netpacket/packet.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "lanecast/lanecast.h"

namespace lanecast::mpi {
namespace {

// A kernel interface lanecast can run an af_packet lane on: up, not the
// loopback, Ethernet, with an IPv4 address (the network MPI itself uses).
struct Interface {
  std::string name;
  std::vector<HostAddresses::Net> nets;
};

std::vector<Interface> usable_interfaces() {
  ifaddrs* all = nullptr;
  if (getifaddrs(&all) != 0) return {};
  std::map<std::string, Interface> by_name;
  std::map<std::string, bool> ethernet;
  for (const ifaddrs* i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    const std::string name = i->ifa_name;
    if (i->ifa_addr->sa_family == AF_PACKET) {
      const auto* ll = reinterpret_cast<const sockaddr_ll*>(i->ifa_addr);
      ethernet[name] = ll->sll_hatype == ARPHRD_ETHER && ll->sll_halen == 6;
    } else if (i->ifa_addr->sa_family == AF_INET && i->ifa_netmask != nullptr) {
      Interface& f = by_name[name];
      f.name = name;
      f.nets.push_back({reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr.s_addr,
                        reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr});
    }
  }
  freeifaddrs(all);
  std::vector<Interface> out;
  for (auto& [name, f] : by_name)
    if (ethernet[name]) out.push_back(std::move(f));
  return out;
}

// Adapter ports whose state is ACTIVE, as verbs lanes ("verbs:mlx5_0:1").
std::vector<std::string> active_verbs_ports() {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path root = "/sys/class/infiniband";
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& dev : std::filesystem::directory_iterator(root, ec)) {
    for (const auto& port : std::filesystem::directory_iterator(dev.path() / "ports", ec)) {
      std::ifstream state(port.path() / "state");
      std::string line;
      if (std::getline(state, line) && line.find("ACTIVE") != std::string::npos)
        out.push_back("verbs:" + dev.path().filename().string() + ":" + port.path().filename().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t at = text.find(sep, from);
    std::string item = text.substr(from, at == std::string::npos ? std::string::npos : at - from);
    if (!item.empty()) out.push_back(item);
    if (at == std::string::npos) break;
    from = at + 1;
  }
  return out;
}

// How many other ranks have an address inside one of `f`'s networks.
int peers_reached(const Interface& f, int world_rank, const std::vector<HostAddresses>& everyone) {
  int n = 0;
  for (size_t r = 0; r < everyone.size(); ++r) {
    if (static_cast<int>(r) == world_rank) continue;
    bool reached = false;
    const HostAddresses& h = everyone[r];
    for (uint32_t i = 0; i < std::min(h.count, HostAddresses::kMax) && !reached; ++i)
      for (const HostAddresses::Net& mine : f.nets)
        reached = reached || ((h.nets[i].addr & mine.mask) == (mine.addr & mine.mask));
    n += reached;
  }
  return n;
}

std::string ethernet_lane(const std::string& iface, bool bypass_qdisc) {
  return af_packet_lane(iface, 0, bypass_qdisc);
}

}  // namespace

HostAddresses host_addresses() {
  HostAddresses h;
  for (const Interface& f : usable_interfaces())
    for (const HostAddresses::Net& n : f.nets)
      if (h.count < HostAddresses::kMax) h.nets[h.count++] = n;
  return h;
}

LaneChoice lane_candidates(const HostSettings& h, int world_rank, const std::vector<HostAddresses>& everyone) {
  LaneChoice c;
  try {
    if (!h.lanes.empty()) {
      c.candidates.push_back(split(h.lanes, ';'));
    } else if (!h.ifaces.empty()) {
      std::vector<std::string> lanes;
      for (const std::string& i : split(h.ifaces, ',')) lanes.push_back(ethernet_lane(i, h.bypass_qdisc));
      c.candidates.push_back(lanes);
    } else if (!h.group_file.empty()) {
      const GroupSpec g = load_group_file(h.group_file);
      if (world_rank < 0 || static_cast<size_t>(world_rank) >= g.members.size())
        throw std::invalid_argument(h.group_file + " has ranks 0.." + std::to_string(g.members.size() - 1) +
                                    ", not world rank " + std::to_string(world_rank));
      c.candidates.push_back(g.members[world_rank].lanes);
    } else {
      for (const std::string& v : active_verbs_ports()) c.candidates.push_back({v});
      const std::vector<Interface> ifs = usable_interfaces();
      if (ifs.size() == 1) {
        c.candidates.push_back({ethernet_lane(ifs[0].name, h.bypass_qdisc)});
      } else if (ifs.size() > 1) {
        std::string names;
        int best = 0, ties = 0;
        const Interface* pick = nullptr;
        for (const Interface& f : ifs) {
          names += (names.empty() ? "" : ", ") + f.name;
          const int n = peers_reached(f, world_rank, everyone);
          if (n > best) best = n, ties = 1, pick = &f;
          else if (n == best && n > 0) ++ties;
        }
        if (pick != nullptr && ties == 1) {
          c.candidates.push_back({ethernet_lane(pick->name, h.bypass_qdisc)});
        } else if (c.candidates.empty()) {
          c.error = "interfaces " + names + " are all usable and none reaches more of the other ranks: name one in "
                    "LANECAST_MPI_IFACE";
        }
      } else if (c.candidates.empty()) {
        c.error = "no usable interface (up, Ethernet, not the loopback, with an IPv4 address) and no adapter port "
                  "up: name the lanes in LANECAST_MPI_IFACE or LANECAST_MPI_LANES";
      }
    }
    for (const auto& lanes : c.candidates)
      if (lanes.empty() || lanes.size() > 4) throw std::invalid_argument("lanes: 1 .. 4 of them, not " + std::to_string(lanes.size()));
  } catch (const std::exception& e) {
    c.candidates.clear();
    c.error = e.what();
  }
  return c;
}

std::string lane_kind(const std::vector<std::string>& lanes) {
  return !lanes.empty() && lanes[0].rfind("verbs:", 0) == 0 ? "verbs" : "ethernet";
}

std::string describe_lanes(const std::vector<std::string>& lanes) {
  std::string out;
  for (const std::string& l : lanes) {
    std::string one = l;
    const size_t iface = l.find("iface=");
    if (l.rfind("net_af_packet", 0) == 0 && iface != std::string::npos)
      one = "af_packet on " + l.substr(iface + 6, l.find(',', iface) - iface - 6);
    else if (l.rfind("net_af_xdp", 0) == 0 && iface != std::string::npos)
      one = "af_xdp on " + l.substr(iface + 6, l.find(',', iface) - iface - 6);
    out += (out.empty() ? "" : " + ") + one;
  }
  return out;
}

std::vector<std::string> renamed(const std::vector<std::string>& lanes, uint32_t* next) {
  std::vector<std::string> out;
  for (const std::string& l : lanes) {
    if (l.rfind("net_", 0) != 0) {  // verbs:..., or a PCI device: opened as it is
      out.push_back(l);
      continue;
    }
    const size_t comma = l.find(',');
    std::string name = l.substr(0, comma);
    while (!name.empty() && name.back() >= '0' && name.back() <= '9') name.pop_back();
    out.push_back(name + std::to_string((*next)++) + (comma == std::string::npos ? "" : l.substr(comma)));
  }
  return out;
}

}  // namespace lanecast::mpi
