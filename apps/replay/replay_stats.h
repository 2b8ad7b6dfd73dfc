// `replay --stats S`: a thread that, every S seconds while the file is
// replayed, shows on stderr the packets sent of the total, the rate, the
// send error so far (p50, p99), what the slowest member delivered and the
// time left (apps/common/progress_line.h: in place on a terminal, plain
// lines otherwise). It reads what the replaying thread stores (ReplayLive)
// and the members' counts; it never touches the replaying thread's work.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "apps/common/progress_line.h"
#include "apps/replay/replay_config.h"

namespace lanecast::apps {

class ReplayStats {
 public:
  // total: messages to publish in all loops; slowest: what the member that
  // delivered least has delivered (nullptr: not known here).
  ReplayStats(double every_s, uint64_t total, const ReplayLive& live, std::function<uint64_t()> slowest);
  // Stops the thread; the last line stays.
  ~ReplayStats();
  ReplayStats(const ReplayStats&) = delete;
  ReplayStats& operator=(const ReplayStats&) = delete;

 private:
  void run();
  void show(double elapsed_s);

  uint64_t every_ns_;
  uint64_t total_;
  const ReplayLive& live_;
  std::function<uint64_t()> slowest_;
  ProgressLine line_;
  uint64_t start_ns_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace lanecast::apps
