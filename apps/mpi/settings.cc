#include "apps/mpi/settings.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "apps/common/options.h"

namespace lanecast::mpi {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : nullptr;
}

bool yes_no(std::string_view v, const char* name) {
  if (v == "1" || v == "on" || v == "yes" || v == "true") return true;
  if (v == "0" || v == "off" || v == "no" || v == "false") return false;
  throw apps::UsageError(std::string(name) + ": '" + std::string(v) + "' is neither 1/on nor 0/off");
}

template <size_t N>
void copy_text(char (&to)[N], const std::string& from, const char* name) {
  if (from.size() >= N)
    throw apps::UsageError(std::string(name) + ": longer than " + std::to_string(N - 1) + " characters");
  std::memcpy(to, from.c_str(), from.size() + 1);
}

// A group file's [group] settings, where the environment does not say.
void from_group_file(JobSettings& s, const std::string& path) {
  const GroupSpec g = load_group_file(path);
  copy_text(s.algo, g.algo, "the group file's algo");
  copy_text(s.auto_rules, g.auto_rules_file, "the group file's auto_rules");
  s.max_message = g.max_message_bytes;
  s.timeout_ms = g.peer_timeout_ms;
  s.rate_mbit = g.port_rate_mbit;
  s.overhead_bytes = g.port_overhead_bytes;
  s.segment = g.segment_bytes;
  s.window = g.window;
  s.multicast = g.multicast;
}

void read_job(JobSettings& s) {
  if (const char* v = env("LANECAST_MPI")) s.enabled = yes_no(v, "LANECAST_MPI");
  if (!s.enabled) return;
  if (const char* v = env("LANECAST_MPI_GROUP_FILE")) from_group_file(s, v);
  if (const char* v = env("LANECAST_MPI_MIN_BYTES")) s.min_bytes = apps::parse_size(v, "LANECAST_MPI_MIN_BYTES");
  if (const char* v = env("LANECAST_MPI_MAX_MESSAGE")) {
    s.max_message = apps::parse_size(v, "LANECAST_MPI_MAX_MESSAGE");
    if (s.max_message < 4096 || s.max_message > (uint64_t{1} << 32))
      throw apps::UsageError("LANECAST_MPI_MAX_MESSAGE: " + std::string(v) + " is outside 4K .. 4G");
  }
  if (const char* v = env("LANECAST_MPI_TIMEOUT_MS"))
    s.timeout_ms = apps::parse_double(v, "LANECAST_MPI_TIMEOUT_MS", kMinTimeoutMs, kMaxTimeoutMs);
  if (const char* v = env("LANECAST_MPI_ALGO")) copy_text(s.algo, v, "LANECAST_MPI_ALGO");
  if (const char* v = env("LANECAST_MPI_AUTO_RULES")) copy_text(s.auto_rules, v, "LANECAST_MPI_AUTO_RULES");
  if (const char* v = env("LANECAST_MPI_RATE_MBIT"))
    s.rate_mbit = apps::parse_double(v, "LANECAST_MPI_RATE_MBIT", 0, 1e7);
  if (const char* v = env("LANECAST_MPI_PORT_OVERHEAD"))
    s.overhead_bytes = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_PORT_OVERHEAD", 64));
  if (const char* v = env("LANECAST_MPI_SEGMENT")) {
    s.segment = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_SEGMENT", 9000));
    if (s.segment != 0 && s.segment < 64) throw apps::UsageError("LANECAST_MPI_SEGMENT: 0 (from the MTU) or 64 .. 9000");
  }
  if (const char* v = env("LANECAST_MPI_WINDOW")) {
    s.window = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_WINDOW", 129));
    if (s.window == 0) throw apps::UsageError("LANECAST_MPI_WINDOW: 1 .. 129 frames");
  }
  if (const char* v = env("LANECAST_MPI_MULTICAST")) s.multicast = yes_no(v, "LANECAST_MPI_MULTICAST");
  if (const char* v = env("LANECAST_MPI_LOOK_US"))
    s.look_us = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_LOOK_US", 1'000'000));
}

}  // namespace

JobSettings read_job_settings() {
  JobSettings s;
  try {
    read_job(s);
  } catch (const std::exception& e) {
    s = JobSettings{};
    s.enabled = false;
    std::strncpy(s.error, e.what(), sizeof s.error - 1);
  }
  return s;
}

HostSettings read_host_settings() {
  HostSettings h;
  try {
    if (const char* v = env("LANECAST_MPI_STATS")) {
      const std::string_view l = v;
      h.stats = l == "2" ? 2 : yes_no(v, "LANECAST_MPI_STATS (0, 1 or 2)") ? 1 : 0;
    }
    if (const char* v = env("LANECAST_MPI_LOG")) {
      const std::string_view l = v;
      if (l != "emergency" && l != "alert" && l != "critical" && l != "error" && l != "warning" && l != "notice" &&
          l != "info" && l != "debug")
        throw apps::UsageError("LANECAST_MPI_LOG: '" + std::string(l) +
                               "' is not a level (emergency, alert, critical, error, warning, notice, info, debug)");
      h.log_level = v;
    }
    if (const char* v = env("LANECAST_MPI_LANES")) h.lanes = v;
    if (const char* v = env("LANECAST_MPI_IFACE")) h.ifaces = v;
    if (const char* v = env("LANECAST_MPI_GROUP_FILE")) h.group_file = v;
    if (const char* v = env("LANECAST_MPI_QDISC_BYPASS")) h.bypass_qdisc = yes_no(v, "LANECAST_MPI_QDISC_BYPASS");
    if (const char* v = env("LANECAST_MPI_MEMORY_MB")) {
      h.memory_mb = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_MEMORY_MB", 1u << 20));
      if (h.memory_mb != 0 && h.memory_mb < 64) throw apps::UsageError("LANECAST_MPI_MEMORY_MB: 0 (sized) or 64 ..");
    }
    if (const char* v = env("LANECAST_MPI_GROUPS")) {
      h.groups = static_cast<uint32_t>(apps::parse_uint(v, "LANECAST_MPI_GROUPS", 64));
      if (h.groups == 0) throw apps::UsageError("LANECAST_MPI_GROUPS: 1 .. 64");
    }
    const int given = !h.lanes.empty() + !h.ifaces.empty() + !h.group_file.empty();
    if (given > 1)
      throw apps::UsageError("name this rank's lanes one way: LANECAST_MPI_LANES, LANECAST_MPI_IFACE or "
                             "LANECAST_MPI_GROUP_FILE, not several");
  } catch (const std::exception& e) {
    h.error = e.what();
  }
  return h;
}

GroupSpec group_spec_of(const JobSettings& s) {
  GroupSpec g;
  g.bootstrap = "exchange";
  g.algo = s.algo;
  g.auto_rules_file = s.auto_rules;
  g.segment_bytes = s.segment;
  g.max_message_bytes = s.max_message;
  g.window = s.window;
  g.peer_timeout_ms = s.timeout_ms;
  g.port_rate_mbit = s.rate_mbit;
  g.port_overhead_bytes = s.overhead_bytes;
  g.multicast = s.multicast;
  // Broadcasts only: the smallest stream windows, so a group's pools hold
  // messages, not stream batches nobody publishes.
  g.streams.window_batches = 16;
  g.streams.streams_per_member = 1;
  return g;
}

}  // namespace lanecast::mpi
