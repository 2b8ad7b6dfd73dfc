#include "apps/replay/replay_options.h"

#include <string>
#include <string_view>

namespace lanecast::apps {

using replay::Timing;

OptionTable make_replay_table(ReplayConfig& c, int& timing_given) {
  OptionTable t;
  t.add({"pcap", "FILE", "", "the capture: pcap or pcapng, microsecond or nanosecond time stamps",
         [&](std::string_view v) { c.pcap = std::string(v); }});
  t.add({"whole-frame", "", "", "each packet as captured is a message (default: its UDP payload; other packets are skipped, counted)",
         [&](std::string_view) { c.whole_frame = true; }});
  t.add({"filter", "BPF", "", "only the packets this filter (tcpdump's syntax) takes",
         [&](std::string_view v) { c.filter = std::string(v); }});
  t.add({"speed", "X", "1", "send at the capture's own spacing divided by X (2: twice as fast)",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Speed, parse_double(v, "--speed", 1e-6, 1e9)};
           ++timing_given;
         }});
  t.add({"topspeed", "", "", "as fast as the stream takes them",
         [&](std::string_view) {
           c.timing = Timing{Timing::TopSpeed, 0};
           ++timing_given;
         }});
  t.add({"pps", "N", "", "N packets per second, evenly",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Pps, parse_double(v, "--pps", 1e-3, 1e9)};
           ++timing_given;
         }});
  t.add({"mbps", "N", "", "N Mbit/s of the messages' bytes",
         [&](std::string_view v) {
           c.timing = Timing{Timing::Mbps, parse_double(v, "--mbps", 1e-3, 1e7)};
           ++timing_given;
         }});
  t.add({"loop", "N", "1", "replay the file N times (each loop's timing starts afresh)",
         [&](std::string_view v) { c.loops = parse_uint(v, "--loop", 1'000'000); }});
  t.add({"nodes", "N", "8", "members in this process, on the in-process fabric",
         [&](std::string_view v) { c.nodes = static_cast<uint32_t>(parse_uint(v, "--nodes", 1024)); }});
  t.add({"publisher", "R", "0", "the rank that replays",
         [&](std::string_view v) { c.publisher = static_cast<Rank>(parse_uint(v, "--publisher", 1023)); }});
  t.add({"verify", "", "", "check every member's messages against the file: count, order, bytes",
         [&](std::string_view) { c.verify = true; }});
  t.add({"record", "PATH", "", "write what each member delivered to pcap (nanosecond time stamps): in process a "
         "directory (member-R.pcap), with --config a file",
         [&](std::string_view v) { c.record = std::string(v); }});
  t.add({"link", "udp|raw", "udp (raw with --whole-frame)", "how --record writes messages: as UDP payloads (in "
         "Ethernet/IPv4/UDP to 239.255.0.1; a message over 65507 bytes, which no UDP datagram holds, with IP and UDP "
         "lengths 0, one over 262102 cut to the snap length), or as the frames themselves",
         [&](std::string_view v) {
           replay::parse_record_link(std::string(v));
           c.link = std::string(v);
         }});
  t.add({"config", "FILE", "", "run as member --rank of the group FILE describes (every member runs the same command)",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "with --config: this process's rank",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"testbed", "N", "", "one member process in each of N network namespaces, built for the run as `lanecast "
         "bench --testbed` builds them (root; --rate is then the links' tbf rate, default 200)",
         [&](std::string_view v) { c.testbed_nodes = static_cast<uint32_t>(parse_uint(v, "--testbed", 1'000'000)); }});
  t.add({"mtu", "M", "1500", "with --testbed: the links' MTU",
         [&](std::string_view v) { c.mtu = static_cast<uint32_t>(parse_uint(v, "--mtu", 9000)); }});
  t.add({"cores", "C", "auto", "polling cores", [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"rate", "MBIT", "10000", "in process: the fabric's link rate (0: unlimited)",
         [&](std::string_view v) { c.rate_mbit = parse_double(v, "--rate", 0, 1e7); }});
  t.add({"window-bytes", "BYTES", "4M", "the stream's window, 4K..16G; a packet may carry up to half of it, less 64",
         [&](std::string_view v) {
           c.window_bytes = parse_size(v, "--window-bytes");
           if (c.window_bytes < 4096 || c.window_bytes > (uint64_t{1} << 34))
             throw UsageError("--window-bytes " + std::string(v) + " is out of range; allowed 4K..16G");
         }});
  t.add({"read-ahead", "BYTES", "4M", "how much of the file is read ahead of the replaying thread, 64K..16G (the ring "
         "also holds up to twice the window of messages the members are still checking)",
         [&](std::string_view v) {
           c.read_ahead = parse_size(v, "--read-ahead");
           if (c.read_ahead < (64u << 10) || c.read_ahead > (uint64_t{1} << 34))
             throw UsageError("--read-ahead " + std::string(v) + " is out of range; allowed 64K..16G");
         }});
  t.add({"json", "", "", "print the result as one JSON object", [&](std::string_view) { c.json = true; }});
  t.add({"stats", "S", "5", "every S seconds a progress line on stderr: packets sent of the total, the rate, the send "
         "error so far (p50, p99), what the slowest member delivered, the time left; in place on a terminal; 0: none",
         [&](std::string_view v) { c.stats_s = parse_double(v, "--stats", 0, 86400); }});
  t.add({"quiet", "", "", "no progress lines (as --stats 0)", [&](std::string_view) { c.stats_s = 0; }});
  t.add({"counters", "", "", "every member's counters at the end", [&](std::string_view) { c.counters = true; }});
  return t;
}

const char* const kReplayUsage =
    "usage: lanecast replay --pcap FILE [--speed X | --topspeed | --pps N | --mbps N] [--loop N]\n"
    "                       [--nodes N] [--verify] [--record DIR] [--filter BPF] [--whole-frame] [--json]\n"
    "                       [--stats S | --quiet]\n"
    "       lanecast replay --pcap FILE --config GROUP --rank R ...   (one member per process)\n"
    "\n"
    "Replays a capture to every member of a group as one stream: each packet's UDP\n"
    "payload (or, --whole-frame, the packet) is a message, published when the\n"
    "schedule says - against absolute time, not by sleeping between packets - and\n"
    "delivered to every member in order, exactly once. Prints the packets and how\n"
    "many were skipped (not UDP, fragments, truncated), the send-time error against\n"
    "the schedule (p50/p99/max), the messages each member delivered and, with\n"
    "--verify, whether every member's messages equal the file's (count, order,\n"
    "bytes). --record writes each member's deliveries as pcap, for tcpdump, Wireshark\n"
    "or a later replay. Exit status 0 when everything was delivered (and verified).\n"
    "\n"
    "The file is never held in memory: it is read once to check it, then again as\n"
    "the schedule needs it, by a thread that keeps a ring of --read-ahead bytes\n"
    "ahead of the replaying thread (each --loop opens it again, unless it fits a\n"
    "quarter of the ring: then it is kept after the first); the members check\n"
    "against that ring or read the file themselves, and --record writes as the\n"
    "messages come. Memory depends on the options, not on the capture's size or\n"
    "--loop. file_waits counts the messages the ring did not hold yet when their\n"
    "turn came.\n"
    "\n";

}  // namespace lanecast::apps
