// `lanecast daemon --config FILE --rank R`: the broadcast appliance. The
// process is one member of the group, run by its polling cores; its own
// thread serves the host's applications through shared memory
// (clients.h), an optional UDP feed in and out (udp_feed.h), and the
// counters (metrics.h). Every message published here - by an application
// or the feed - goes on this member's stream; every message any member
// published is handed to every local subscriber, the UDP sink and the
// record file.
#include "apps/daemon/daemon_command.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "apps/common/group_member.h"
#include "apps/common/options.h"
#include "apps/common/stop_signals.h"
#include "apps/daemon/access_policy.h"
#include "apps/daemon/clients.h"
#include "apps/daemon/daemon_dir.h"
#include "apps/daemon/metrics.h"
#include "apps/daemon/metrics_server.h"
#include "apps/daemon/safe_files.h"
#include "apps/daemon/udp_feed.h"
#include "apps/replay/record_sink.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

struct DaemonConfig {
  std::string config;
  std::optional<uint32_t> rank;
  std::string dir;
  uint32_t cores = 0;
  bool yield_when_idle = false;
  std::string udp_in, udp_out;
  std::string udp_in_from = daemon::kDefaultUdpSenders;
  int udp_ttl = 1;
  std::string prometheus;
  uint32_t metrics_port = 0;
  std::string metrics_addr = "127.0.0.1";
  double stats_interval_ms = 1000;
  double duration_s = 0;
  std::string record;
  std::string allow_group;
  daemon::ClientLimits clients;
};

OptionTable make_table(DaemonConfig& c) {
  OptionTable t;
  t.add({"config", "FILE", "", "the group file (config/groups/): this daemon is one of its members",
         [&](std::string_view v) { c.config = std::string(v); }});
  t.add({"rank", "R", "", "this daemon's rank in the group (a pmix group: the launcher's, if left out)",
         [&](std::string_view v) { c.rank = static_cast<uint32_t>(parse_uint(v, "--rank", 1023)); }});
  t.add({"dir", "DIR", "/run/lanecast/GROUP-rRANK",
         "where applications find the daemon: its control.sock and the stats file (clients' memory is in memfds). "
         "Made if absent; an existing one must be a directory of the daemon's user that nobody else may write to. "
         "The default is under /run, where no ordinary user can take the name first (a root daemon makes "
         "/run/lanecast; the systemd unit's RuntimeDirectory= makes it for its user)",
         [&](std::string_view v) { c.dir = std::string(v); }});
  t.add({"cores", "C", "auto", "polling cores of the member (default: one per usable CPU but one, 1..2)",
         [&](std::string_view v) { c.cores = static_cast<uint32_t>(parse_uint(v, "--cores", 64)); }});
  t.add({"yield-when-idle", "", "", "idle polling cores yield their CPU (several daemons on one host's CPUs)",
         [&](std::string_view) { c.yield_when_idle = true; }});
  t.add({"udp-in", "ADDR:PORT[@IF]", "",
         "a UDP feed: every datagram to ADDR:PORT (a multicast group is joined on the interface with address IF) "
         "is published on this member's stream - from the senders --udp-in-from names only",
         [&](std::string_view v) { c.udp_in = std::string(v); }});
  t.add({"udp-in-from", "ADDR[/BITS][:PORT],...", daemon::kDefaultUdpSenders,
         "the senders --udp-in takes datagrams from (any: everyone); the feed's datagrams are published as this "
         "member's own, sealed in a keyed group, so the default is this host's loopback only. Others are dropped "
         "and counted (lanecast_udp_in_refused{reason=\"sender_address\"|\"sender_port\"})",
         [&](std::string_view v) { c.udp_in_from = std::string(v); }});
  t.add({"udp-out", "ADDR:PORT[@IF]", "",
         "every message the member delivers is sent as one datagram to ADDR:PORT (multicast: out of interface IF)",
         [&](std::string_view v) { c.udp_out = std::string(v); }});
  t.add({"udp-ttl", "N", "1", "multicast TTL of --udp-out",
         [&](std::string_view v) { c.udp_ttl = static_cast<int>(parse_uint(v, "--udp-ttl", 255)); }});
  t.add({"prometheus", "FILE", "", "write the counters in Prometheus' text format to FILE at every --stats-interval "
         "(for node_exporter's textfile collector: a .prom file in its directory); written beside it and renamed "
         "over it, never through a link: a link, FIFO or another user's file at FILE is refused",
         [&](std::string_view v) { c.prometheus = std::string(v); }});
  t.add({"metrics-port", "P", "0", "serve the same text on http://--metrics-addr:P/metrics (0: off); no "
         "authentication: whoever reaches the address reads every counter",
         [&](std::string_view v) { c.metrics_port = static_cast<uint32_t>(parse_uint(v, "--metrics-port", 65535)); }});
  t.add({"metrics-addr", "ADDR", "127.0.0.1", "the address /metrics listens on (the default: this host only)",
         [&](std::string_view v) { c.metrics_addr = std::string(v); }});
  t.add({"stats-interval", "MS", "1000", "how often the stats file and the Prometheus file are written",
         [&](std::string_view v) { c.stats_interval_ms = parse_double(v, "--stats-interval", 10, 3'600'000); }});
  t.add({"evict-after", "MS", "2000",
         "a subscriber whose ring stays full this long, or that takes nothing from it this long while messages wait, "
         "is evicted (told so; its slot and memory freed) instead of holding the stream back",
         [&](std::string_view v) {
           c.clients.evict_after_ns = static_cast<uint64_t>(parse_double(v, "--evict-after", 1, 3'600'000) * 1e6);
         }});
  t.add({"publish-ring", "BYTES", "4M", "each publishing application's ring, unless it asks for another size",
         [&](std::string_view v) { c.clients.publish_bytes = parse_size(v, "--publish-ring"); }});
  t.add({"delivery-ring", "BYTES", "16M", "each subscribing application's ring, unless it asks for another size",
         [&](std::string_view v) { c.clients.delivery_bytes = parse_size(v, "--delivery-ring"); }});
  t.add({"max-clients", "N", "64", "connections served at once (answered or waiting for their hello)",
         [&](std::string_view v) { c.clients.max_clients = static_cast<uint32_t>(parse_uint(v, "--max-clients", 4096)); }});
  t.add({"max-clients-per-user", "N", "16", "of those, the most one user (uid) may hold, so no user takes every slot",
         [&](std::string_view v) {
           c.clients.max_clients_per_user = static_cast<uint32_t>(parse_uint(v, "--max-clients-per-user", 4096));
         }});
  t.add({"max-ring", "BYTES", "64M", "the largest ring an application may ask for (each of its two)",
         [&](std::string_view v) { c.clients.max_ring = parse_size(v, "--max-ring"); }});
  t.add({"max-client-memory", "BYTES", "1G",
         "all applications' shared memory together; a client that would pass it is refused",
         [&](std::string_view v) { c.clients.max_memory = parse_size(v, "--max-client-memory"); }});
  t.add({"hello-timeout", "MS", "2000", "a connection that has not said hello by then is closed (and counted)",
         [&](std::string_view v) {
           c.clients.hello_timeout_ns = static_cast<uint64_t>(parse_double(v, "--hello-timeout", 1, 3'600'000) * 1e6);
         }});
  t.add({"allow-group", "GROUP", "",
         "besides the daemon's own user and root, members of GROUP may connect (by their uid's groups or gid); "
         "the directory and its socket are made accessible to exactly that group (0750, 0660). Without it (the "
         "default) only the daemon's user and root: 0700, 0600",
         [&](std::string_view v) { c.allow_group = std::string(v); }});
  t.add({"record", "FILE", "", "also write every delivered message to FILE as pcap (nanosecond time stamps; "
         "lanecast record --help says how); a new file: anything already at FILE is refused",
         [&](std::string_view v) { c.record = std::string(v); }});
  t.add({"duration", "S", "0", "stop after S seconds (0: run until SIGTERM or SIGINT)",
         [&](std::string_view v) { c.duration_s = parse_double(v, "--duration", 0, 1e9); }});
  return t;
}

const char* kUsage =
    "usage: lanecast daemon --config FILE --rank R [--dir DIR] [--udp-in ADDR:PORT[@IF]]\n"
    "                       [--udp-out ADDR:PORT[@IF]] [--prometheus FILE] [--metrics-port P] ...\n"
    "\n"
    "Runs this host's member of the group as an appliance: applications of the host\n"
    "publish and subscribe through shared memory (the client library, liblanecast_client;\n"
    "apps/examples/stream_publisher.cc and stream_subscriber.cc) without linking DPDK.\n"
    "Everything published here goes on this member's stream; every message of every\n"
    "member's stream reaches every local subscriber, in each stream's order, once.\n"
    "`lanecast stat --dir DIR` shows the counters live. SIGTERM or SIGINT: clients are\n"
    "told, files removed, exit 0. A client that dies (even kill -9) is dropped; the\n"
    "daemon goes on. The group is fail-stop: when a member is lost the daemon exits 1\n"
    "(a supervisor restarts it into a new epoch).\n"
    "\n"
    "Applications are not trusted (docs/daemon.md, \"Trust\"): only the daemon's user,\n"
    "root and --allow-group's members may connect; each gets its memory as a sealed\n"
    "memfd over the socket (no files in DIR but control.sock and stats); ring sizes,\n"
    "all clients' memory and the time to say hello are bounded; a client whose\n"
    "memory makes no sense is cut off. DIR must be the daemon user's own directory,\n"
    "writable by nobody else; nothing found at a path it writes is followed. Clients\n"
    "talk only to a daemon of root, their own user or the user they trust\n"
    "(LANECAST_DAEMON_USER): the uid behind the socket, not DIR's owner. The UDP feed\n"
    "takes the senders --udp-in-from names only; /metrics has no authentication.\n"
    "\n";


std::vector<daemon::Label> stream_labels(const Member::StreamStats& s) {
  return {{"publisher", std::to_string(s.publisher)}, {"stream", std::to_string(s.stream)}};
}

// Every counter the daemon shows, by name (metrics.h).
std::vector<daemon::Metric> collect(const Engine& engine, Group& g, const Publisher& pub,
                                    const daemon::ClientTable& clients, const daemon::UdpSource* in,
                                    const daemon::UdpSink* out, const daemon::MetricsServer* server,
                                    const daemon::StatsFile& stats, uint64_t prometheus_refused) {
  std::vector<daemon::Metric> m;
  for (const auto& [name, v] : g.member().counters())
    m.push_back({"lanecast_" + name, {}, v, true, "the member's counter " + name + " (engine/node/node_counters.h)"});
  const PortCounters p = g.port_counters();
  m.push_back({"lanecast_port_rx_frames", {}, p.rx_frames, true, "frames the member's port received"});
  m.push_back({"lanecast_port_tx_frames", {}, p.tx_frames, true, "frames the member's port sent"});
  m.push_back({"lanecast_port_rx_missed", {}, p.rx_missed, true, "frames the port's ring had no room for"});
  m.push_back({"lanecast_poll_longest_cycle_ns", {}, engine.longest_poll_cycle_ns(), false,
               "the polling cores' longest cycle so far (a turn's start to the next's, naps left out): how long at "
               "once they were away from the members - their CPU given to something else, or a turn that long"});
  m.push_back({"lanecast_poll_long_cycles", {}, engine.long_poll_cycles(), true, "polling core cycles over 1 ms"});
  for (const auto& peer : g.member().peers()) {
    const std::vector<daemon::Label> l{{"peer", std::to_string(peer.rank)}};
    m.push_back({"lanecast_peer_tx_data", l, peer.tx_data, true, "data and stream frames sent to a peer (first transmissions)"});
    m.push_back({"lanecast_peer_tx_retransmits", l, peer.tx_retransmits, true, "frames sent to a peer again"});
    m.push_back({"lanecast_peer_rx_data", l, peer.rx_data, true, "data and stream frames accepted from a peer"});
  }
  for (const auto& s : g.member().streams()) {
    const auto l = stream_labels(s);
    m.push_back({"lanecast_stream_delivered_messages", l, s.delivered_messages, true, "a stream's messages delivered here"});
    m.push_back({"lanecast_stream_delivered_bytes", l, s.delivered_bytes, true, "a stream's bytes delivered here"});
    m.push_back({"lanecast_stream_frames_held", l, s.frames_held, false, "frames kept until the members below deliver them"});
    m.push_back({"lanecast_stream_slowest_member", l, s.slowest, false,
                 "of this member and those below it in the stream's tree, the one furthest behind"});
    m.push_back({"lanecast_stream_slowest_lag_frames", l, s.slowest_lag, false, "how far behind it is, in frames"});
  }
  m.push_back({"lanecast_publisher_published_messages", {}, pub.published(), true, "messages put on this member's stream"});
  m.push_back({"lanecast_publisher_stable_messages", {}, pub.stable(), true, "... of which every member delivered"});
  const auto& cc = clients.counters();
  m.push_back({"lanecast_clients", {}, clients.size(), false, "applications connected"});
  m.push_back({"lanecast_clients_memory_bytes", {}, clients.memory(), false, "shared memory of all applications"});
  m.push_back({"lanecast_clients_connected", {}, cc.connected, true, "applications that connected"});
  m.push_back({"lanecast_clients_disconnected", {}, cc.disconnected, true, "applications that went (exit, crash, cut off)"});
  m.push_back({"lanecast_clients_refused", {}, cc.refused_total(), true, "connections refused, all reasons"});
  for (size_t r = 1; r < cc.refused.size(); ++r)
    m.push_back({"lanecast_clients_refused_by_reason", {{"reason", ipc::kRefusalNames[r]}}, cc.refused[r], true,
                 "connections refused, by reason (ipc/protocol.h)"});
  m.push_back({"lanecast_clients_evicted", {}, cc.evictions, true, "subscribers evicted, all reasons"});
  for (size_t r = 0; r < cc.evicted.size(); ++r)
    m.push_back({"lanecast_clients_evicted_by_reason", {{"reason", daemon::kEvictionNames[r]}}, cc.evicted[r], true,
                 "subscribers evicted: their ring stayed full, or they took nothing from it while messages waited"});
  uint64_t cut = 0;
  for (size_t r = 0; r < cc.cut_off.size(); ++r) {
    cut += cc.cut_off[r];
    m.push_back({"lanecast_clients_cut_off", {{"ring", daemon::kCutOffNames[r]}}, cc.cut_off[r], true,
                 "clients cut off because a ring of their memory made no sense"});
  }
  m.push_back({"lanecast_clients_corrupt", {}, cut, true, "clients cut off, all rings"});
  m.push_back({"lanecast_clients_full_waits", {}, cc.full_waits, true, "times a full subscriber held delivery back"});
  m.push_back({"lanecast_clients_notices_lost", {}, cc.notices_lost, true, "notices a full notice ring had no room for"});
  m.push_back({"lanecast_clients_publish_too_large", {}, cc.publish_too_large, true,
               "applications' messages larger than the stream takes (refused, dropped)"});
  m.push_back({"lanecast_clients_publish_failed", {}, cc.publish_failed, true,
               "applications' messages the failed stream refused"});
  for (const auto& c : clients.clients()) {
    const std::vector<daemon::Label> l{{"client", std::to_string(c.id)}, {"name", c.name}};
    m.push_back({"lanecast_client_messages_in", l, c.messages_in, true, "messages an application published"});
    m.push_back({"lanecast_client_bytes_in", l, c.bytes_in, true, "bytes an application published"});
    m.push_back({"lanecast_client_messages_out", l, c.messages_out, true, "messages handed to an application"});
    m.push_back({"lanecast_client_bytes_out", l, c.bytes_out, true, "bytes handed to an application"});
    m.push_back({"lanecast_client_publish_too_large", l, c.too_large, true, "an application's messages the stream refused as too large"});
    m.push_back({"lanecast_client_publish_failed", l, c.publish_failed, true, "an application's messages the failed stream refused"});
  }
  if (in != nullptr) {
    const auto& u = in->counters();
    m.push_back({"lanecast_udp_in_datagrams", {}, u.datagrams, true, "datagrams of the UDP feed published"});
    m.push_back({"lanecast_udp_in_bytes", {}, u.bytes, true, "bytes of the UDP feed published"});
    m.push_back({"lanecast_udp_in_truncated", {}, u.truncated, true, "feed datagrams too large for the stream"});
    m.push_back({"lanecast_udp_in_kernel_drops", {}, u.kernel_drops, true, "feed datagrams the socket buffer lost"});
    m.push_back({"lanecast_udp_in_errors", {}, u.errors, true,
                 "feed datagrams the stream refused, and failed reads of the feed's socket"});
    m.push_back({"lanecast_udp_in_refused", {{"reason", "sender_address"}}, u.refused_address, true,
                 "feed datagrams dropped: from a sender --udp-in-from does not name"});
    m.push_back({"lanecast_udp_in_refused", {{"reason", "sender_port"}}, u.refused_port, true,
                 "feed datagrams dropped: from an address --udp-in-from names, another port"});
  }
  if (out != nullptr) {
    const auto& u = out->counters();
    m.push_back({"lanecast_udp_out_datagrams", {}, u.datagrams, true, "messages sent to the UDP sink"});
    m.push_back({"lanecast_udp_out_bytes", {}, u.bytes, true, "bytes sent to the UDP sink"});
    m.push_back({"lanecast_udp_out_truncated", {}, u.truncated, true, "messages too large for one datagram (not sent)"});
    m.push_back({"lanecast_udp_out_errors", {}, u.errors, true, "messages the UDP sink could not send"});
  }
  if (server != nullptr) {
    m.push_back({"lanecast_metrics_scrapes", {}, server->served(), true, "requests /metrics answered"});
    m.push_back({"lanecast_metrics_connections_dropped", {}, server->dropped(), true,
                 "connections to /metrics closed unanswered: no request within 2 s, or pushed out by newer ones"});
  }
  m.push_back({"lanecast_stats_entries_left_out", {}, stats.left_out(), false,
               "metrics the stats file had no room for at its last write (lanecast stat says so)"});
  m.push_back({"lanecast_stats_names_cut", {}, stats.names_cut(), false,
               "metric names longer than a stats entry, cut at the stats file's last write"});
  m.push_back({"lanecast_prometheus_refused", {}, prometheus_refused, true,
               "writes of the --prometheus file refused: something else was at its path"});
  return m;
}

}  // namespace

int daemon_main(int argc, char** argv) {
  DaemonConfig c;
  OptionTable table = make_table(c);
  if (table.parse(argc, argv, 1)) {
    std::fputs(kUsage, stdout);
    std::fputs(table.help().c_str(), stdout);
    return 0;
  }
  if (c.config.empty()) throw UsageError("--config FILE is required (see lanecast daemon --help)");
  if (c.clients.publish_bytes < ipc::kMinRing || c.clients.delivery_bytes < ipc::kMinRing)
    throw UsageError("--publish-ring and --delivery-ring must be at least 4K");
  if (c.clients.max_ring < ipc::kMinRing || c.clients.max_ring > ipc::kMaxRing)
    throw UsageError("--max-ring must be 4K..1T");
  if (c.clients.publish_bytes > c.clients.max_ring || c.clients.delivery_bytes > c.clients.max_ring)
    throw UsageError("--publish-ring and --delivery-ring must not be larger than --max-ring (" +
                     std::to_string(c.clients.max_ring) + ")");
  std::optional<daemon::UdpEndpoint> udp_in, udp_out;
  if (!c.udp_in.empty()) udp_in = daemon::parse_udp_endpoint(c.udp_in, "--udp-in");
  const std::vector<daemon::UdpSender> udp_senders = daemon::parse_udp_senders(c.udp_in_from, "--udp-in-from");
  if (table.given("udp-in-from") && !udp_in) throw UsageError("--udp-in-from applies to --udp-in");
  if (!c.udp_out.empty()) udp_out = daemon::parse_udp_endpoint(c.udp_out, "--udp-out");
  const daemon::AccessPolicy access(c.allow_group);
  const GroupMember who = load_group_for(c.config, c.rank, 0, 1);
  if (c.dir.empty()) c.dir = daemon::default_daemon_dir(who.spec.name, who.rank);

  // Every path the daemon writes is checked before the member starts: a
  // refusal costs nothing and says what is wrong (safe_files.h).
  daemon::DaemonDir dir(c.dir, access);
  const int stats_fd = dir.make_stats_file(daemon::kStatsFileBytes);
  int record_fd = -1;
  if (!c.record.empty()) record_fd = daemon::create_new_file(c.record, 0640, "--record");
  if (!c.prometheus.empty()) daemon::check_replaceable(c.prometheus, "--prometheus");

  StopSignals signals;
  Engine engine(member_engine_options(who, c.cores, c.yield_when_idle, false));
  auto g = engine.join(who.spec, who.rank);
  notice_if_keyless(*g);
  Member& me = g->member();
  Publisher pub = me.open_stream(0);
  if (const uint64_t need = daemon::min_delivery_ring(pub.max_message());
      c.clients.delivery_bytes < need || c.clients.max_ring < need)
    throw std::invalid_argument("--delivery-ring and --max-ring must be at least " + std::to_string(need) +
                                " bytes: a subscriber's ring holds the stream's largest message (" +
                                std::to_string(pub.max_message()) + " bytes) twice");
  daemon::StatsFile stats(stats_fd, dir.stats_path(), who.spec.name, g->rank(), g->size());
  daemon::ClientTable clients(dir.listen(), access, c.clients, g->rank(), g->size(), pub.max_message());
  dir.open_to_group();
  std::unique_ptr<daemon::UdpSource> source;
  std::unique_ptr<daemon::UdpSink> sink;
  if (udp_in) {
    source = std::make_unique<daemon::UdpSource>(*udp_in, pub.max_message(), udp_senders);
    std::printf("lanecast daemon: the UDP feed takes datagrams from %s only (--udp-in-from)\n", c.udp_in_from.c_str());
  }
  if (udp_out) sink = std::make_unique<daemon::UdpSink>(*udp_out, c.udp_ttl);
  std::unique_ptr<RecordSink> recorder;
  if (record_fd >= 0) {
    // The sink opens the file by name: this name is the file made above,
    // whatever may be at c.record by now.
    recorder = make_record_sink("/proc/self/fd/" + std::to_string(record_fd));
    ::close(record_fd);
  }
  std::unique_ptr<daemon::MetricsServer> server;
  if (c.metrics_port != 0) server = std::make_unique<daemon::MetricsServer>(c.metrics_addr, static_cast<uint16_t>(c.metrics_port));
  uint64_t prometheus_refused = 0;
  auto write_prometheus = [&](const std::string& text) {
    std::string why;
    if (c.prometheus.empty() || daemon::replace_file(c.prometheus, text, 0644, &why)) return;
    if (prometheus_refused++ == 0) std::fprintf(stderr, "lanecast daemon: --prometheus: %s\n", why.c_str());
  };

  std::printf("lanecast daemon: group %s, rank %u of %u, epoch %u; applications connect at %s (%s); "
              "counters: lanecast stat --dir %s%s%s\n",
              who.spec.name.c_str(), g->rank(), g->size(), g->epoch(), dir.socket_path().c_str(),
              access.describe().c_str(), dir.path().c_str(), c.prometheus.empty() ? "" : ", ",
              c.prometheus.empty() ? "" : c.prometheus.c_str());
  std::fflush(stdout);

  const uint64_t start = clock_ns();
  const uint64_t interval = static_cast<uint64_t>(c.stats_interval_ms * 1e6);
  uint64_t next_control = 0, next_stats = 0;
  StreamMessage pending;
  bool have_pending = false;
  uint32_t idle = 0;
  int rc = 0;
  std::string text;
  for (;;) {
    const uint64_t now = clock_ns();
    if (StopSignals::received() != 0) break;
    if (c.duration_s > 0 && now - start >= static_cast<uint64_t>(c.duration_s * 1e9)) break;
    uint32_t work = 0;
    if (now >= next_control) {
      work += clients.poll_control(now);
      if (server) work += server->poll(text);
      // A connection waiting for its answer is polled again at once.
      next_control = clients.hello_pending() ? now : now + 1'000'000;
    }
    work += clients.drain_publishers(pub, 256);
    if (source) work += source->drain(pub, 256);
    for (uint32_t k = 0; k < 256; ++k) {
      if (!have_pending) {
        if (!me.next(pending)) break;
        have_pending = true;
        if (sink) sink->send(pending);
        if (recorder) recorder->write(pending);
      }
      if (!clients.deliver(pending, now)) break;
      have_pending = false;
      ++work;
    }
    if (now >= next_stats) {
      const auto metrics =
          collect(engine, *g, pub, clients, source.get(), sink.get(), server.get(), stats, prometheus_refused);
      stats.write(metrics, now);
      text = daemon::prometheus_text(metrics, who.spec.name, g->rank());
      write_prometheus(text);
      next_stats = now + interval;
    }
    if (!me.stream_status().ok()) {
      const Status s = me.stream_status();
      std::fprintf(stderr, "lanecast daemon: rank %u: %s; stopping (re-start to join a new epoch)\n", g->rank(),
                   s.message.c_str());
      clients.notify_all(ipc::Notice{ipc::Notice::StreamFailed, s.peer, now});
      rc = 1;
      break;
    }
    if (work > 0) {
      idle = 0;
    } else if (++idle > 2000) {
      // Nothing for a while: nap (a client's message waits at most this long).
      timespec nap{0, 50'000};
      nanosleep(&nap, nullptr);
    }
  }
  clients.stopping();
  recorder.reset();  // the capture complete on disk
  // Last counters, so a reader sees the end.
  const auto metrics =
      collect(engine, *g, pub, clients, source.get(), sink.get(), server.get(), stats, prometheus_refused);
  stats.write(metrics, clock_ns());
  write_prometheus(daemon::prometheus_text(metrics, who.spec.name, g->rank()));
  std::printf("lanecast daemon: rank %u stopping (%s): published %" PRIu64 " messages (%" PRIu64
              " stable), %zu clients connected, %" PRIu64 " evicted\n",
              g->rank(), rc ? "the group failed" : (StopSignals::received() ? "signal" : "duration"), pub.published(),
              pub.stable(), clients.size(), clients.counters().evictions);
  std::fflush(stdout);
  return rc;
}

}  // namespace lanecast::apps
