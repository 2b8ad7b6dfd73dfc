#include "apps/bench/cpu_wait.h"

#include <dirent.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace lanecast::apps {
namespace {

bool is_polling_thread(const std::string& task) {
  char comm[64] = "";
  if (FILE* f = std::fopen((task + "/comm").c_str(), "r")) {
    if (std::fgets(comm, sizeof comm, f) == nullptr) comm[0] = '\0';
    std::fclose(f);
  }
  return std::strncmp(comm, "rte-worker", 10) == 0;
}

uint64_t run_queue_ns(const std::string& task) {
  unsigned long long on_cpu = 0, waited = 0;
  FILE* f = std::fopen((task + "/schedstat").c_str(), "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%llu %llu", &on_cpu, &waited) != 2) waited = 0;
  std::fclose(f);
  return waited;
}

}  // namespace

uint64_t polling_threads_wait_ns() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return 0;
  uint64_t total = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    if (is_polling_thread(task)) total += run_queue_ns(task);
  }
  closedir(d);
  return total;
}

}  // namespace lanecast::apps
