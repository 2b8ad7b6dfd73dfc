// `lanecast replay --config FILE --rank R`: one member per process. The
// publisher replays from its read-ahead ring; every member takes its
// messages with next(), checks them against the file (the publisher's
// process against its ring, the others reading the file again) and records
// them as they come. The publisher's process takes its own deliveries on a
// thread of their own, so the replaying thread only publishes.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include "apps/common/group_member.h"
#include "apps/replay/cpu_pin.h"
#include "apps/replay/file_messages.h"
#include "apps/replay/replay_config.h"
#include "apps/replay/replay_stats.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

// What this member delivered: in order, equal to the file's messages
// (--verify), written to its file as it comes (--record).
class ProcessLog {
 public:
  ProcessLog(std::unique_ptr<replay::FileMessages> expected, std::unique_ptr<replay::PcapWriter> writer)
      : expected_(std::move(expected)), writer_(std::move(writer)), to_real_(replay::realtime_offset_ns()) {}

  void take(const StreamMessage& m) {
    if (!error_.empty()) return;
    if (m.seq != delivered_) {
      fail("message " + std::to_string(m.seq) + " where " + std::to_string(delivered_) + " was due");
      return;
    }
    std::span<const std::byte> want;
    if (expected_ && !expected_->next(want)) {
      fail("message " + std::to_string(m.seq) + " is past the file's last message");
      return;
    }
    if (expected_ && (want.size() != m.data.size() ||
                      (!want.empty() && std::memcmp(want.data(), m.data.data(), want.size()) != 0))) {
      fail("message " + std::to_string(m.seq) + " differs from the file's: " + std::to_string(m.data.size()) +
           " bytes, the file has " + std::to_string(want.size()));
      return;
    }
    if (writer_)
      writer_->write(static_cast<uint64_t>(static_cast<int64_t>(clock_ns()) + to_real_), m.publisher, m.stream, m.data);
    ++delivered_;
  }
  // Takes messages until `total`, a failure, or `give_up` (which another
  // thread may bring forward).
  void take_all(Member& me, uint64_t total, const std::atomic<uint64_t>& give_up) {
    StreamMessage m;
    while (delivered_ < total && error_.empty() && me.stream_status().ok() &&
           clock_ns() < give_up.load(std::memory_order_relaxed))
      if (me.next_for(m, std::chrono::milliseconds(10))) take(m);
  }
  void finish() {
    if (writer_) writer_->flush();
  }
  uint64_t delivered() const { return delivered_; }
  const std::string& error() const { return error_; }

 private:
  void fail(std::string why) {
    error_ = std::move(why);
    if (expected_) expected_->stop();
  }
  std::unique_ptr<replay::FileMessages> expected_;
  std::unique_ptr<replay::PcapWriter> writer_;
  int64_t to_real_;
  uint64_t delivered_ = 0;
  std::string error_;
};

// --record: a directory (replay --testbed gives every member the same one)
// holds a file per member; anything else is the file.
std::unique_ptr<replay::PcapWriter> record_file(const ReplayConfig& c, Rank rank) {
  if (c.record.empty()) return nullptr;
  struct stat st{};
  const bool dir = ::stat(c.record.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  return std::make_unique<replay::PcapWriter>(dir ? c.record + "/member-" + std::to_string(rank) + ".pcap" : c.record,
                                              c.record_link());
}

}  // namespace

int replay_member(const ReplayConfig& c, const replay::CaptureSummary& src) {
  const GroupMember who = load_group_for(c.config, c.rank, c.publisher, 1);
  const bool publisher = who.rank == c.publisher;
  const uint64_t total = c.loops * src.messages;
  // Give up once the schedule, every loop of it, is long over.
  std::atomic<uint64_t> give_up{clock_ns() + c.loops * (src.schedule_ns + 200'000) + 120'000'000'000ull};

  std::unique_ptr<replay::ReadAhead> ra;
  std::unique_ptr<replay::FileMessages> expected;
  if (publisher) {
    replay::ReadAhead::Options ro;
    ro.capture = c.capture();
    ro.timing = c.timing;
    ro.loops = c.loops;
    ro.messages = src.messages;
    ro.bytes = c.ring_bytes();
    ro.checkers = c.verify ? 1 : 0;
    ra = std::make_unique<replay::ReadAhead>(ro);
    if (c.verify) expected = std::make_unique<replay::RingMessages>(*ra, 1);
  } else if (c.verify) {
    expected = std::make_unique<replay::ReaderMessages>(c.capture(), c.loops);
  }
  ProcessLog log(std::move(expected), record_file(c, who.rank));

  Engine engine(member_engine_options(who, c.cores, true, false));
  auto g = engine.join(who.spec, who.rank);
  Member& me = g->member();
  ReplayOutcome o;
  if (publisher) {
    // With polling cores the publisher's ring and the delivery ring are
    // separate single-producer rings: one thread publishes while another
    // takes this member's deliveries.
    Publisher pub = me.open_stream(0);
    std::exception_ptr taker_failed;
    std::thread taker([&] {
      try {
        log.take_all(me, total, give_up);
      } catch (...) {
        taker_failed = std::current_exception();
        if (c.verify) ra->detach(1);  // checks no more: holds the ring back no longer
      }
    });
    const std::string placed = replay::keep_off(engine.poller_cpus());
    if (!c.json) {
      print_source(c, src);
      std::printf("# the replaying thread %s\n", placed.c_str());
    }
    try {
      ReplayLive live;
      const ReplayStats stats(c.stats_s, total, live, nullptr);
      o = publish_all(pub, *ra, c.timing, &live);
    } catch (...) {
      give_up.store(0, std::memory_order_relaxed);
      taker.join();
      throw;
    }
    taker.join();
    if (taker_failed) std::rethrow_exception(taker_failed);
    // Leaving once every member delivered everything (the other members
    // may be `lanecast record` processes: no barrier).
    while (pub.stable() < total && pub.status().ok() && clock_ns() < give_up.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } else {
    log.take_all(me, total, give_up);
    // A moment for this member's last acks and reports to leave.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  log.finish();
  const bool ok = log.error().empty() && log.delivered() == total;
  if (c.json) {
    Json j;
    j["rank"] = g->rank();
    j["publisher"] = publisher;
    j["messages"] = total;
    j["messages_delivered"] = log.delivered();
    if (publisher) {
      j["messages_published"] = o.published;
      j["seconds"] = rounded(o.seconds, 6);
      add_send_error(j, o, c.timing.kind != replay::Timing::TopSpeed);
      j["file_waits"] = o.file_waits;
    }
    j["peak_rss_mib"] = rounded(peak_rss_mib(), 1);
    j["verified"] = ok && c.verify;
    if (!log.error().empty()) j["error"] = log.error();
    print_json(j);
    return ok ? 0 : 1;
  }
  std::printf("rank %u: %" PRIu64 " of %" PRIu64 " messages delivered%s%s", g->rank(), log.delivered(), total,
              c.verify ? (ok ? ", verified against the file" : "") : "",
              log.error().empty() ? "" : (": " + log.error()).c_str());
  if (publisher && c.timing.kind != replay::Timing::TopSpeed)
    std::printf("; published %" PRIu64 " in %.3f s, send error p50 %.1f us, p99 %.1f us, max %.1f us", o.published,
                o.seconds, o.error.percentile(0.5) / 1e3, o.error.percentile(0.99) / 1e3, o.error.max() / 1e3);
  if (publisher) std::printf("; %" PRIu64 " file waits", o.file_waits);
  std::printf("; peak RSS %.1f MiB\n", peak_rss_mib());
  std::fflush(stdout);
  return ok ? 0 : 1;
}

}  // namespace lanecast::apps
