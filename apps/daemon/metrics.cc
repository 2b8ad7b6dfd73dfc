#include "apps/daemon/metrics.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>

#include "apps/daemon/daemon_identity.h"

namespace lanecast::daemon {
namespace {

// HELP text escapes backslash and line feed (not quotes).
std::string escape_help(std::string_view v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (const char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string label_text(const std::vector<Label>& labels) {
  std::string out;
  for (const Label& l : labels) {
    if (!out.empty()) out += ',';
    out += l.key + "=\"" + escape_label_value(l.value) + "\"";
  }
  return out;
}

std::string prometheus_text(const std::vector<Metric>& ms, const std::string& group, uint32_t rank) {
  std::string out;
  std::set<std::string> described;
  const std::string common = "group=\"" + escape_label_value(group) + "\",rank=\"" + std::to_string(rank) + "\"";
  for (const Metric& m : ms) {
    if (described.insert(m.name).second) {
      out += "# HELP " + m.name + " " + escape_help(m.help) + "\n";
      out += "# TYPE " + m.name + (m.counter ? " counter\n" : " gauge\n");
    }
    out += m.name + "{" + common;
    if (!m.labels.empty()) out += "," + label_text(m.labels);
    out += "} " + std::to_string(m.value) + "\n";
  }
  return out;
}

StatsFile::StatsFile(int fd, const std::string& shown, const std::string& group, uint32_t rank, uint32_t group_size) {
  map_ = ::mmap(nullptr, kStatsFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map_ == MAP_FAILED) throw std::runtime_error("cannot map " + shown + ": " + std::strerror(err));
  h_ = new (map_) StatsHeader{};
  h_->version = StatsHeader::kVersion;
  h_->pid = static_cast<int32_t>(::getpid());
  h_->rank = rank;
  h_->group_size = group_size;
  std::snprintf(h_->group, sizeof h_->group, "%s", group.c_str());
  std::atomic_thread_fence(std::memory_order_release);
  h_->magic = StatsHeader::kMagic;
}

StatsFile::~StatsFile() {
  if (map_ != nullptr && map_ != MAP_FAILED) ::munmap(map_, kStatsFileBytes);
}

void StatsFile::write(const std::vector<Metric>& ms, uint64_t now_ns) {
  auto* e = reinterpret_cast<StatsEntry*>(h_ + 1);
  h_->seq.store(h_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  uint32_t n = 0, cut = 0;
  for (const Metric& m : ms) {
    if (n == kMaxStatsEntries) break;
    std::string name = m.name;
    if (!m.labels.empty()) name += "{" + label_text(m.labels) + "}";
    if (name.size() >= sizeof e[n].name) ++cut;
    std::snprintf(e[n].name, sizeof e[n].name, "%s", name.c_str());
    e[n].value = m.value;
    ++n;
  }
  h_->count = n;
  h_->left_out = static_cast<uint32_t>(ms.size() - n);
  h_->names_cut = cut;
  h_->updated_ns = now_ns;
  std::atomic_thread_fence(std::memory_order_release);
  h_->seq.store(h_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);  // even: done
}

StatsSnapshot read_stats(const std::string& path, const std::string& trusted_owner) {
  const int f = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (f < 0) throw std::runtime_error("no stats at " + path + " (is the daemon running? its --dir?): " + std::strerror(errno));
  struct stat st{};
  if (::fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<size_t>(st.st_size) < kStatsFileBytes) {
    ::close(f);
    throw std::runtime_error(path + " is not a lanecast stats file of this version");
  }
  if (const std::string why = untrusted_file_owner(st.st_uid, trusted_owner, path); !why.empty()) {
    ::close(f);
    throw std::runtime_error(why);
  }
  void* map = ::mmap(nullptr, kStatsFileBytes, PROT_READ, MAP_SHARED, f, 0);
  ::close(f);
  if (map == MAP_FAILED) throw std::runtime_error("cannot map " + path);
  const auto* h = static_cast<const StatsHeader*>(map);
  const auto* e = reinterpret_cast<const StatsEntry*>(h + 1);
  StatsSnapshot s;
  bool ok = false;
  for (int tries = 0; tries < 1000 && !ok; ++tries) {
    const uint64_t a = h->seq.load(std::memory_order_acquire);
    if (h->magic == StatsHeader::kMagic && h->version != StatsHeader::kVersion) break;
    if (h->magic != StatsHeader::kMagic || (a & 1)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    s.entries.clear();
    const uint32_t n = std::min(h->count, kMaxStatsEntries);
    for (uint32_t i = 0; i < n; ++i) s.entries.emplace_back(std::string(e[i].name, strnlen(e[i].name, sizeof e[i].name)), e[i].value);
    s.group.assign(h->group, strnlen(h->group, sizeof h->group));
    s.rank = h->rank;
    s.group_size = h->group_size;
    s.pid = h->pid;
    s.updated_ns = h->updated_ns;
    s.left_out = h->left_out;
    s.names_cut = h->names_cut;
    std::atomic_thread_fence(std::memory_order_acquire);
    ok = h->seq.load(std::memory_order_relaxed) == a;
  }
  ::munmap(map, kStatsFileBytes);
  if (!ok) throw std::runtime_error(path + ": the daemon never finished writing it (or it is of another version)");
  return s;
}

std::string stats_cut_note(const StatsSnapshot& s) {
  if (s.left_out == 0 && s.names_cut == 0) return "";
  std::string note = "note: the stats file holds " + std::to_string(kMaxStatsEntries) + " counters of " +
                     std::to_string(sizeof(StatsEntry::name) - 1) + " characters;";
  if (s.left_out != 0) note += " " + std::to_string(s.left_out) + " counters were left out;";
  if (s.names_cut != 0) note += " " + std::to_string(s.names_cut) + " names were cut short;";
  return note + " the Prometheus file and /metrics have them all";
}

}  // namespace lanecast::daemon
