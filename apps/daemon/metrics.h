// The daemon's counters, read from outside: collected once per interval
// from the member (its counters, per peer, per stream), its clients and its
// feeds; written to a file in shared memory that `lanecast stat` maps, and
// in Prometheus' text format to a file (node_exporter's textfile collector)
// and on /metrics.
//
// Label values come from outside - a client's name, the group's - so every
// one is escaped as the exposition format says (backslash, double quote,
// line feed); nothing a client picks can end a label, a sample or a line.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lanecast::daemon {

struct Label {
  std::string key;    // a Prometheus label name: ours, [a-z_]
  std::string value;  // anything; escaped where it is written
};

struct Metric {
  std::string name;    // lanecast_..., Prometheus style
  std::vector<Label> labels;
  uint64_t value = 0;
  bool counter = true;  // else a gauge
  std::string help;
};

// A label value as the text format writes it between its quotes.
std::string escape_label_value(std::string_view v);
// `k="v",k2="v2"` (values escaped), or empty.
std::string label_text(const std::vector<Label>& labels);

// Prometheus' text exposition format (version 0.0.4), every metric labelled
// with the group and the rank.
std::string prometheus_text(const std::vector<Metric>& m, const std::string& group, uint32_t rank);

// The stats file: a header and fixed entries, written under a sequence
// lock (odd while the writer is in it), so a reader never takes a torn copy.
// What does not fit is said, not dropped in silence: the header counts the
// metrics left out and the names cut short at the last write.
struct StatsHeader {
  static constexpr uint64_t kMagic = 0x7374617473636c6cULL;  // "llcstats"
  static constexpr uint32_t kVersion = 2;
  uint64_t magic;
  uint32_t version;
  uint32_t count;
  std::atomic<uint64_t> seq;
  uint64_t updated_ns;  // CLOCK_MONOTONIC
  int32_t pid;
  uint32_t rank;
  uint32_t group_size;
  uint32_t left_out;    // metrics past kMaxStatsEntries at the last write
  uint32_t names_cut;   // names longer than an entry holds, cut at the last write
  uint32_t reserved;
  char group[64];
};
struct StatsEntry {
  char name[248];  // name{labels}, NUL-terminated
  uint64_t value;
};
static_assert(sizeof(StatsEntry) == 256);
inline constexpr uint32_t kMaxStatsEntries = 4096;
inline constexpr size_t kStatsFileBytes = sizeof(StatsHeader) + kMaxStatsEntries * sizeof(StatsEntry);

class StatsFile {
 public:
  // Maps `fd` (kStatsFileBytes, made by DaemonDir::make_stats_file) and
  // closes it; `shown` is its path, for messages.
  StatsFile(int fd, const std::string& shown, const std::string& group, uint32_t rank, uint32_t group_size);
  ~StatsFile();
  StatsFile(const StatsFile&) = delete;
  StatsFile& operator=(const StatsFile&) = delete;
  void write(const std::vector<Metric>& m, uint64_t now_ns);
  uint32_t left_out() const { return h_->left_out; }
  uint32_t names_cut() const { return h_->names_cut; }

 private:
  void* map_ = nullptr;
  StatsHeader* h_ = nullptr;
};

struct StatsSnapshot {
  std::string group;
  uint32_t rank = 0, group_size = 0;
  int pid = 0;
  uint64_t updated_ns = 0;
  uint32_t left_out = 0, names_cut = 0;
  std::vector<std::pair<std::string, uint64_t>> entries;
};
// A consistent copy of a stats file; throws std::runtime_error if there is
// none (or `path` is not a regular file: a link there is not followed).
// `trusted_owner`: the file must belong to root, this user or that user
// (daemon_identity.h), or it is refused before it is read.
StatsSnapshot read_stats(const std::string& path, const std::string& trusted_owner = "");
// What a snapshot could not hold, for a person ("" when nothing was cut).
std::string stats_cut_note(const StatsSnapshot& s);

}  // namespace lanecast::daemon
