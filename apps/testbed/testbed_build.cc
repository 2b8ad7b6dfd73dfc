#include "apps/testbed/testbed_build.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "apps/common/options.h"
#include "apps/common/stop_signals.h"
#include "apps/common/subprocess.h"

namespace lanecast::apps::testbed {
namespace {

// The steps of `up`, each one command; remembers the namespaces it made so
// a failure can remove exactly those.
class Builder {
 public:
  Builder(const TestbedSpec& s, const NodeMade& node_made) : s_(s), node_made_(node_made) {}

  void build() {
    // tbf may be a module; where it is built in (or modprobe is missing) the
    // first `tc qdisc replace` says what is wrong.
    try {
      run_command({"modprobe", "-q", "sch_tbf"}, std::chrono::seconds(10));
    } catch (const CommandFailed&) {
    }
    const std::string sw = switch_ns(s_.name);
    make_ns(sw);
    // A switch forwards frames; it does not filter them. Where br_netfilter
    // is loaded (Docker loads it), every IP frame a bridge forwards passes
    // the host's iptables - TCP's frames (Open MPI, iperf3) pay for it,
    // lanecast's raw frames do not. Off in this namespace only; -e: a
    // kernel without br_netfilter has no such keys, and nothing to turn off.
    run({"ip", "netns", "exec", sw, "sysctl", "-q", "-e", "-w", "net.bridge.bridge-nf-call-iptables=0",
         "net.bridge.bridge-nf-call-ip6tables=0", "net.bridge.bridge-nf-call-arptables=0"});
    for (uint32_t lane = 0; lane < s_.lanes; ++lane) {
      run({"ip", "-n", sw, "link", "add", bridge(lane), "type", "bridge"});
      run({"ip", "-n", sw, "link", "set", bridge(lane), "mtu", mtu(), "up"});
    }
    for (uint32_t i = 0; i < s_.nodes; ++i) {
      const std::string ns = node_ns(s_.name, i);
      make_ns(ns);
      for (uint32_t lane = 0; lane < s_.lanes; ++lane)
        link(ns, node_iface(lane), switch_port(lane, i), node_mac(i), bridge(lane));
      run({"ip", "-n", ns, "addr", "add", node_ipv4(i) + "/24", "dev", node_iface(0)});
      if (node_made_) node_made_(i);
    }
    const std::string probe = probe_ns(s_.name);
    make_ns(probe);
    link(probe, "p0", "bp0", probe_mac(0), bridge(0));
    link(probe, "p1", "bp1", probe_mac(1), bridge(0));
  }

  // Removes what build() made, the last first; says on stderr what would not go.
  void undo() noexcept {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
      try {
        run_checked({"ip", "netns", "del", *it});
      } catch (const std::exception& e) {
        std::fprintf(stderr, "lanecast testbed: %s\n", e.what());
      }
    }
    made_.clear();
  }

 private:
  // One step; a stop signal is taken between steps, never inside one.
  void run(const Argv& argv) {
    StopSignals::throw_if_stopped();
    run_checked(argv);
  }

  std::string mtu() const { return std::to_string(s_.mtu); }

  void make_ns(const std::string& ns) {
    run({"ip", "netns", "add", ns});
    made_.push_back(ns);
    // Before any interface exists, so each one starts without IPv6 (no
    // router solicitations or neighbour discovery on the measured links).
    run({"ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1",
         "net.ipv6.conf.all.disable_ipv6=1"});
    run({"ip", "-n", ns, "link", "set", "lo", "up"});
  }

  // A veth from namespace `ns` (end `iface`, address `mac`) to the switch's
  // `port` on `br`, tbf on both ends.
  void link(const std::string& ns, const std::string& iface, const std::string& port, const std::string& mac,
            const std::string& br) {
    const std::string sw = switch_ns(s_.name);
    run({"ip", "-n", ns, "link", "add", iface, "address", mac, "mtu", mtu(), "type", "veth", "peer", "name", port,
         "netns", sw});
    run({"ip", "-n", sw, "link", "set", port, "mtu", mtu(), "master", br, "up"});
    run({"ip", "-n", ns, "link", "set", iface, "up"});
    shape(ns, iface, /*uplink=*/true);
    shape(sw, port, /*uplink=*/false);
  }

  // The uplink's queue in frames (a host's), the switch port's in time.
  void shape(const std::string& ns, const std::string& dev, bool uplink) {
    std::vector<std::string> cmd = {"tc", "-n", ns, "qdisc", "replace", "dev", dev, "root", "tbf",
                                    "rate", std::to_string(s_.rate_mbit) + "mbit", "burst", std::to_string(burst_bytes(s_))};
    if (uplink && s_.uplink_queue > 0) cmd.insert(cmd.end(), {"limit", std::to_string(uplink_limit_bytes(s_))});
    else cmd.insert(cmd.end(), {"latency", std::to_string(kQueueMs) + "ms"});
    run(cmd);
  }

  const TestbedSpec& s_;
  const NodeMade& node_made_;
  std::vector<std::string> made_;
};

// Nodes by number, then the switch, then the probe.
int order(const std::string& name, const std::string& ns) {
  const std::string rest = ns.substr(name.size());
  if (rest == "s") return 1'000'000;
  if (rest == "p") return 1'000'001;
  return std::stoi(rest.substr(1));
}

}  // namespace

void require_root(const char* what) {
  if (::geteuid() != 0)
    throw UsageError(std::string(what) +
                     " needs root: it creates and enters network namespaces, veths, bridges and tbf qdiscs "
                     "(run it with sudo)");
}

std::vector<std::string> namespaces_of(const std::string& name) {
  std::istringstream list(run_checked({"ip", "netns", "list"}));
  std::vector<std::string> found;
  std::string line;
  while (std::getline(list, line)) {
    const std::string ns = line.substr(0, line.find(' '));  // "NAME (id: 3)"
    if (is_part_of(name, ns)) found.push_back(ns);
  }
  std::sort(found.begin(), found.end(),
            [&](const std::string& a, const std::string& b) { return order(name, a) < order(name, b); });
  return found;
}

void up(const TestbedSpec& s, const NodeMade& node_made) {
  check(s);
  const std::vector<std::string> there = namespaces_of(s.name);
  if (!there.empty())
    throw UsageError("testbed " + s.name + " is up already (" + there.front() + (there.size() > 1 ? ", ..." : "") +
                     "); remove it with: lanecast testbed down --name " + s.name);
  Builder b(s, node_made);
  try {
    b.build();
  } catch (...) {
    std::fprintf(stderr, "lanecast testbed: removing what was built of testbed %s\n", s.name.c_str());
    b.undo();
    throw;
  }
}

size_t down(const std::string& name) {
  check_name(name);
  const std::vector<std::string> there = namespaces_of(name);
  std::string failures;
  for (const std::string& ns : there) {
    try {
      run_checked({"ip", "netns", "del", ns});
    } catch (const CommandFailed& e) {
      failures += std::string(failures.empty() ? "" : "; ") + e.what();
    }
  }
  if (!failures.empty()) throw CommandFailed(failures);
  return there.size();
}

TestbedScope::TestbedScope(const TestbedSpec& s, const NodeMade& node_made) : spec_(s) { up(spec_, node_made); }

TestbedScope::~TestbedScope() {
  try {
    down(spec_.name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lanecast: removing testbed %s: %s\n", spec_.name.c_str(), e.what());
  }
}

}  // namespace lanecast::apps::testbed
