#include "apps/testbed/testbed_command.h"

#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>

#include "apps/common/options.h"
#include "apps/common/progress_line.h"
#include "apps/common/stop_signals.h"
#include "apps/testbed/tc_counters.h"
#include "apps/testbed/testbed_build.h"
#include "apps/testbed/testbed_spec.h"

namespace lanecast::apps {
namespace {

const char* kUsage =
    "usage: lanecast testbed up N [--lanes 1|2] [--rate MBIT] [--mtu M] [--name NAME]\n"
    "       lanecast testbed down [--name NAME]\n"
    "       lanecast testbed status [--name NAME]\n"
    "\n"
    "A shaped testbed of N nodes on this machine, one network namespace each:\n"
    "what a cluster of N hosts on one switch looks like to lanecast and to MPI.\n"
    "\n"
    "  NAMEn0..NAMEn(N-1)  a node each: veth v0 (MAC 02:00:00:01:hh:ll with hhll = I,\n"
    "                      IPv4 10.78.0.(I+1)/24 for TCP programs such as MPI);\n"
    "                      with --lanes 2 also w0, the same MAC, on a second switch\n"
    "                      (two NICs on two switches: lane k of every node on bridge k)\n"
    "  NAMEs               the switches: bridge br0 with ports b0..b(N-1) facing the\n"
    "                      nodes and bp0, bp1; bridge br1 with c0..c(N-1) for lane 1\n"
    "  NAMEp               a probe pair p0, p1 (02:00:00:02:00:0x) on br0, to measure\n"
    "                      the line rate beside a run (tests/bench/link_probe)\n"
    "\n"
    "Every link is shaped both ways by a tbf root qdisc - the node's uplink on v0/w0,\n"
    "the switch's downlink on bI/cI - at the rate, with a burst of 400 us of it (at\n"
    "least two frames). A switch port queues 5 ms; a node's uplink queues what a host\n"
    "NIC does, --uplink-queue frames (txqueuelen; 0: 5 ms like the switch), so TCP\n"
    "backs off in its own queue as on a host. MTU M on every interface; IPv6 off in\n"
    "every namespace; the bridges hand no frame to iptables (br_netfilter). `up`\n"
    "removes what it built when a step fails or on SIGINT, SIGTERM or SIGPIPE; `down`\n"
    "removes every namespace of NAME; `status` lists them with each tbf's counters.\n"
    "Needs root and iproute2 (ip, tc). `lanecast bench --testbed N` builds one for a\n"
    "run and starts a member process in every node.\n"
    "Exit status: 0 done, 1 status found no such testbed, 2 bad usage or not root,\n"
    "3 an ip or tc command failed (it is named, with what it said).\n"
    "\n";

OptionTable make_table(testbed::TestbedSpec& s, bool& quiet) {
  OptionTable t;
  t.add({"lanes", "L", "1", "up: lanes per node, a veth and a switch each (1..2)",
         [&](std::string_view v) { s.lanes = static_cast<uint32_t>(parse_uint(v, "--lanes", 1000)); }});
  t.add({"rate", "MBIT", "200", "up: every link's rate in Mbit/s, both ways (1..100000)",
         [&](std::string_view v) { s.rate_mbit = static_cast<uint32_t>(parse_uint(v, "--rate", 1'000'000)); }});
  t.add({"mtu", "M", "1500", "up: MTU of every interface (576..9000)",
         [&](std::string_view v) { s.mtu = static_cast<uint32_t>(parse_uint(v, "--mtu", 1'000'000)); }});
  t.add({"uplink-queue", "FRAMES", std::to_string(testbed::kUplinkQueueFrames),
         "up: frames a node's uplink queues before it drops, as a host NIC's txqueuelen (0..100000; 0: 5 ms, as a "
         "switch port)",
         [&](std::string_view v) { s.uplink_queue = static_cast<uint32_t>(parse_uint(v, "--uplink-queue", 1'000'000)); }});
  t.add({"name", "NAME", testbed::kDefaultName,
         "the testbed's name, the prefix of its namespaces: a lowercase letter and up to 8 letters or digits",
         [&](std::string_view v) { s.name = std::string(v); }});
  t.add({"quiet", "", "", "up: no progress line on stderr while the nodes are made",
         [&](std::string_view) { quiet = true; }});
  return t;
}

std::string summary(const testbed::TestbedSpec& s) {
  const uint32_t last = s.nodes - 1;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "testbed %s: %u nodes (%s..%s, v0%s, %s-%u), switch %s, probe %s; tbf %u Mbit/s burst %u B "
                "both ways, %s; MTU %u",
                s.name.c_str(), s.nodes, testbed::node_ns(s.name, 0).c_str(), testbed::node_ns(s.name, last).c_str(),
                s.lanes == 2 ? " and w0 on a second switch" : "", testbed::node_ipv4(0).c_str(), last + 1,
                testbed::switch_ns(s.name).c_str(), testbed::probe_ns(s.name).c_str(), s.rate_mbit,
                testbed::burst_bytes(s), testbed::queues_text(s).c_str(), s.mtu);
  return buf;
}

int status(const std::string& name) {
  const std::vector<std::string> there = testbed::namespaces_of(name);
  if (there.empty()) {
    std::printf("testbed %s: not up (no namespace %sn*, %s or %s)\n", name.c_str(), name.c_str(),
                testbed::switch_ns(name).c_str(), testbed::probe_ns(name).c_str());
    return 1;
  }
  std::printf("testbed %s: %zu namespaces; every tbf, bytes and packets it sent since it was made\n", name.c_str(),
              there.size());
  std::printf("%-12s %-5s %9s %8s %6s %14s %10s %9s %11s\n", "namespace", "dev", "rate", "burst", "queue", "sent_bytes",
              "packets", "dropped", "overlimits");
  for (const std::string& ns : there)
    for (const testbed::QdiscCounters& q : testbed::read_tbf(ns))
      std::printf("%-12s %-5s %9s %8s %6s %14" PRIu64 " %10" PRIu64 " %9" PRIu64 " %11" PRIu64 "\n", ns.c_str(),
                  q.dev.c_str(), q.rate.c_str(), q.burst.c_str(), q.latency.c_str(), q.bytes, q.packets, q.dropped,
                  q.overlimits);
  return 0;
}

}  // namespace

int testbed_main(int argc, char** argv) {
  testbed::TestbedSpec spec;
  bool quiet = false;
  OptionTable table = make_table(spec, quiet);
  const std::string_view cmd = argc > 1 ? argv[1] : "";
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::printf("%soptions:\n%s", kUsage, table.help().c_str());
    return 0;
  }
  if (cmd != "up" && cmd != "down" && cmd != "status")
    throw UsageError(cmd.empty() ? "say up N, down or status (see lanecast testbed --help)"
                                 : "unknown subcommand '" + std::string(cmd) + "': up N, down or status");
  int first = 2;
  const bool help_next = argc > 2 && (std::string_view(argv[2]) == "--help" || std::string_view(argv[2]) == "-h");
  if (cmd == "up" && !help_next) {
    if (argc < 3 || std::string_view(argv[2]).substr(0, 2) == "--")
      throw UsageError("up needs the number of nodes: lanecast testbed up N");
    spec.nodes = static_cast<uint32_t>(parse_uint(argv[2], "N", 1'000'000));
    first = 3;
  }
  if (table.parse(argc, argv, first)) {
    std::printf("%soptions:\n%s", kUsage, table.help().c_str());
    return 0;
  }
  if (cmd != "up")
    for (const char* o : {"lanes", "rate", "mtu"})
      if (table.given(o)) throw UsageError("--" + std::string(o) + " applies to up only");
  testbed::check_name(spec.name);
  if (cmd == "up") testbed::check(spec);
  testbed::require_root(std::string(cmd).c_str());

  if (cmd == "down") {
    const size_t n = testbed::down(spec.name);
    std::printf("testbed %s: %s\n", spec.name.c_str(),
                n == 0 ? "nothing to remove" : ("removed " + std::to_string(n) + " namespaces").c_str());
    return 0;
  }
  if (cmd == "status") return status(spec.name);
  const StopSignals stop;  // SIGINT/SIGTERM while building: up removes what it built
  {
    ProgressLine progress(quiet);
    testbed::up(spec, [&](uint32_t node) {
      progress.show("lanecast testbed: node " + std::to_string(node + 1) + " of " + std::to_string(spec.nodes) + " made");
    });
    progress.clear();
  }
  std::printf("%s\n", summary(spec).c_str());
  return 0;
}

}  // namespace lanecast::apps
