#include "apps/plan/plan_options.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "algos/sim/stream_sim.h"
#include "apps/common/options.h"
#include "apps/plan/plan_auto.h"

namespace lanecast::apps {
namespace {

// What the command line said, before it is checked as a whole.
struct Raw {
  std::string algo = "all";
  std::string nodes, size;
  std::string order = "id";
  std::string tx_order = "fifo";
  std::string sites = "one";
  std::optional<double> mcast_loss;
  uint64_t mcast_seed = 1;
  std::optional<double> root_delay_us;
  std::optional<uint64_t> sync_seed;
  std::optional<std::string> mcast_repair;
  double skew_us = 0;
  uint64_t skew_seed = 1;
  double port_mbytes = 0, switch_mbytes = 0, frame_ns = 0;
  uint32_t frame_bytes = 0;
  uint32_t buffer_frames = 0;
  uint64_t burst_bytes = 0;
  bool shared_port = false;
  // Options of --stream, and whether each was given.
  bool fanout = false, msg_rate = false, messages = false, stream_multicast = false;
};

OptionTable make_table(PlanConfig& c, Raw& raw) {
  OptionTable t;
  t.add({"algo", "NAME", "all",
         "algorithm to simulate, 'auto' (chosen per nodes and size by rules), or 'all' for every "
         "registered one",
         [&](std::string_view v) { raw.algo = std::string(v); }});
  t.add({"auto-rules", "FILE", "built in", "rules for --algo auto (format: config/auto.rules)",
         [&](std::string_view v) { c.auto_rules_file = std::string(v); }});
  t.add({"nodes", "P", "required", "group size, root included; a list 'a,b,c' simulates each",
         [&](std::string_view v) { raw.nodes = std::string(v); }});
  t.add({"size", "M", "required",
         "message bytes, K/M/G suffixes (powers of 1024); 'a,b' and 'lo:hi' (powers of two) lists",
         [&](std::string_view v) { raw.size = std::string(v); }});
  t.add({"segment", "S", "1400", "payload bytes per frame (the engine's default), K/M suffixes",
         [&](std::string_view v) {
           c.segment = static_cast<uint32_t>(parse_size(v, "--segment"));
           if (c.segment == 0 || parse_size(v, "--segment") > (1u << 30))
             throw UsageError("--segment: must be 1 byte .. 1G");
         }});
  t.add({"t0", "US", "10", "latency t0 of every transfer in microseconds (overlaps with others)",
         [&](std::string_view v) { c.t0_us = parse_double(v, "--t0", 0, 1e9); }});
  t.add({"bw", "MBYTES_PER_S", "1250", "link rate 1/td in 10^6 bytes/s (1250 = 10 Gbit/s)",
         [&](std::string_view v) { c.bw_mbytes = parse_double(v, "--bw", 1e-3, 1e9); }});
  t.add({"lanes", "L", "1", "lanes (NICs, or queues of one NIC) per node, 1..16",
         [&](std::string_view v) { c.lanes = static_cast<uint16_t>(parse_uint(v, "--lanes", 16)); }});
  t.add({"root", "R", "0", "rank of the root",
         [&](std::string_view v) { c.root = static_cast<uint32_t>(parse_uint(v, "--root", UINT32_MAX)); }});
  t.add({"topology", "FILE", "none (uniform t0)",
         "latency per pair: sites, pairs or a matrix (docs/algorithms.md; config/topologies/)",
         [&](std::string_view v) { c.topology_file = std::string(v); }});
  t.add({"order", "id|form|form-double|form1|form2|form3", "id",
         "hypercube's node order: identifiers, or from the topology's latencies: 'form' = the "
         "fastest the cost model predicts of id and Figueira's form-hypercube variants, refined by "
         "swaps (lanecast's addition); form-double, form1, form2, form3 = Figueira's double "
         "version and single passes at dimension 1, 2, 3, as in the paper",
         [&](std::string_view v) { raw.order = std::string(v); }});
  t.add({"sites", "one|chain", "one",
         "multilane's trees: one pair over every rank, or a pair per site of the topology, chained "
         "across the sites (every rank must be in a site)",
         [&](std::string_view v) { raw.sites = std::string(v); }});
  t.add({"mcast-loss", "FRACTION", "none",
         "per-receiver multicast loss probability, for multicast algorithms (mcast_chain)",
         [&](std::string_view v) { raw.mcast_loss = parse_double(v, "--mcast-loss", 0, 1); }});
  t.add({"mcast-seed", "N", "1", "seed of the simulated multicast losses",
         [&](std::string_view v) { raw.mcast_seed = parse_uint(v, "--mcast-seed", UINT64_MAX); }});
  t.add({"root-delay", "US", "0 (off)",
         "mcast_chain: the root waits this long before it multicasts (Hoefler et al.'s root delay), 0..1e6",
         [&](std::string_view v) { raw.root_delay_us = parse_double(v, "--root-delay", 0, 1e6); }});
  t.add({"sync-seed", "N", "0 (off)",
         "mcast_chain: randomized synchronisation: the root waits until one non-root rank, drawn "
         "from N per operation, has started",
         [&](std::string_view v) { raw.sync_seed = parse_uint(v, "--sync-seed", UINT64_MAX); }});
  t.add({"mcast-repair", "request|ring", "request",
         "mcast_chain's repair, as the engine's mcast_repair: on request (each rank asks its predecessor in the "
         "ring for the segments it missed; the engine's default) or the paper's ring (every rank also sends every "
         "segment on: twice on every receiver's link)",
         [&](std::string_view v) {
           if (v != "request" && v != "ring") throw UsageError("--mcast-repair: '" + std::string(v) + "': request or ring");
           raw.mcast_repair = std::string(v);
         }});
  t.add({"skew", "US", "0",
         "process skew: each non-root rank starts at a time drawn uniformly from [0, US], 0..1e6 "
         "(a multicast copy that comes earlier is lost; a reliable frame waits)",
         [&](std::string_view v) { raw.skew_us = parse_double(v, "--skew", 0, 1e6); }});
  t.add({"skew-seed", "N", "1", "seed of the drawn start times",
         [&](std::string_view v) { raw.skew_seed = parse_uint(v, "--skew-seed", UINT64_MAX); }});
  t.add({"tx-order", "fifo|rr", "fifo",
         "how a port orders emitted sends: emission order, or per-destination round robin (engine)",
         [&](std::string_view v) { raw.tx_order = std::string(v); }});
  t.add({"frame-overhead", "BYTES", "0",
         "header bytes per frame on the wire (lanecast on Ethernet: 98 with preamble and gap)",
         [&](std::string_view v) { raw.frame_bytes = static_cast<uint32_t>(parse_uint(v, "--frame-overhead", 1u << 20)); }});
  t.add({"frame-time", "NS", "0", "fixed port time per frame in nanoseconds (per-packet CPU cost)",
         [&](std::string_view v) { raw.frame_ns = parse_double(v, "--frame-time", 0, 1e9); }});
  t.add({"port-capacity", "MBYTES_PER_S", "0 (link rate)", "switch port rate, if below the link rate",
         [&](std::string_view v) { raw.port_mbytes = parse_double(v, "--port-capacity", 0, 1e9); }});
  t.add({"switch-capacity", "MBYTES_PER_S", "0 (unbounded)", "switch backplane rate shared by all ports",
         [&](std::string_view v) { raw.switch_mbytes = parse_double(v, "--switch-capacity", 0, 1e12); }});
  t.add({"switch-buffer", "FRAMES", "0 (unbounded)",
         "frames a switch port queues before senders to it pause (PFC-like; needs --tx-order fifo)",
         [&](std::string_view v) { raw.buffer_frames = static_cast<uint32_t>(parse_uint(v, "--switch-buffer", UINT32_MAX)); }});
  t.add({"port-burst", "BYTES", "0 (none)",
         "a token bucket on every port, as a tbf's burst: up to BYTES pass at once (each frame then costs "
         "--frame-time), the rest at the link rate; K/M suffixes",
         [&](std::string_view v) {
           raw.burst_bytes = parse_size(v, "--port-burst");
           if (raw.burst_bytes > (uint64_t{1} << 30)) throw UsageError("--port-burst: at most 1G");
         }});
  t.add({"shared-port", "", "", "lanes are queues of one NIC: they share one port per node",
         [&](std::string_view) { raw.shared_port = true; }});
  t.add({"per-rank", "", "", "print every rank's line even for large groups",
         [&](std::string_view) { c.per_rank = true; }});
  t.add({"no-validate", "", "", "skip the per-segment action checks (less memory for huge runs)",
         [&](std::string_view) { c.validate = false; }});
  t.add({"fit", "auto|always|never", "auto",
         "large plans: simulate the same broadcast at three smaller segment counts (--fit-points) and read the time off the line "
         "through them, if it is one - else one more at twice the largest, and so on while that saves work - or else "
         "the full run (docs/algorithms.md, 'Large plans'); auto: above 2^26 (node, segment) pairs",
         [&](std::string_view v) {
           using Mode = algos::sim::FitOptions::Mode;
           if (v == "auto") c.fit.mode = Mode::Auto;
           else if (v == "always") c.fit.mode = Mode::Always;
           else if (v == "never") c.fit.mode = Mode::Never;
           else throw UsageError("--fit: auto, always or never, not '" + std::string(v) + "'");
         }});
  t.add({"fit-points", "A,B,C", "128,256,512, climbing",
         "the three segment counts --fit simulates, increasing; given, the fit does not climb past them",
         [&](std::string_view v) {
           const std::vector<uint64_t> pts = parse_size_list(std::string(v), "--fit-points");
           if (pts.size() != 3 || pts[0] < 2 || !(pts[0] < pts[1] && pts[1] < pts[2]) || pts[2] > (1u << 20))
             throw UsageError("--fit-points: three increasing segment counts from 2 to 1048576, e.g. 256,512,1024");
           for (int i = 0; i < 3; ++i) c.fit.points[i] = static_cast<uint32_t>(pts[i]);
           c.fit.climb = false;
         }});
  t.add({"node-fit", "auto|always|never", "auto",
         "groups of more than 16 384 nodes (circulant: 2048; always: of 256 and more): simulate the same broadcast on three "
         "smaller groups and read the time off the line through them, if it is one - the trees on p/64, p/32 and "
         "p/16 nodes (at most 4096) in log2(nodes), circulant on the same at most 1024, scatter_allgather on p/32, "
         "p/16 and p/8 (at most 8192) with the segments per node kept, in nodes; only the completion, no per-rank "
         "figures (docs/algorithms.md, 'Large groups'); never with --fit never",
         [&](std::string_view v) {
           c.node_fit.enabled = v != "never";
           if (v == "always") c.node_fit.min_nodes = 255;
           else if (v != "auto" && v != "never")
             throw UsageError("--node-fit: auto, always or never, not '" + std::string(v) + "'");
         }});
  t.add({"quiet", "", "", "no progress lines on stderr for long runs",
         [&](std::string_view) { c.quiet = true; }});
  t.add({"stream", "", "",
         "a stream of messages of each --size from rank 0 instead of a broadcast: the message rate it "
         "sustains and each message's latency to every member, batches down a k-ary tree or multicast "
         "(docs/algorithms.md, 'Streams'); --algo, --lanes and the switch and multicast options do not apply",
         [&](std::string_view) { c.stream.on = true; }});
  t.add({"fanout", "K", "2", "--stream: children per member in the stream's tree (1 = chain; nodes - 1 = linear)",
         [&](std::string_view v) {
           c.stream.fanout = static_cast<uint32_t>(parse_uint(v, "--fanout", 1u << 20));
           if (c.stream.fanout == 0) throw UsageError("--fanout: a tree needs at least 1 child per member");
           raw.fanout = true;
         }});
  t.add({"msg-rate", "MSGS_PER_S", "0 (all at once)",
         "--stream: messages per second the publisher offers; 0 publishes them all at once (the most the tree carries)",
         [&](std::string_view v) {
           c.stream.rate = parse_double(v, "--msg-rate", 0, 1e12);
           raw.msg_rate = true;
         }});
  t.add({"messages", "N", "100000", "--stream: messages published, 1..1e7",
         [&](std::string_view v) {
           c.stream.messages = parse_uint(v, "--messages", algos::sim::kStreamMaxMessages);
           if (c.stream.messages == 0) throw UsageError("--messages: at least 1");
           raw.messages = true;
         }});
  t.add({"stream-multicast", "", "", "--stream: the publisher sends each batch once to the group address (the engine's stream_multicast)",
         [&](std::string_view) {
           c.stream.multicast = true;
           raw.stream_multicast = true;
         }});
  t.add({"json", "", "", "print a JSON array, one object per (algo, nodes, size)",
         [&](std::string_view) { c.json = true; }});
  return t;
}

// --stream's own options only with it; with it, none of the broadcast's
// that the stream model has no place for.
void check_stream_options(const PlanConfig& c, const Raw& raw) {
  if (!c.stream.on) {
    for (const auto& [given, name] : {std::pair{raw.fanout, "--fanout"}, std::pair{raw.msg_rate, "--msg-rate"},
                                      std::pair{raw.messages, "--messages"},
                                      std::pair{raw.stream_multicast, "--stream-multicast"}})
      if (given) throw UsageError(std::string(name) + " applies to --stream only");
    return;
  }
  const std::pair<bool, const char*> broadcast_only[] = {
      {raw.algo != "all", "--algo"},
      {c.lanes != 1, "--lanes"},
      {!c.topology_file.empty(), "--topology"},
      {raw.mcast_loss.has_value(), "--mcast-loss"},
      {raw.root_delay_us.has_value(), "--root-delay"},
      {raw.sync_seed.has_value(), "--sync-seed"},
      {raw.mcast_repair.has_value(), "--mcast-repair"},
      {raw.skew_us > 0, "--skew"},
      {raw.port_mbytes > 0, "--port-capacity"},
      {raw.switch_mbytes > 0, "--switch-capacity"},
      {raw.buffer_frames > 0, "--switch-buffer"},
      {raw.shared_port, "--shared-port"},
      {c.root != 0, "--root"},
  };
  for (const auto& [given, name] : broadcast_only)
    if (given) throw UsageError(std::string(name) + " does not apply to --stream (a stream's model has one lane, no switch and rank 0 publishing)");
  if (c.segment <= 16) throw UsageError("--stream: --segment must hold a 16-byte record head and a byte");
  for (uint64_t n : c.sizes)
    if (n > UINT32_MAX) throw UsageError("--stream: a message is at most 4 GiB - 1");
  for (uint32_t p : c.nodes)
    if (p < 2) throw UsageError("--stream: a stream needs at least 2 members");
}

std::vector<uint32_t> parse_nodes(const std::string& text) {
  std::vector<uint32_t> out;
  for (uint64_t v : parse_size_list(text, "--nodes")) {
    if (v == 0 || v > (1u << 20)) throw UsageError("--nodes: a group has 1 .. 1048576 nodes, not " + std::to_string(v));
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

std::vector<algos::Algo> resolve_algos(const std::string& name) {
  std::vector<algos::Algo> out;
  std::string known;
  for (const auto& a : algos::algorithms()) known += (known.empty() ? "" : ", ") + std::string(a.name);
  if (name == "all") {
    for (const auto& a : algos::algorithms()) out.push_back(a.id);
    if (out.empty()) throw UsageError("--algo all: no algorithm is registered yet");
    return out;
  }
  if (name == "auto") return out;  // chosen per point by the rules
  const auto id = algos::algo_by_name(name);
  if (!id)
    throw UsageError("--algo: unknown algorithm '" + name + "' (known: " +
                     (known.empty() ? "none registered yet" : known) + ", auto or all)");
  out.push_back(*id);
  return out;
}

}  // namespace

std::string plan_help() {
  PlanConfig c;
  Raw raw;
  return "usage: lanecast plan --nodes P --size M [--algo NAME|auto|all] [--auto-rules FILE]\n"
         "                     [--segment S] [--t0 US] [--bw MBYTES_PER_S] [--lanes L]\n"
         "                     [--topology FILE] [--order id|form] [--sites one|chain]\n"
         "                     [--mcast-loss FRACTION] [--root-delay US] [--sync-seed N]\n"
         "                     [--skew US] [--json] [more below]\n"
         "\n"
         "Predicts a broadcast's completion time, each rank's finish time, bytes sent and\n"
         "received and peers per node, by running the algorithm's machines in a discrete-event\n"
         "simulation of a switched network on the linear model t = t0 + n td (docs/algorithms.md).\n"
         "With --algo auto, each (nodes, size) runs what the auto rules choose from the size, the\n"
         "nodes, --lanes, the model's multicast and the topology's latency spread; the report\n"
         "names the choice and the rule. --order, --mcast-loss, --root-delay and --sync-seed then\n"
         "apply where the rules choose the algorithm they serve.\n"
         "\n"
         "options:\n" +
         make_table(c, raw).help() +
         "\nExit status: 0 success, 1 a simulated broadcast did not complete, 2 bad usage.\n";
}

PlanConfig parse_plan_options(int argc, char** argv) {
  PlanConfig c;
  Raw raw;
  if (make_table(c, raw).parse(argc, argv, 1)) {
    c.help = true;
    return c;
  }
  if (raw.nodes.empty()) throw UsageError("--nodes is required (group size, root included)");
  if (raw.size.empty()) throw UsageError("--size is required (message bytes, e.g. 64K or 8M)");
  c.nodes = parse_nodes(raw.nodes);
  c.sizes = parse_size_list(raw.size, "--size");
  check_stream_options(c, raw);
  if (c.lanes == 0) throw UsageError("--lanes: a node needs at least one lane");
  for (uint32_t p : c.nodes)
    if (c.root >= p) throw UsageError("--root " + std::to_string(c.root) + " is outside a group of " + std::to_string(p));
  c.order = raw.order;
  if (raw.order == "form") c.form_best = true;
  else if (raw.order == "form-double") c.form_passes = algos::topology::form_double();
  else if (raw.order == "form1") c.form_passes = algos::topology::form_single(1);
  else if (raw.order == "form2") c.form_passes = algos::topology::form_single(2);
  else if (raw.order == "form3") c.form_passes = algos::topology::form_single(3);
  else if (raw.order != "id")
    throw UsageError("--order: want id, form, form-double, form1, form2 or form3, not '" + raw.order + "'");

  if (raw.tx_order == "fifo") c.net.tx_order = algos::sim::TxOrder::Fifo;
  else if (raw.tx_order == "rr") c.net.tx_order = algos::sim::TxOrder::RoundRobin;
  else throw UsageError("--tx-order: want 'fifo' or 'rr', not '" + raw.tx_order + "'");

  const auto t0 = static_cast<algos::sim::Picos>(std::llround(c.t0_us * 1e6));
  c.net.latency = c.topology_file.empty() ? algos::sim::LatencyMap(t0)
                                          : algos::sim::LatencyMap::load(c.topology_file, t0);
  if (!c.topology_file.empty())
    for (uint32_t p : c.nodes) c.net.latency.check_fits(p);
  if (raw.sites == "chain") {
    if (c.topology_file.empty()) throw UsageError("--sites chain needs a --topology with sites");
    c.chain_sites = true;
    const uint32_t most = *std::max_element(c.nodes.begin(), c.nodes.end());
    for (uint32_t r = 0; r < most; ++r) {
      const int site = c.net.latency.site_of(r);
      if (site < 0)
        throw UsageError("--sites chain: rank " + std::to_string(r) + " is in no site of " + c.topology_file);
      c.site_of_rank.push_back(static_cast<uint32_t>(site));
    }
  } else if (raw.sites != "one") {
    throw UsageError("--sites: want 'one' or 'chain', not '" + raw.sites + "'");
  }
  c.net.bytes_per_second = c.bw_mbytes * 1e6;
  c.net.frame_overhead_bytes = raw.frame_bytes;
  c.net.frame_overhead_time = static_cast<algos::sim::Picos>(std::llround(raw.frame_ns * 1e3));
  c.net.port_capacity = raw.port_mbytes * 1e6;
  c.net.switch_capacity = raw.switch_mbytes * 1e6;
  c.net.lanes_share_port = raw.shared_port;
  c.net.switch_buffer_frames = raw.buffer_frames;
  c.net.port_burst_bytes = raw.burst_bytes;
  if (raw.buffer_frames > 0 && c.net.tx_order != algos::sim::TxOrder::Fifo)
    throw UsageError("--switch-buffer needs --tx-order fifo (a paused round-robin port is not modelled)");
  c.algos = resolve_algos(raw.algo);
  // With auto, c.algos is empty: the checks below that refuse an option for an
  // algorithm it does not apply to pass, and the option applies to the points
  // where the rules choose the algorithm it serves.
  if (raw.algo == "auto")
    c.auto_rules = c.auto_rules_file.empty() ? algos::autoselect::Rules::defaults()
                                             : load_auto_rules(c.auto_rules_file);
  else if (!c.auto_rules_file.empty())
    throw UsageError("--auto-rules applies to --algo auto only, not to --algo " + raw.algo);
  if (raw.mcast_loss) {
    for (algos::Algo a : c.algos)
      if (a != algos::Algo::McastChain)
        throw UsageError("--mcast-loss applies to multicast algorithms only (mcast_chain), not to " +
                         std::string(algos::algo_info(a).name) + " (it never multicasts)");
    c.net.multicast_loss = *raw.mcast_loss;
  }
  c.net.multicast_seed = raw.mcast_seed;
  for (const auto& [given, name] : {std::pair{raw.root_delay_us.has_value(), "--root-delay"},
                                    std::pair{raw.sync_seed.has_value(), "--sync-seed"},
                                    std::pair{raw.mcast_repair.has_value(), "--mcast-repair"}})
    if (given)
      for (algos::Algo a : c.algos)
        if (a != algos::Algo::McastChain)
          throw UsageError(std::string(name) + " applies to --algo mcast_chain only, not to " +
                           std::string(algos::algo_info(a).name) + " (it has no multicast stage to hold back)");
  c.algo_options.root_delay_ns = static_cast<uint64_t>(std::llround(raw.root_delay_us.value_or(0) * 1e3));
  c.algo_options.sync_seed = raw.sync_seed.value_or(0);
  c.algo_options.nack_repair = raw.mcast_repair.value_or("request") == "request";
  c.net.start_skew = static_cast<algos::sim::Picos>(std::llround(raw.skew_us * 1e6));
  c.net.skew_seed = raw.skew_seed;
  if (c.order != "id")
    for (algos::Algo a : c.algos)
      if (a != algos::Algo::Hypercube)
        throw UsageError("--order " + raw.order + " applies to --algo hypercube only, not to " +
                         std::string(algos::algo_info(a).name) + " (no other algorithm has a latency-aware order)");
  return c;
}

}  // namespace lanecast::apps
