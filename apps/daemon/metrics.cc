#include "apps/daemon/metrics.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <stdexcept>
#include <thread>

namespace lanecast::daemon {

std::string prometheus_text(const std::vector<Metric>& ms, const std::string& group, uint32_t rank) {
  std::string out;
  std::set<std::string> described;
  char line[512];
  for (const Metric& m : ms) {
    if (described.insert(m.name).second) {
      out += "# HELP " + m.name + " " + m.help + "\n";
      out += "# TYPE " + m.name + (m.counter ? " counter\n" : " gauge\n");
    }
    std::snprintf(line, sizeof line, "%s{group=\"%s\",rank=\"%u\"%s%s} %llu\n", m.name.c_str(), group.c_str(), rank,
                  m.labels.empty() ? "" : ",", m.labels.c_str(), static_cast<unsigned long long>(m.value));
    out += line;
  }
  return out;
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
}

StatsFile::StatsFile(std::string path, const std::string& group, uint32_t rank, uint32_t group_size)
    : path_(std::move(path)) {
  bytes_ = sizeof(StatsHeader) + kMaxStatsEntries * sizeof(StatsEntry);
  const int f = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (f < 0 || ::posix_fallocate(f, 0, static_cast<off_t>(bytes_)) != 0) {
    if (f >= 0) ::close(f);
    throw std::runtime_error("cannot make the stats file " + path_ + ": " + std::strerror(errno));
  }
  map_ = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, f, 0);
  ::close(f);
  if (map_ == MAP_FAILED) throw std::runtime_error("cannot map " + path_ + ": " + std::strerror(errno));
  h_ = new (map_) StatsHeader{};
  h_->version = 1;
  h_->pid = static_cast<int32_t>(::getpid());
  h_->rank = rank;
  h_->group_size = group_size;
  std::snprintf(h_->group, sizeof h_->group, "%s", group.c_str());
  std::atomic_thread_fence(std::memory_order_release);
  h_->magic = StatsHeader::kMagic;
}

StatsFile::~StatsFile() {
  if (map_ != nullptr && map_ != MAP_FAILED) ::munmap(map_, bytes_);
  ::unlink(path_.c_str());
}

void StatsFile::write(const std::vector<Metric>& ms, uint64_t now_ns) {
  auto* e = reinterpret_cast<StatsEntry*>(h_ + 1);
  h_->seq.store(h_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // odd: writing
  std::atomic_thread_fence(std::memory_order_release);
  uint32_t n = 0;
  for (const Metric& m : ms) {
    if (n == kMaxStatsEntries) break;
    std::snprintf(e[n].name, sizeof e[n].name, "%s%s%s%s", m.name.c_str(), m.labels.empty() ? "" : "{",
                  m.labels.c_str(), m.labels.empty() ? "" : "}");
    e[n].value = m.value;
    ++n;
  }
  h_->count = n;
  h_->updated_ns = now_ns;
  std::atomic_thread_fence(std::memory_order_release);
  h_->seq.store(h_->seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);  // even: done
}

StatsSnapshot read_stats(const std::string& path) {
  const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f < 0) throw std::runtime_error("no stats at " + path + " (is the daemon running? its --dir?): " + std::strerror(errno));
  struct stat st{};
  const size_t bytes = sizeof(StatsHeader) + kMaxStatsEntries * sizeof(StatsEntry);
  if (::fstat(f, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    ::close(f);
    throw std::runtime_error(path + " is not a lanecast stats file");
  }
  void* map = ::mmap(nullptr, bytes, PROT_READ, MAP_SHARED, f, 0);
  ::close(f);
  if (map == MAP_FAILED) throw std::runtime_error("cannot map " + path);
  const auto* h = static_cast<const StatsHeader*>(map);
  const auto* e = reinterpret_cast<const StatsEntry*>(h + 1);
  StatsSnapshot s;
  bool ok = false;
  for (int tries = 0; tries < 1000 && !ok; ++tries) {
    const uint64_t a = h->seq.load(std::memory_order_acquire);
    if (h->magic != StatsHeader::kMagic || (a & 1)) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    s.entries.clear();
    const uint32_t n = std::min(h->count, kMaxStatsEntries);
    for (uint32_t i = 0; i < n; ++i) {
      char name[sizeof e[i].name + 1] = {};
      std::memcpy(name, e[i].name, sizeof e[i].name);
      s.entries.emplace_back(name, e[i].value);
    }
    s.group.assign(h->group, strnlen(h->group, sizeof h->group));
    s.rank = h->rank;
    s.group_size = h->group_size;
    s.pid = h->pid;
    s.updated_ns = h->updated_ns;
    std::atomic_thread_fence(std::memory_order_acquire);
    ok = h->seq.load(std::memory_order_relaxed) == a;
  }
  ::munmap(map, bytes);
  if (!ok) throw std::runtime_error(path + ": the daemon never finished writing it");
  return s;
}

}  // namespace lanecast::daemon
