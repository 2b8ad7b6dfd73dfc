// Algorithms by name: what `lanecast bench --algo NAME` and the engine look up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "algos/arena.h"
#include "algos/machine.h"
#include "algos/plan.h"

namespace lanecast::algos {

// Stable numeric identifiers: they travel in the wire header.
enum class Algo : uint8_t {
  Linear = 1,
  Binomial = 2,
  Chain = 3,
  Binary = 4,
  Bintree = 5,
  Symmetric = 6,
  ScatterAllgather = 7,
  Hypercube = 8,
  Multilane = 9,
  McastChain = 10,  // 9 is multilane's
  Circulant = 11,
};

struct AlgoInfo {
  Algo id;
  std::string_view name;     // as typed on the command line
  std::string_view summary;  // one line for --help
};

std::span<const AlgoInfo> algorithms();
std::optional<Algo> algo_by_name(std::string_view name);
const AlgoInfo& algo_info(Algo id);

// What a group knows of its network beyond the plan, equal on every member
// and fixed for the group's life (the plan carries no latencies): the
// hypercube's node order (position -> rank, from form-hypercube over the
// members' latencies; algos/topology/form_hypercube.h) and every rank's site
// (multilane builds its trees per site and chains them; algos/multilane.h).
// Empty spans: rank order, one site - the topology-blind versions. Other
// algorithms ignore it.
struct GroupShape {
  std::span<const Rank> hypercube_order;
  std::span<const uint32_t> site_of_rank;
  bool empty() const { return hypercube_order.empty() && site_of_rank.empty(); }
};

// The machine for rank `me` in the broadcast described by `plan`, on the heap
// (the model executor, the simulator, tests).
std::unique_ptr<Machine> make_machine(Algo algo, const Plan& plan, Rank me);
std::unique_ptr<Machine> make_machine(Algo algo, const Plan& plan, Rank me, const GroupShape& shape);

// The same machine built in `arena` (algos/arena.h), for the engine's polling
// core: the machine and everything it allocates come from the arena, nothing
// from the heap; destroying the MachinePtr rewinds the arena. Throws
// std::invalid_argument (unknown algorithm, rank outside the group),
// std::logic_error while another machine lives in the arena, and
// ArenaExhausted when the arena is smaller than machine_arena_bytes() asks.
MachinePtr make_machine(Algo algo, const Plan& plan, Rank me, MachineArena& arena);
MachinePtr make_machine(Algo algo, const Plan& plan, Rank me, MachineArena& arena, const GroupShape& shape);

// An arena size that make_machine(algo, plan, me, arena) never exceeds, for
// any root and rank of a group of `nodes` with `lanes` lanes and any message of
// at most max_segments segments; the first form for every registered
// algorithm, the second for one.
//
// Derived from sizes, not by trial: an arena request of n bytes costs
// arena_block(n) (whole 16-byte units, no padding between blocks), and a
// machine allocates only while it is constructed. Each algorithm's file sums
// its requests (X_arena_bytes() beside make_X()): its machine object
// (sizeof), its have-bitmap of max_segments bits (Bitmap::bytes_for) when
// some rank of the group keeps one, and its extras (multilane: the one-site
// layout's table). The first form is the largest of those. No registered
// machine's size depends on `lanes` or grows with `nodes`, so the bound is
// max_segments / 8 bytes plus a constant of a few hundred bytes.
size_t machine_arena_bytes(uint32_t nodes, uint16_t lanes, uint32_t max_segments);
size_t machine_arena_bytes(Algo algo, uint32_t nodes, uint16_t lanes, uint32_t max_segments);
// The same for machines made with a non-empty shape (an order's check bitmap,
// a per-site layout built in the arena).
size_t machine_arena_bytes(uint32_t nodes, uint16_t lanes, uint32_t max_segments, const GroupShape& shape);

}  // namespace lanecast::algos
