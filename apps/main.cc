// The lanecast command: one binary, one subcommand per job.
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string_view>

#include "apps/bench/bench_command.h"
#include "apps/common/options.h"
#include "apps/common/stop_signals.h"
#include "apps/daemon/daemon_command.h"
#include "apps/key/key_command.h"
#include "apps/plan/plan_command.h"
#include "apps/replay/replay_command.h"
#include "apps/run/run_command.h"
#include "apps/testbed/testbed_command.h"
#include "apps/tune/tune_command.h"

namespace {

const char* kHelp =
    "lanecast - kernel-bypass broadcast engine\n"
    "\n"
    "usage: lanecast <command> [options]     (lanecast <command> --help for its options)\n"
    "\n"
    "commands:\n"
    "  bench     broadcast latency/bandwidth among N members on the in-process fabric\n"
    "            (DPDK ring ports + emulated switch with rate, latency and loss)\n"
    "  run       this process as one member of a group file's group (one member per\n"
    "            process): find the others, broadcast, check every byte\n"
    "  plan      predict a broadcast's time on a model network (the simulator runs the\n"
    "            same algorithm machines): per-rank finish times, bytes and peers\n"
    "  tune      measure every algorithm where the group runs (bench) and write the\n"
    "            rules --algo auto follows (--auto-rules FILE, auto_rules in a group file)\n"
    "  daemon    the appliance: this host's member of a group, serving local\n"
    "            applications through shared memory, UDP feeds in and out\n"
    "  stat      a daemon's counters, live\n"
    "  replay    a capture (pcap, pcapng) to every member as a stream, paced against\n"
    "            absolute time; every member's deliveries checked, recorded to pcap\n"
    "  record    this process as a member, writing what it delivers to a pcap file\n"
    "  key       --new FILE | --fingerprint FILE: a group key, with which every frame\n"
    "            of a group is sealed (docs/security.md)\n"
    "  testbed   up|down|status: a shaped testbed of network namespaces, one per node\n"
    "            (veths to Linux bridges, tbf on every link; root); `bench --testbed N`\n"
    "            runs a member process in each\n"
    "  help      this text (--version: the version)\n"
    "\n"
    "Runs without hugepages and without root on the in-process fabric.\n"
    "Exit status: 0 success, 1 a broadcast failed or was not verified, 2 bad usage,\n"
    "3 the engine (or a command it ran) could not start; 128+S when stopped by\n"
    "signal S after undoing what it built.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 ||
      std::strcmp(argv[1], "help") == 0) {
    std::fputs(kHelp, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0) {
    std::printf("lanecast %s\n", LANECAST_VERSION);
    return 0;
  }
  const std::string_view cmd = argv[1];
  try {
    if (cmd == "bench") return lanecast::apps::bench_main(argc - 1, argv + 1);
    if (cmd == "plan") return lanecast::apps::plan_main(argc - 1, argv + 1);
    if (cmd == "run") return lanecast::apps::run_main(argc - 1, argv + 1);
    if (cmd == "daemon") return lanecast::apps::daemon_main(argc - 1, argv + 1);
    if (cmd == "stat") return lanecast::apps::stat_main(argc - 1, argv + 1);
    if (cmd == "replay") return lanecast::apps::replay_main(argc - 1, argv + 1);
    if (cmd == "record") return lanecast::apps::record_main(argc - 1, argv + 1);
    if (cmd == "testbed") return lanecast::apps::testbed_main(argc - 1, argv + 1);
    if (cmd == "key") return lanecast::apps::key_main(argc - 1, argv + 1);
    if (cmd == "tune") return lanecast::apps::tune_main(argc - 1, argv + 1);
    std::fprintf(stderr, "lanecast: unknown command '%s' (see lanecast --help)\n", argv[1]);
    return 2;
  } catch (const lanecast::apps::Stopped& e) {
    // What it built is gone already: the destructors ran on the way here.
    std::fprintf(stderr, "lanecast %s: %s\n", argv[1], e.what());
    return 128 + e.signal;
  } catch (const lanecast::apps::UsageError& e) {
    std::fprintf(stderr, "lanecast %s: %s\n", argv[1], e.what());
    return 2;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "lanecast %s: %s\n", argv[1], e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "lanecast %s: %s\n", argv[1], e.what());
    return 3;
  }
}
