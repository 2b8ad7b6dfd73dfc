#include "apps/replay/record_sink.h"

#include <cstdio>
#include <exception>

#include "apps/replay/pcap_writer.h"

namespace lanecast::apps {
namespace {

class PcapRecordSink final : public RecordSink {
 public:
  explicit PcapRecordSink(const std::string& path)
      : w_(path, replay::RecordLink::Udp), to_real_(replay::realtime_offset_ns()) {}
  ~PcapRecordSink() override {
    // A destructor must not throw: a file that could not be written is said.
    try {
      w_.flush();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lanecast: --record: %s\n", e.what());
    }
  }
  void write(const StreamMessage& m) override {
    w_.write(static_cast<uint64_t>(static_cast<int64_t>(clock_ns()) + to_real_), m.publisher, m.stream, m.data);
  }

 private:
  replay::PcapWriter w_;
  int64_t to_real_;
};

}  // namespace

std::unique_ptr<RecordSink> make_record_sink(const std::string& path) { return std::make_unique<PcapRecordSink>(path); }

}  // namespace lanecast::apps
