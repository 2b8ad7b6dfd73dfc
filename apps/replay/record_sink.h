// Delivered messages to a pcap file, for programs that deliver messages
// (lanecast daemon --record): libpcap where the program has it, a clear
// refusal where it was built without (the static program).
#pragma once

#include <memory>
#include <string>

#include "lanecast/lanecast.h"

namespace lanecast::apps {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  virtual void write(const StreamMessage& m) = 0;
};

// Throws std::runtime_error when the file cannot be written, or the program
// has no libpcap.
std::unique_ptr<RecordSink> make_record_sink(const std::string& path);

}  // namespace lanecast::apps
