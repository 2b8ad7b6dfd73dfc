// The daemon's counters, read from outside: collected once per interval
// from the member (its counters, per peer, per stream), its clients and its
// feeds; written to a file in shared memory that `lanecast stat` maps, and
// in Prometheus' text format to a file (node_exporter's textfile collector)
// and on /metrics.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace lanecast::daemon {

struct Metric {
  std::string name;    // lanecast_..., Prometheus style
  std::string labels;  // `peer="3",stream="0"` or empty
  uint64_t value = 0;
  bool counter = true;  // else a gauge
  std::string help;
};

// Prometheus' text exposition format (version 0.0.4), every metric labelled
// with the group and the rank.
std::string prometheus_text(const std::vector<Metric>& m, const std::string& group, uint32_t rank);
// Writes `text` to `path` atomically (a temporary file, then rename).
void write_file_atomically(const std::string& path, const std::string& text);

// The stats file: a header and fixed entries, written under a sequence
// lock (odd while the writer is in it), so a reader never takes a torn copy.
struct StatsHeader {
  static constexpr uint64_t kMagic = 0x7374617473636c6cULL;  // "llcstats"
  uint64_t magic;
  uint32_t version;
  uint32_t count;
  std::atomic<uint64_t> seq;
  uint64_t updated_ns;  // CLOCK_MONOTONIC
  int32_t pid;
  uint32_t rank;
  uint32_t group_size;
  uint32_t reserved;
  char group[64];
};
struct StatsEntry {
  char name[112];  // name{labels}
  uint64_t value;
};
inline constexpr uint32_t kMaxStatsEntries = 4096;

class StatsFile {
 public:
  StatsFile(std::string path, const std::string& group, uint32_t rank, uint32_t group_size);
  ~StatsFile();  // removes the file
  void write(const std::vector<Metric>& m, uint64_t now_ns);

 private:
  std::string path_;
  void* map_ = nullptr;
  size_t bytes_ = 0;
  StatsHeader* h_ = nullptr;
};

struct StatsSnapshot {
  std::string group;
  uint32_t rank = 0, group_size = 0;
  int pid = 0;
  uint64_t updated_ns = 0;
  std::vector<std::pair<std::string, uint64_t>> entries;
};
// A consistent copy of a stats file; throws std::runtime_error if there is none.
StatsSnapshot read_stats(const std::string& path);

}  // namespace lanecast::daemon
