// `lanecast daemon` and `lanecast stat`.
#pragma once

namespace lanecast::apps {
int daemon_main(int argc, char** argv);  // argv[0] is "daemon"
int stat_main(int argc, char** argv);    // argv[0] is "stat"
}
