// A VerbsCalls table that takes one lock around every call into another
// (the UD model's): members running on threads of their own - the discovery
// bootstrap blocks in its exchange - share the model, which is
// single-threaded. Test-only: the port itself calls the library lock-free.
#pragma once

#include "drivers/verbs/verbs_calls.h"

namespace lanecast::drivers::verbs::model {

// The locked table over `inner`; one inner table per process at a time.
const VerbsCalls& locked_calls(const VerbsCalls& inner);

}  // namespace lanecast::drivers::verbs::model
