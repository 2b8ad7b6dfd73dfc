// `lanecast testbed up|down|status`: the shaped testbed of namespaces
// (testbed_spec.h) from the command line.
#pragma once

namespace lanecast::apps {
int testbed_main(int argc, char** argv);  // argv[0] is "testbed"
}
