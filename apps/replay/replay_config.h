// `lanecast replay`'s settings, and what its three ways of running (in
// process, one member per process, a testbed of member processes) share.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>

#include "apps/bench/log_histogram.h"
#include "apps/common/json_output.h"
#include "apps/replay/pcap_source.h"
#include "apps/replay/pcap_writer.h"
#include "apps/replay/read_ahead.h"
#include "apps/replay/replay_schedule.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

struct ReplayConfig {
  std::string pcap;
  bool whole_frame = false;
  std::string filter;
  replay::Timing timing;
  uint64_t loops = 1;
  uint32_t nodes = 8;
  Rank publisher = 0;
  bool verify = false;
  std::string record;  // in process: a directory (member-R.pcap each); a member: a file
  std::string link;    // record's link: "" = raw with --whole-frame, else udp
  bool json = false;
  bool counters = false;
  double stats_s = 5;  // --stats: seconds between progress lines; 0: none
  uint32_t cores = 0;
  double rate_mbit = 10'000;
  std::string config;
  std::optional<uint32_t> rank;
  uint64_t window_bytes = 0;  // 0: 4M
  uint64_t read_ahead = 4u << 20;
  uint32_t testbed_nodes = 0; // --testbed N: a member process per namespace
  uint32_t mtu = 1500;

  uint64_t window() const { return window_bytes ? window_bytes : 4u << 20; }
  replay::CaptureSpec capture() const { return {pcap, whole_frame, filter, window() / 2 - 64}; }
  replay::RecordLink record_link() const {
    return link.empty() ? (whole_frame ? replay::RecordLink::Raw : replay::RecordLink::Udp)
                        : replay::parse_record_link(link);
  }
  // The read-ahead ring: the messages read ahead, and those published whose
  // members are still checking them (at most the stream's window, with the
  // records' heads).
  uint64_t ring_bytes() const { return read_ahead + 2 * window(); }
};

// What the publisher did.
struct ReplayOutcome {
  uint64_t published = 0, would_block = 0;
  uint64_t file_waits = 0;  // messages the ring did not hold yet when the replaying thread came to them
  LogHistogram error;       // send time - scheduled time
  double seconds = 0;
};

// What the replaying thread shows of itself while it runs (--stats): it
// stores these about every 100 ms, from its own loop, so reading them costs
// it nothing; the reporting thread loads them.
struct ReplayLive {
  std::atomic<uint64_t> published{0};
  std::atomic<uint64_t> error_p50_ns{0}, error_p99_ns{0};
};

// Every message of the ring's slot 0 at its time, every loop re-anchored.
// Throws std::runtime_error when the stream or the reader fails.
ReplayOutcome publish_all(Publisher& pub, replay::ReadAhead& ra, const replay::Timing& timing,
                          ReplayLive* live = nullptr);

void print_source(const ReplayConfig& c, const replay::CaptureSummary& s);

// The process's peak resident set (VmHWM), in MiB.
double peak_rss_mib();

// --json: the schedule's name ("topspeed", "speed", "pps", "mbps"), and the
// send error's fields - p50, p99, max and the histogram as [upper us, count]
// bands; zeros and [] when not timed (--topspeed has no schedule).
const char* timing_name(const replay::Timing& timing);
void add_send_error(Json& j, const ReplayOutcome& o, bool timed);

int replay_in_process(const ReplayConfig& c, const replay::CaptureSummary& s);
int replay_member(const ReplayConfig& c, const replay::CaptureSummary& s);

}  // namespace lanecast::apps
