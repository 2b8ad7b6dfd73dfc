// `lanecast run`: this process as one member of a group described by a group
// file (one member per process, one engine per host).
#pragma once

namespace lanecast::apps {
int run_main(int argc, char** argv);  // argv[0] is "run"
}
