// The options of `lanecast plan`, parsed and checked into one configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algos/auto/rules.h"
#include "algos/registry.h"
#include "algos/sim/node_fit.h"
#include "algos/sim/segment_fit.h"
#include "algos/sim/simulator.h"
#include "algos/topology/form_hypercube.h"

namespace lanecast::apps {

struct PlanConfig {
  std::vector<algos::Algo> algos;     // resolved --algo (every registered one for 'all'; none for 'auto')
  // --algo auto: each (nodes, size) runs what these rules choose (apps/plan/plan_auto.h),
  // the built-in ones or those of --auto-rules FILE (auto_rules_file, empty = built in).
  std::optional<algos::autoselect::Rules> auto_rules;
  std::string auto_rules_file;
  std::vector<uint32_t> nodes;        // --nodes, a list
  std::vector<uint64_t> sizes;        // --size, a list
  uint32_t segment = 1400;
  uint16_t lanes = 1;
  uint32_t root = 0;
  algos::sim::Network net;            // t0, rate, topology, switch, framing, tx order
  double t0_us = 10;
  double bw_mbytes = 1250;
  std::string topology_file;
  // --order (hypercube only): "id" = identifiers; "form" = form_best, lanecast's
  // choice (algos::topology::form_hypercube_best); form-double, form1, form2,
  // form3 = Figueira's passes, as in the paper, in form_passes.
  std::string order = "id";
  bool form_best = false;
  std::vector<algos::topology::FormPass> form_passes;
  // --sites (multilane only): "one" = one tree pair over all ranks; "chain" =
  // trees per site of the topology, chained (algos/multilane.h), as a group
  // file with use_sites runs it. site_of_rank: per rank, for "chain".
  bool chain_sites = false;
  std::vector<uint32_t> site_of_rank;
  // mcast_chain's options (--root-delay, --sync-seed), in every plan; the
  // simulated broadcast is the group's operation `op` (what --sync-seed draws from).
  algos::AlgoOptions algo_options;
  uint64_t op = 1;
  bool validate = true;               // --no-validate turns it off
  // --fit auto|always|never: large plans read off a line fitted to three
  // small segment counts (algos/sim/segment_fit.h) instead of simulated in full.
  algos::sim::FitOptions fit;
  // --node-fit auto|never: groups above 16 384 nodes of the trees read off a
  // line in log2(nodes) through three smaller groups (algos/sim/node_fit.h).
  algos::sim::NodeFitOptions node_fit;
  bool quiet = false;                 // --quiet: no progress lines on stderr
  // --stream: a stream of messages of each --size instead of a broadcast
  // (algos/sim/stream_sim.h; apps/plan/plan_stream.h).
  struct Stream {
    bool on = false;
    uint32_t fanout = 2;              // --fanout
    double rate = 0;                  // --msg-rate, messages/s; 0 = all at once
    uint64_t messages = 100'000;      // --messages
    bool multicast = false;           // --stream-multicast
  } stream;
  bool json = false;
  bool per_rank = false;
  bool help = false;
};

// Parses argv[1..argc) (argv[0] is "plan"). Throws UsageError (apps/common) or
// std::invalid_argument with a message for the user.
PlanConfig parse_plan_options(int argc, char** argv);
std::string plan_help();

}  // namespace lanecast::apps
