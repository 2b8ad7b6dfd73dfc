// The keys of LinkFaults (lanecast/group_spec.h) with their ranges, once: the
// group file's [group.faults] tables, `lanecast bench --faults`, the checks
// of GroupOptions and GroupSpec and the descriptions all read this table.
#pragma once

#include <string>
#include <string_view>

#include "lanecast/group_spec.h"

namespace lanecast::engine {

struct FaultKey {
  std::string_view key;
  std::string_view allowed;  // in words, for messages
  std::string_view doc;      // one line, for --help and docs
  bool integer;
  bool (*in_range)(double);
  void (*set)(LinkFaults&, double);
  double (*get)(const LinkFaults&);
};

inline constexpr FaultKey kFaultKeys[] = {
    {"loss", "0 <= x < 1", "each frame lost on its own", false, [](double v) { return v >= 0 && v < 1; },
     [](LinkFaults& f, double v) { f.loss = v; }, [](const LinkFaults& f) { return f.loss; }},
    {"burst_enter", "0 <= x <= 1", "Gilbert-Elliott: good -> bad, per frame", false,
     [](double v) { return v >= 0 && v <= 1; }, [](LinkFaults& f, double v) { f.burst_enter = v; },
     [](const LinkFaults& f) { return f.burst_enter; }},
    {"burst_leave", "0 <= x <= 1 (> 0 with burst_enter)", "Gilbert-Elliott: bad -> good, per frame", false,
     [](double v) { return v >= 0 && v <= 1; }, [](LinkFaults& f, double v) { f.burst_leave = v; },
     [](const LinkFaults& f) { return f.burst_leave; }},
    {"burst_loss_good", "0 <= x < 1", "Gilbert-Elliott: loss in the good state (default 0)", false,
     [](double v) { return v >= 0 && v < 1; }, [](LinkFaults& f, double v) { f.burst_loss_good = v; },
     [](const LinkFaults& f) { return f.burst_loss_good; }},
    {"burst_loss_bad", "0 <= x <= 1", "Gilbert-Elliott: loss in the bad state (default 1)", false,
     [](double v) { return v >= 0 && v <= 1; }, [](LinkFaults& f, double v) { f.burst_loss_bad = v; },
     [](const LinkFaults& f) { return f.burst_loss_bad; }},
    {"reorder", "0 <= x < 1", "a frame held back until reorder_gap later frames of its link passed (or 200 us)",
     false, [](double v) { return v >= 0 && v < 1; }, [](LinkFaults& f, double v) { f.reorder = v; },
     [](const LinkFaults& f) { return f.reorder; }},
    {"reorder_gap", "an integer 1..1000", "frames that overtake one held back (default 3)", true,
     [](double v) { return v >= 1 && v <= 1000; }, [](LinkFaults& f, double v) { f.reorder_gap = static_cast<uint32_t>(v); },
     [](const LinkFaults& f) { return static_cast<double>(f.reorder_gap); }},
    {"dup", "0 <= x < 1", "a second copy of a frame", false, [](double v) { return v >= 0 && v < 1; },
     [](LinkFaults& f, double v) { f.dup = v; }, [](const LinkFaults& f) { return f.dup; }},
    {"corrupt", "0 <= x < 1", "one byte past the link header flipped (lanecast's header or payload)", false,
     [](double v) { return v >= 0 && v < 1; }, [](LinkFaults& f, double v) { f.corrupt = v; },
     [](const LinkFaults& f) { return f.corrupt; }},
    {"delay_us", "0 <= x <= 1000000", "every frame held this long", false,
     [](double v) { return v >= 0 && v <= 1e6; }, [](LinkFaults& f, double v) { f.delay_us = v; },
     [](const LinkFaults& f) { return f.delay_us; }},
    {"jitter_us", "0 <= x <= 1000000", "plus a uniform draw of 0..jitter_us (a link's frames stay in order)", false,
     [](double v) { return v >= 0 && v <= 1e6; }, [](LinkFaults& f, double v) { f.jitter_us = v; },
     [](const LinkFaults& f) { return f.jitter_us; }},
};

const FaultKey* fault_key(std::string_view key);  // nullptr: not a fault key

// What is wrong with one rule for a group of `nodes` members (0: not known
// yet), or "": a value out of range (named, with what is allowed), bursts
// that never end, a member or peer outside the group.
std::string fault_rule_problem(const FaultRule& r, uint32_t nodes);
// Two rules that select the same frames.
bool same_frames(const FaultRule& a, const FaultRule& b);
bool any_fault(const LinkFaults& f);

// Throws std::invalid_argument "WHERE: faults: rule I: ..." for the first problem.
void check_faults(const FaultOptions& f, uint32_t nodes, const std::string& where);

// "loss 0.05, reorder 0.02 (gap 3), dup 0.01, corrupt 0.005 on frames every
// member receives; seed 7", or "none".
std::string describe_faults(const FaultOptions& f);

}  // namespace lanecast::engine
