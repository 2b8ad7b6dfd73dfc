#include "apps/bench/bench_options.h"

#include <string_view>

#include "algos/registry.h"
#include "apps/common/fault_text.h"
#include "apps/common/group_member.h"
#include "engine/group/fault_keys.h"

namespace lanecast::apps {

OptionTable make_bench_table(BenchConfig& c) {
  OptionTable t;
  t.add({"nodes", "N", "8", "group size, root included (1..1024)",
         [&](std::string_view v) { c.nodes = static_cast<uint32_t>(parse_uint(v, "--nodes", 1024)); }});
  t.add({"algo", "NAME", "chain",
         "algorithm, 'auto' (chosen per size by rules), a list 'chain,bintree', or 'all' for every one in turn",
         [&](std::string_view v) { c.algo = std::string(v); }});
  t.add({"sizes", "LIST", "1:16M",
         "message sizes: 'a,b,c' and/or 'lo:hi' (powers of two); K/M/G suffixes",
         [&](std::string_view v) {
           c.sizes = parse_size_list(v, "--sizes");
           c.sizes_text = std::string(v);
         }});
  t.add({"iters", "K", "10", "timed broadcasts per size",
         [&](std::string_view v) { c.iters = static_cast<uint32_t>(parse_uint(v, "--iters", 1'000'000)); }});
  t.add({"warmup", "W", "2", "untimed broadcasts per size before the timed ones",
         [&](std::string_view v) { c.warmup = static_cast<uint32_t>(parse_uint(v, "--warmup", 1'000'000)); }});
  t.add({"root", "R", "0", "rank that broadcasts",
         [&](std::string_view v) { c.root = static_cast<uint32_t>(parse_uint(v, "--root", UINT32_MAX)); }});
  t.add({"segment", "BYTES", "auto",
         "payload bytes per frame (1..9000); auto: 1400 on the fabric, from the ports' MTU (at most 8K) on --ports",
         [&](std::string_view v) {
           c.segment = v == "auto" ? 0 : static_cast<uint32_t>(parse_size(v, "--segment"));
           if (v != "auto" && c.segment == 0) throw UsageError("--segment must be 1..9000 bytes or auto");
         }});
  t.add({"rate", "MBIT", "10000", "fabric link rate in Mbit/s; 0 = unlimited (--testbed: the links' tbf rate, default 200)",
         [&](std::string_view v) { c.rate_mbit = parse_double(v, "--rate", 0, 1e7); }});
  t.add({"latency", "US", "0", "fabric one-way link latency in microseconds",
         [&](std::string_view v) { c.latency_us = parse_double(v, "--latency", 0, 1e6); }});
  t.add({"loss", "FRACTION", "0", "random frame loss on every link, in [0, 0.5]",
         [&](std::string_view v) { c.loss = parse_double(v, "--loss", 0, 0.5); }});
  t.add({"seed", "S", "1", "seed of the fabric's loss and of the data pattern",
         [&](std::string_view v) { c.seed = parse_uint(v, "--seed", UINT64_MAX); }});
  t.add({"lanes", "L", "1", "lanes per member: queues of its port, 1..4 (multilane uses 2); --testbed: NICs, a switch each, 1..2",
         [&](std::string_view v) { c.lanes = static_cast<uint16_t>(parse_uint(v, "--lanes", 4)); }});
  t.add({"window", "FRAMES", "128", "frames in flight per peer (1..129)",
         [&](std::string_view v) { c.window = static_cast<uint32_t>(parse_uint(v, "--window", 129)); }});
  t.add({"timeout", "MS", "3000", "a peer silent this long fails the broadcast",
         [&](std::string_view v) { c.timeout_ms = parse_double(v, "--timeout", 1, 3'600'000); }});
  t.add({"cores", "C", "auto",
         "polling cores (default: one per usable CPU but one, at least 1, at most 2: the CPU left carries this "
         "thread and the kernel's work for af_packet/af_xdp ports)",
         [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"progress", "cores|calls", "cores; --testbed: calls",
         "who runs the members: polling cores, or (calls) the bench's thread while it waits, as MPI progresses "
         "inside its calls - one thread per member process instead of two, for many processes on few CPUs "
         "(--config, --testbed)",
         [&](std::string_view v) { c.progress_in_calls = parse_progress(v); }});
  t.add({"ports", "DEVARGS;...", "",
         "one port per member instead of the fabric: DPDK devargs, e.g. "
         "'net_af_packet0,iface=v0;net_af_packet1,iface=v1', or an InfiniBand / RoCE adapter's port, "
         "'verbs:mlx5_0:1;verbs:mlx5_0:1' (a UD queue pair each, --lanes per member) (sets --nodes)",
         [&](std::string_view v) {
           c.ports.clear();
           while (!v.empty()) {
             const auto semi = v.find(';');
             if (semi != 0) c.ports.emplace_back(v.substr(0, semi));
             v = semi == std::string_view::npos ? std::string_view{} : v.substr(semi + 1);
           }
           if (c.ports.empty()) throw UsageError("--ports: no devargs given");
         }});
  t.add({"port-rate", "MBIT", "0",
         "pace each member's lanes to this rate in Mbit/s (the links' rate, e.g. a tbf's); 0 = off",
         [&](std::string_view v) { c.port_rate_mbit = parse_double(v, "--port-rate", 0, 1e7); }});
  t.add({"rate-control", "", "",
         "each lane finds its rate from the queueing delay its acks reveal and from losses, instead of being told "
         "(docs/engine.md); --port-rate is then its ceiling. The default with --ports and no --port-rate. --testbed: "
         "the members are not told the links' rate",
         [&](std::string_view) { c.rate_control = true; }});
  t.add({"no-rate-control", "", "",
         "--ports with no --port-rate: send as fast as the ports take frames, instead of finding the rate",
         [&](std::string_view) { c.no_rate_control = true; }});
  t.add({"port-overhead", "BYTES", "24",
         "bytes the links count per frame beyond it, for --port-rate: 24 on an Ethernet wire, 0 under a Linux tbf",
         [&](std::string_view v) { c.port_overhead = static_cast<uint32_t>(parse_uint(v, "--port-overhead", 1024)); }});
  t.add({"auto-rules", "FILE", "built in", "rules for --algo auto (format: config/auto.rules)",
         [&](std::string_view v) { c.auto_rules = std::string(v); }});
  t.add({"topology", "FILE", "uniform",
         "latency between members (config/topologies/ format): the fabric's delays and auto's spread",
         [&](std::string_view v) { c.topology = std::string(v); }});
  t.add({"config", "FILE", "",
         "one member per process: run as member --rank of the group FILE describes (config/groups/); every "
         "member runs the same command; osu_bcast-style timing",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "with --config: this process's rank (a pmix group: the launcher's, if left out)",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"yield-when-idle", "", "",
         "idle polling cores yield their CPU: for several member processes on one host's CPUs",
         [&](std::string_view) { c.yield_when_idle = true; }});
  t.add({"testbed", "N", "",
         "one member process in each of N network namespaces, built for the run as `lanecast testbed up N` does "
         "(veths to a bridge per lane, tbf both ways) and removed after it; needs root",
         [&](std::string_view v) { c.testbed_nodes = static_cast<uint32_t>(parse_uint(v, "--testbed", 1'000'000)); }});
  t.add({"mtu", "M", "1500", "with --testbed: the links' MTU (576..9000; --xdp: at most 3500)",
         [&](std::string_view v) { c.mtu = static_cast<uint32_t>(parse_uint(v, "--mtu", 1'000'000)); }});
  t.add({"uplink-queue", "FRAMES", std::to_string(testbed::kUplinkQueueFrames),
         "with --testbed: frames a node's uplink queues, as a host NIC's txqueuelen (0..100000; 0: 5 ms, as a switch "
         "port)",
         [&](std::string_view v) { c.uplink_queue = static_cast<uint32_t>(parse_uint(v, "--uplink-queue", 1'000'000)); }});
  t.add({"xdp", "", "",
         "with --testbed: af_xdp ports instead of af_packet (XDP transmit skips the node's qdisc: only the switch "
         "side shapes); mounts bpffs at /sys/fs/bpf if missing",
         [&](std::string_view) { c.xdp = true; }});
  t.add({"deadline", "S", "auto",
         "with --testbed: the members still running after S seconds are killed and the run fails (auto: from the "
         "schedule and the rate)",
         [&](std::string_view v) { c.deadline_s = parse_double(v, "--deadline", 1, 86'400); }});
  t.add({"multicast", "on|off", "on",
         "multicasts as one frame to the group's random address where the ports can join it (else emulated, "
         "said in the header); off: always one datagram per member",
         [&](std::string_view v) {
           if (v != "on" && v != "off") throw UsageError("--multicast: on or off, not '" + std::string(v) + "'");
           c.mcast.enabled = v == "on";
         }});
  t.add({"mcast-root-delay", "US", "0",
         "mcast_chain: the root waits this long before it multicasts (Hoefler, Siebert & Rehm's root delay)",
         [&](std::string_view v) { c.mcast.root_delay_us = parse_double(v, "--mcast-root-delay", 0, 1e6); }});
  t.add({"mcast-sync-seed", "S", "0",
         "mcast_chain: randomized synchronisation - per broadcast one member drawn from S tells the root it "
         "started, and the root multicasts then; 0 = off",
         [&](std::string_view v) { c.mcast.sync_seed = parse_uint(v, "--mcast-sync-seed", UINT64_MAX); }});
  t.add({"mcast-repair", "request|ring", "request",
         "mcast_chain's repair: on request (each member asks its predecessor in the ring for the segments it missed: "
         "every link carries each segment about once) or the paper's ring (every member also sends every segment "
         "on: twice)",
         [&](std::string_view v) {
           if (v != "request" && v != "ring") throw UsageError("--mcast-repair: request or ring, not '" + std::string(v) + "'");
           c.mcast.repair_on_request = v == "request";
         }});
  t.add({"mcast-loss", "FRACTION", "0",
         "every member drops this share of the multicast frames it receives (seeded by --seed), in [0, 0.9]: "
         "the repair stage at work",
         [&](std::string_view v) {
           c.mcast.loss = parse_double(v, "--mcast-loss", 0, 0.9);
         }});
  t.add({"stream", "", "",
         "a stream of messages from --root to every member instead of broadcasts (docs/streams.md): --sizes are "
         "message sizes (default 64), --messages timed ones per size after --warmup ones (default 10000); prints "
         "messages/s and the latency from publish() to delivery on every member",
         [&](std::string_view) { c.stream = true; }});
  t.add({"messages", "M", "1000000", "--stream: timed messages per size",
         [&](std::string_view v) { c.messages = parse_uint(v, "--messages", 1'000'000'000); }});
  t.add({"msg-rate", "PER_S", "0", "--stream: offer this many messages per second, against absolute time (0: as fast as "
         "the window allows)",
         [&](std::string_view v) { c.msg_rate = parse_double(v, "--msg-rate", 0, 1e9); }});
  t.add({"fanout", "K", "auto", "--stream: members each member forwards to (1: chain, 2: binary tree, N-1: linear; "
         "auto: from --algo)",
         [&](std::string_view v) { c.fanout = v == "auto" ? 0 : static_cast<uint32_t>(parse_uint(v, "--fanout", 1023)); }});
  t.add({"stream-window", "FRAMES", "1024", "--stream: frames each member keeps in flight per stream (16..65536)",
         [&](std::string_view v) { c.stream_window = static_cast<uint32_t>(parse_uint(v, "--stream-window", 65536)); }});
  t.add({"stream-multicast", "", "", "--stream: the publisher sends each batch once to the group address (where the "
         "ports multicast) and sends again over channels what members report missing or did not get at the end "
         "(docs/streams.md); the stream's tree is the star",
         [&](std::string_view) { c.stream_multicast = true; }});
  t.add({"stream-window-bytes", "BYTES", "4M", "--stream: bytes published and not yet delivered everywhere",
         [&](std::string_view v) { c.stream_window_bytes = parse_size(v, "--stream-window-bytes"); }});
  t.add({"key-file", "FILE", "",
         "a group key (docs/security.md): every frame sealed, frames that do not open dropped and counted. FILE holds "
         "64 hex digits and only its owner may read it (lanecast key --new FILE makes one). In process: this key; "
         "--testbed: written into every member's group file. With --config the group file's key_file (or "
         "LANECAST_GROUP_KEY_FILE) gives it",
         [&](std::string_view v) { c.key_file = std::string(v); }});
  t.add({"faults", "SPEC", "none",
         "faults injected on the members' ports, e.g. 'loss=0.05,reorder=0.02,dup=0.01,corrupt=0.005,seed=7' "
         "(keys below; ';' between rules): loss, bursts, reordering, duplication, corruption, delay - the protocol "
         "repairs them; counted per member (--counters)",
         [&](std::string_view v) { c.faults = parse_fault_text(v, "--faults"); }});
  t.add({"memory", "", "", "print engine memory per member (state, pools, fabric) and the process's peak RSS",
         [&](std::string_view) { c.memory = true; }});
  t.add({"json", "", "", "print results as JSON: an array, one object per (algo, nodes, size); --config: the same (rank 0 prints it), "
         "timed per process (span_us, rank_us); --testbed: one object - testbed, results (that array), payload, links "
         "(every tbf's counters), failed - with the progress lines on stderr",
         [&](std::string_view) { c.json = true; }});
  t.add({"quiet", "", "", "no progress lines on stderr (a size that runs for seconds, a testbed's set-up and run)",
         [&](std::string_view) { c.quiet = true; }});
  t.add({"counters", "", "", "print every node's counters after each algorithm",
         [&](std::string_view) { c.counters = true; }});
  return t;
}

const char* const kBenchUsage =
    "usage: lanecast bench [--nodes N] [--algo NAME] [--sizes LIST] [--iters K] [--warmup W]\n"
    "                      [--root R] [--segment BYTES] [--rate MBIT] [--latency US]\n"
    "                      [--loss FRACTION] [--seed S] [--cores C] [--json] [--counters]\n"
    "                      [--ports DEVARGS;...] [--port-rate MBIT] [--memory]\n"
    "       lanecast bench --config FILE [--rank R] [--algo NAME] [--sizes LIST] ...  (one member per process)\n"
    "       lanecast bench --testbed N [--lanes 1|2] [--rate MBIT] [--mtu M] [--xdp] [--algo NAME] ...  (root)\n"
    "\n"
    "Broadcasts messages among N members joined by the in-process fabric (rings and\n"
    "an emulated switch) or by one DPDK port each (--ports), and prints per size the\n"
    "completion time - from posting until the last member holds the message -\n"
    "averaged over K iterations, its minimum and maximum, the bandwidth (size /\n"
    "average time), the spread of the members' hold times, the time until every\n"
    "frame was also acknowledged (acked_us), the frames sent again, and whether\n"
    "every member's bytes equal the root's in every iteration.\n"
    "\n"
    "--testbed N builds a shaped testbed of N namespaces for the run (lanecast\n"
    "testbed --help), starts `lanecast bench --config F --rank I` in each (af_packet\n"
    "ports paced to the links' rate), streams rank 0's table, prints what every\n"
    "link's tbf counted beside the payload each receiver must get, and removes it\n"
    "all - also when a member fails (exit 1, naming the rank and what it said),\n"
    "at the deadline, or on SIGINT, SIGTERM or SIGPIPE (its reader gone: `| head`).\n"
    "\n";

std::vector<std::string> bench_algos(const std::string& list) {
  std::vector<std::string> out;
  if (list == "all") {
    for (const auto& a : algos::algorithms()) out.emplace_back(a.name);
    return out;
  }
  std::string_view rest = list;  // "chain" or "chain,bintree,auto"
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    const std::string one(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (one != "auto" && !algos::algo_by_name(one)) {
      std::string names;
      for (const auto& a : algos::algorithms()) names += " " + std::string(a.name);
      throw UsageError("--algo: unknown algorithm '" + one + "' (known:" + names + ", auto, all)");
    }
    out.push_back(one);
  }
  if (out.empty()) throw UsageError("--algo: no algorithm given");
  return out;
}

}  // namespace lanecast::apps
