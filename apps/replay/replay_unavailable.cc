// The static program is built without libpcap (Debian's static libpcap needs
// libdbus and libsystemd, which have no static archives): replay and record
// say so.
#include <stdexcept>

#include "apps/replay/record_sink.h"
#include "apps/replay/replay_command.h"

namespace lanecast::apps {

int replay_main(int, char**) {
  throw std::runtime_error("this lanecast is built without libpcap (-Dstatic_binary=true): replay is not in it");
}
int record_main(int, char**) {
  throw std::runtime_error("this lanecast is built without libpcap (-Dstatic_binary=true): record is not in it");
}
std::unique_ptr<RecordSink> make_record_sink(const std::string&) {
  throw std::runtime_error("this lanecast is built without libpcap (-Dstatic_binary=true): --record is not in it");
}

}  // namespace lanecast::apps
