// `lanecast replay` (a capture to every member, paced) and `lanecast record`
// (a member's deliveries to a capture).
#pragma once

namespace lanecast::apps {
int replay_main(int argc, char** argv);  // argv[0] is "replay"
int record_main(int argc, char** argv);  // argv[0] is "record"
}
