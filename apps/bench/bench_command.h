// `lanecast bench`: broadcast latency and bandwidth on the in-process fabric,
// in the spirit of osu_bcast.
#pragma once

namespace lanecast::apps {
int bench_main(int argc, char** argv);  // argv[0] is "bench"
}
