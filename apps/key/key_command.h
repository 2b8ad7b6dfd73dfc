#pragma once

namespace lanecast::apps {

// `lanecast key --new FILE | --fingerprint FILE`: group keys (docs/security.md).
int key_main(int argc, char** argv);

}  // namespace lanecast::apps
