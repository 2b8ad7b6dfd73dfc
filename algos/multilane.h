// multilane: the multi-lane tree broadcast for multi-NIC clusters and grids —
// "multi-lane dual trees that swap halves at the leaves and chain across sites",
// as issue 3 describes it. Source: the multi-lane dual-tree broadcast paper the
// issue refers to; its exact title and authors are not named in the issue and
// could not be confirmed here, so this follows the description.
//
// The root splits the m segments into half A = [0, ceil(m/2)) and half B (the
// rest) and sends them at the same time, segment by segment interleaved: A to
// the root of tree A on lane 0, B to the root of tree B on lane 1. The
// receivers of a site are split into part A and part B; tree A (a binary heap
// over part A) carries A down, and its leaves forward A into the nodes of part
// B over their free child slots; tree B does the same with B into part A
// (algos/topology/multilane.h). Every node forwards a segment to its (at most
// two) children as soon as it holds it, one child per lane, and receives its
// two halves on different lanes: every interior node uses both lanes for
// sending and for receiving, sends at most M + one segment (2 ceil(m/2)
// segments) and talks to at most four peers. Every non-root node receives each
// segment exactly once.
//
// Lane choice: the "tree A on lane 0, tree B on lane 1" would put both
// of a node's sends on one lane (each node sends only its own half), so lanes
// alternate instead: a node's two children get different lanes, and so do its
// two parents (the rule is in topology/multilane.h). With one lane
// (Plan::lanes() == 1: two queues on one NIC, or one NIC) everything goes on
// lane 0; with more than two, lanes 0 and 1 are used.
//
// Sites (grids): the trees are built per site and chained — a leaf of tree A
// in site c feeds the root of tree A in site c + 1, likewise for B. The plan
// carries no sites, so the site of every rank is an optional input here
// (algos::GroupShape in registry.h); without one, `multilane` uses one site.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "algos/arena.h"
#include "algos/machine.h"
#include "algos/topology/multilane.h"

namespace lanecast::algos {

// site_of_rank: empty (one site) or one site id per rank (see
// topology::MultilaneLayout; MultilaneLayout::contiguous() makes contiguous
// blocks). Throws std::invalid_argument on a size mismatch.
std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me,
                                        std::span<const uint32_t> site_of_rank);
// With a layout built once for the group (cheaper for many ranks); it must
// have been built for plan.nodes() and plan.root().
std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me,
                                        const topology::MultilaneLayout& layout);
std::unique_ptr<Machine> make_multilane(const Plan& plan, Rank me);

// The same in an arena. With site_of_rank, the layout is built in the arena
// too (and stays there until the machine goes); a layout built outside it
// (once, at group creation) takes nothing from the arena.
MachinePtr make_multilane(const Plan& plan, Rank me, std::span<const uint32_t> site_of_rank,
                          MachineArena& arena);
MachinePtr make_multilane(const Plan& plan, Rank me, const topology::MultilaneLayout& layout,
                          MachineArena& arena);
MachinePtr make_multilane(const Plan& plan, Rank me, MachineArena& arena);
// The arena bytes make_multilane needs at most for any root, any rank and any
// message of at most max_segments segments in a group of `nodes`, with one
// site (with_sites false: also enough with a prebuilt layout) or with any
// site_of_rank.
size_t multilane_arena_bytes(uint32_t nodes, uint32_t max_segments, bool with_sites = false);

}  // namespace lanecast::algos
