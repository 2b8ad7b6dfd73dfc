// `lanecast record --config FILE --rank R --out FILE`: this process as one
// member of the group, writing every message it delivers - of every
// publisher's stream - to a pcap file with nanosecond time stamps (the
// moment it was delivered here), so what each node of a replay testbed
// received can be compared with what was sent. `lanecast daemon --record`
// does the same beside serving applications.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <thread>

#include "apps/common/group_member.h"
#include "apps/common/json_output.h"
#include "apps/common/options.h"
#include "apps/common/stop_signals.h"
#include "apps/replay/pcap_writer.h"
#include "apps/replay/replay_command.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {

int record_main(int argc, char** argv) {
  std::string config, out, link = "udp";
  std::optional<uint32_t> rank;
  uint64_t count = 0;
  double duration_s = 0, idle_s = 0;
  bool json = false;
  OptionTable t;
  t.add({"config", "FILE", "", "the group file: this process is one of its members",
         [&](std::string_view v) { config = std::string(v); }});
  t.add({"rank", "R", "", "this process's rank", [&](std::string_view v) { rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"out", "FILE", "", "the pcap file to write (nanosecond time stamps)", [&](std::string_view v) { out = std::string(v); }});
  t.add({"link", "udp|raw", "udp", "messages as UDP payloads (to 239.255.0.1, from 10.255.P.Q for publisher rank P*256+Q; "
         "a message over 65507 bytes, which no UDP datagram holds, with IP and UDP lengths 0 - replay reads it back "
         "whole - and one over 262102 cut to the snap length) or as the frames themselves (messages that were whole frames)",
         [&](std::string_view v) {
           replay::parse_record_link(std::string(v));
           link = std::string(v);
         }});
  t.add({"count", "N", "0", "stop after N messages (0: no limit)", [&](std::string_view v) { count = parse_uint(v, "--count", UINT64_MAX); }});
  t.add({"duration", "S", "0", "stop after S seconds (0: no limit)",
         [&](std::string_view v) { duration_s = parse_double(v, "--duration", 0, 1e9); }});
  t.add({"idle", "S", "0", "stop once nothing arrived for S seconds after the first message (0: never)",
         [&](std::string_view v) { idle_s = parse_double(v, "--idle", 0, 1e9); }});
  t.add({"json", "", "", "print the result as one JSON object", [&](std::string_view) { json = true; }});
  if (t.parse(argc, argv, 1)) {
    std::fputs("usage: lanecast record --config FILE --rank R --out FILE [--count N] [--duration S] [--idle S]\n"
               "                       [--json]\n\n"
               "Joins the group as member R and writes every message it delivers to a pcap file\n"
               "(tcpdump -r FILE, Wireshark, or lanecast replay --pcap FILE read it). Stops at\n"
               "--count, --duration, --idle, or SIGTERM/SIGINT (the file is complete either way).\n\n",
               stdout);
    std::fputs(t.help().c_str(), stdout);
    return 0;
  }
  if (config.empty() || out.empty()) throw UsageError("--config FILE and --out FILE are required");
  const GroupMember who = load_group_for(config, rank, 0, 1);
  StopSignals signals;
  Engine engine(member_engine_options(who, 0, true, false));
  auto g = engine.join(who.spec, who.rank);
  Member& me = g->member();
  replay::PcapWriter w(out, replay::parse_record_link(link));
  const int64_t to_real = replay::realtime_offset_ns();
  const uint64_t start = clock_ns();
  uint64_t last = 0;
  StreamMessage m;
  while (StopSignals::received() == 0 && (count == 0 || w.written() < count) &&
         (duration_s == 0 || clock_ns() - start < static_cast<uint64_t>(duration_s * 1e9)) &&
         (idle_s == 0 || last == 0 || clock_ns() - last < static_cast<uint64_t>(idle_s * 1e9)) && me.stream_status().ok()) {
    if (!me.next_for(m, std::chrono::milliseconds(20))) continue;
    last = clock_ns();
    w.write(static_cast<uint64_t>(static_cast<int64_t>(last) + to_real), m.publisher, m.stream, m.data);
  }
  w.flush();
  // A moment for this member's last acks and progress reports to leave: the
  // publisher waits for them before it may call its messages delivered.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (json) {
    Json j;
    j["rank"] = g->rank();
    j["out"] = out;
    j["link"] = link;
    j["messages"] = w.written();
    j["seconds"] = rounded(static_cast<double>(clock_ns() - start) / 1e9);
    j["ok"] = me.stream_status().ok();
    if (!me.stream_status().ok()) j["error"] = me.stream_status().message;
    print_json(j);
  } else {
    std::printf("lanecast record: rank %u wrote %" PRIu64 " messages to %s%s\n", g->rank(), w.written(), out.c_str(),
                me.stream_status().ok() ? "" : (" (" + me.stream_status().message + ")").c_str());
  }
  return me.stream_status().ok() ? 0 : 1;
}

}  // namespace lanecast::apps
