// `lanecast plan`: predict a broadcast's time on a model network with the
// discrete-event simulator (algos/sim), from the same machines the engine runs.
#pragma once

namespace lanecast::apps {

// argv[0] is "plan". Writes the report to std::cout and errors to std::cerr.
// Returns 0 on success, 1 when a simulated broadcast did not complete (a machine
// bug), 2 on bad usage.
int plan_main(int argc, char** argv);

}  // namespace lanecast::apps
