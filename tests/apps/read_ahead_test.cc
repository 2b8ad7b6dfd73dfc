// lanecast replay's streaming pieces on real capture files (written with
// libpcap by the record writer, read back with libpcap): the read-ahead ring
// delivers every message of every loop in order with its due time, wraps
// many times in a ring far smaller than the file, never runs further ahead
// of a slot than the ring allows, refuses a file that changed under it, and
// the in-process members' checks catch a wrong order or wrong bytes without
// holding the ring back; --record's messages over the sizes the headers
// count come back whole or are cut as a capture tool cuts them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "apps/replay/delivery_check.h"
#include "apps/replay/pcap_source.h"
#include "apps/replay/pcap_writer.h"
#include "apps/replay/read_ahead.h"
#include "apps/replay/replay_schedule.h"

namespace lanecast::replay {
namespace {

struct Sent {
  uint64_t ts_ns;
  std::vector<std::byte> data;
};

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/lanecast-read-ahead-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// A capture of `n` UDP messages of 0..max bytes (each starts with its
// number where it has room), 100 us apart, written as lanecast record writes.
std::vector<Sent> write_capture(const std::string& path, size_t n, size_t max, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  std::vector<Sent> sent;
  PcapWriter w(path, RecordLink::Udp);
  uint64_t t = 1'700'000'000'000'000'000ull;
  for (size_t i = 0; i < n; ++i) {
    Sent s{t, std::vector<std::byte>(rng() % (max + 1))};
    for (auto& b : s.data) b = static_cast<std::byte>(rng());
    for (size_t k = 0; k < sizeof i && k < s.data.size(); ++k) s.data[k] = static_cast<std::byte>(i >> (8 * k));
    w.write(t, 0, 0, s.data);
    sent.push_back(std::move(s));
    t += 100'000 + rng() % 1000;
  }
  w.flush();
  return sent;
}

bool equal(std::span<const std::byte> a, const std::vector<std::byte>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// Takes every record of `slot` until the reader is through, checking each
// against `sent`, loop after loop; releases as it goes.
void take_all(ReadAhead& ra, uint32_t slot, const std::vector<Sent>& sent, uint64_t loops, const Timing& timing) {
  ReadAhead::Walk w(&ra);
  Schedule expect(timing);
  for (uint64_t i = 0; i < loops * sent.size(); ++i) {
    RingEntry e;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!w.peek(e)) {
      ASSERT_FALSE(ra.failed()) << ra.failure();
      ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "record " << i << " never came";
      std::this_thread::yield();
    }
    const Sent& s = sent[i % sent.size()];
    if (i % sent.size() == 0) expect.restart();
    ASSERT_EQ(e.loop_start, i % sent.size() == 0) << "record " << i;
    ASSERT_EQ(e.due_ns, expect.next(s.ts_ns, static_cast<uint32_t>(s.data.size()))) << "record " << i;
    ASSERT_TRUE(equal(e.data, s.data)) << "record " << i << ": " << e.data.size() << " bytes, sent " << s.data.size();
    w.advance();
    ra.release(slot, w);
  }
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!ra.finished() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  RingEntry e;
  EXPECT_TRUE(ra.finished());
  EXPECT_FALSE(w.peek(e)) << "a record past the last loop";
}

ReadAhead::Options options(const std::string& path, uint64_t messages, uint64_t loops, uint64_t bytes) {
  ReadAhead::Options o;
  o.capture.path = path;
  o.capture.max_message = 1400;
  o.timing = Timing{Timing::Pps, 1000};
  o.loops = loops;
  o.messages = messages;
  o.bytes = bytes;
  return o;
}

TEST(ReadAhead, EveryLoopInOrderThroughARingFarSmallerThanTheFile) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 3000, 1400);
  uint64_t file_bytes = 0;
  for (const Sent& s : sent) file_bytes += s.data.size();
  // 16 KiB: the file (about 2 MiB) wraps the ring hundreds of times a loop.
  for (const Timing t : {Timing{Timing::Speed, 2}, Timing{Timing::Mbps, 100}, Timing{Timing::TopSpeed, 0}}) {
    ReadAhead::Options o = options(d.file("a.pcap"), sent.size(), 3, 16 << 10);
    o.timing = t;
    ReadAhead ra(o);
    EXPECT_LT(ra.ring_bytes() * 100, file_bytes);
    take_all(ra, 0, sent, 3, t);
  }
}

// A capture of a few packets, looped many times: kept after its first loop
// (it fits a quarter of the ring), every loop still whole and in order.
TEST(ReadAhead, ASmallCaptureLoopsFromItsCopy) {
  TempDir d;
  const auto sent = write_capture(d.file("small.pcap"), 7, 300);
  const Timing t{Timing::Speed, 1};
  ReadAhead::Options o = options(d.file("small.pcap"), sent.size(), 5000, 64 << 10);
  o.timing = t;
  ReadAhead ra(o);
  take_all(ra, 0, sent, 5000, t);
}

TEST(ReadAhead, ScanCountsWhatTheFileHolds) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 500, 900);
  const CaptureSummary s = scan_capture({d.file("a.pcap"), false, "", 1400}, Timing{Timing::Pps, 1000});
  EXPECT_EQ(s.messages, 500u);
  EXPECT_EQ(s.counts.read, 500u);
  EXPECT_EQ(s.schedule_ns, 499'000'000u);
  uint64_t bytes = 0, largest = 0;
  for (const Sent& m : sent) {
    bytes += m.data.size();
    largest = std::max<uint64_t>(largest, m.data.size());
  }
  EXPECT_EQ(s.bytes, bytes);
  EXPECT_EQ(s.largest, largest);
  EXPECT_TRUE(s.nanosecond);
}

// A slot that does not release holds the reader back: nothing is read more
// than the ring's bytes (or records) ahead of it, whatever the file's size.
TEST(ReadAhead, ASlotThatHoldsOnStopsTheReaderAtTheRingsBound) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 2000, 1000);
  for (const bool by_records : {false, true}) {
    ReadAhead::Options o = options(d.file("a.pcap"), sent.size(), 2, 64 << 10);
    o.checkers = 1;
    if (by_records) o.max_records = 16;
    ReadAhead ra(o);
    ra.fill();
    ReadAhead::Walk w(&ra);
    uint64_t bytes = 0;
    RingEntry e;
    while (w.peek(e)) {  // the publisher's slot runs ahead alone
      bytes += e.data.size();
      w.advance();
      ra.release(0, w);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (w.peek(e)) {
      bytes += e.data.size();
      w.advance();
      ra.release(0, w);
    }
    EXPECT_FALSE(ra.finished());
    if (by_records) EXPECT_EQ(w.taken(), 16u);
    else EXPECT_LE(bytes, ra.ring_bytes());
    EXPECT_GT(w.taken(), 0u);
    // Detached, the checker holds nothing back: the reader goes to the end.
    ra.detach(1);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (w.taken() < 2 * sent.size() && std::chrono::steady_clock::now() < give_up) {
      if (w.peek(e)) {
        w.advance();
        ra.release(0, w);
      }
    }
    EXPECT_EQ(w.taken(), 2 * sent.size());
  }
}

TEST(ReadAhead, AFileThatChangedIsRefusedNotReplayed) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 100, 200);
  for (const uint64_t believed : {sent.size() + 1, sent.size() - 1}) {
    ReadAhead ra(options(d.file("a.pcap"), believed, 2, 64 << 10));
    ReadAhead::Walk w(&ra);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ra.failed() && !ra.finished() && std::chrono::steady_clock::now() < give_up) {
      RingEntry e;
      if (w.peek(e)) {
        w.advance();
        ra.release(0, w);
      }
    }
    ASSERT_TRUE(ra.failed());
    EXPECT_NE(ra.failure().find("the file changed while it was replayed"), std::string::npos) << ra.failure();
    EXPECT_FALSE(ra.finished());
  }
}

TEST(ReadAhead, AMessageLargerThanTheRingIsAnErrorNotAHang) {
  TempDir d;
  {
    PcapWriter w(d.file("big.pcap"), RecordLink::Udp);
    w.write(1, 0, 0, std::vector<std::byte>(20000));
  }
  ReadAhead::Options o = options(d.file("big.pcap"), 1, 1, 4096);
  o.capture.max_message = UINT64_MAX;
  ReadAhead ra(o);
  ra.fill();
  ASSERT_TRUE(ra.failed());
  EXPECT_NE(ra.failure().find("does not fit the read-ahead ring"), std::string::npos) << ra.failure();
}

// The in-process members' checks, as their polling cores run them.
TEST(DeliveryCheck, OrderAndBytesAreCheckedAndAFailedMemberHoldsNothingBack) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 1000, 500);
  ReadAhead::Options o = options(d.file("a.pcap"), sent.size(), 1, 16 << 10);
  o.checkers = 3;
  ReadAhead ra(o);
  DeliveryCheck good(&ra, 1, 0), reordered(&ra, 2, 0), corrupted(&ra, 3, 0);
  ReadAhead::Walk pub(&ra);
  for (uint64_t i = 0; i < sent.size(); ++i) {
    RingEntry e;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pub.peek(e)) ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "held back at " << i;
    pub.advance();
    ra.release(0, pub);
    good.take(i, sent[i].data);
    reordered.take(i == 10 ? 11 : i, sent[i].data);
    std::vector<std::byte> bad = sent[i].data;
    if (i == 20 && !bad.empty()) bad.back() ^= std::byte{1};
    if (i == 20 && bad.empty()) bad.push_back(std::byte{0});
    corrupted.take(i, bad);
  }
  EXPECT_FALSE(good.failed());
  EXPECT_EQ(good.delivered(), sent.size());
  ASSERT_TRUE(reordered.failed());
  EXPECT_EQ(reordered.error(), "message 11 where 10 was due");
  EXPECT_EQ(reordered.delivered(), 10u);
  ASSERT_TRUE(corrupted.failed());
  EXPECT_NE(corrupted.error().find("message 20 (packet 21 of the file) differs"), std::string::npos) << corrupted.error();
  EXPECT_EQ(corrupted.delivered(), 20u);
}

// --record in process: the core notes the delivery time; the recording
// thread writes the ring's bytes and only then lets the ring reuse them.
TEST(DeliveryCheck, RecordingWritesEveryMessageAndReleasesAfterwards) {
  TempDir d;
  const auto sent = write_capture(d.file("a.pcap"), 3000, 1400);
  ReadAhead::Options o = options(d.file("a.pcap"), sent.size(), 2, 32 << 10);
  o.checkers = 1;
  o.max_records = 64;
  ReadAhead ra(o);
  DeliveryCheck member(&ra, 1, 64);
  std::atomic<bool> done{false};
  std::vector<std::vector<std::byte>> written;
  std::vector<uint64_t> times;
  std::thread recorder([&] {
    while (!done.load() || member.written() < member.delivered())
      member.drain([&](uint64_t t, std::span<const std::byte> b) {
        times.push_back(t);
        written.emplace_back(b.begin(), b.end());
      }) || (std::this_thread::yield(), true);
  });
  ReadAhead::Walk pub(&ra);
  for (uint64_t i = 0; i < 2 * sent.size(); ++i) {
    RingEntry e;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!pub.peek(e)) ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "held back at " << i;
    pub.advance();
    ra.release(0, pub);
    member.take(i, sent[i % sent.size()].data);
    ASSERT_FALSE(member.failed()) << member.error();
  }
  done.store(true);
  recorder.join();
  ASSERT_EQ(written.size(), 2 * sent.size());
  for (size_t i = 0; i < written.size(); ++i) ASSERT_TRUE(equal(written[i], sent[i % sent.size()].data)) << i;
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

TEST(Schedule, OffsetsFollowTheTiming) {
  Schedule speed(Timing{Timing::Speed, 2});
  EXPECT_EQ(speed.next(1000, 10), 0u);
  EXPECT_EQ(speed.next(3000, 10), 1000u);
  EXPECT_EQ(speed.next(2000, 10), 1000u);  // a step back is sent with the one before
  speed.restart();
  EXPECT_EQ(speed.next(50'000, 10), 0u);
  Schedule pps(Timing{Timing::Pps, 1000});
  EXPECT_EQ(pps.next(0, 1), 0u);
  EXPECT_EQ(pps.next(0, 1), 1'000'000u);
  Schedule mbps(Timing{Timing::Mbps, 8});  // 1 byte per us
  EXPECT_EQ(mbps.next(0, 500), 0u);
  EXPECT_EQ(mbps.next(0, 100), 500'000u);
  EXPECT_EQ(mbps.next(0, 100), 600'000u);
  Schedule far(Timing{Timing::Speed, 1e-6});
  far.next(0, 1);
  EXPECT_LE(far.next(UINT64_MAX / 2, 1), uint64_t{1} << 62);  // held in range, not overflowed
  EXPECT_THROW(Schedule(Timing{Timing::Pps, 0}), std::invalid_argument);
}

// Record's synthetic UDP for messages no UDP datagram holds: lengths 0, read
// back whole; beyond the snap length, cut and counted truncated.
TEST(RecordFormat, MessagesBeyondWhatTheHeadersCountComeBackOrAreCut) {
  TempDir d;
  std::vector<std::vector<std::byte>> msgs;
  for (const size_t n : {size_t{65507}, size_t{65508}, size_t{200000}, size_t{300000}, size_t{3}}) {
    std::vector<std::byte> m(n);
    for (size_t i = 0; i < n; ++i) m[i] = static_cast<std::byte>(i * 7 + n);
    msgs.push_back(std::move(m));
  }
  {
    PcapWriter w(d.file("big.pcap"), RecordLink::Udp);
    for (const auto& m : msgs) w.write(1, 0, 0, m);
  }
  CaptureReader r({d.file("big.pcap"), false, "", UINT64_MAX});
  CaptureMessage m;
  for (const size_t i : {0, 1, 2, 4}) {
    ASSERT_TRUE(r.next(m));
    EXPECT_TRUE(equal(m.data, msgs[i])) << "message of " << msgs[i].size() << " bytes came back as " << m.data.size();
  }
  EXPECT_FALSE(r.next(m));
  EXPECT_EQ(r.counts().truncated, 1u);  // the 300000-byte one, cut to the snap length
  EXPECT_EQ(r.counts().read, 5u);
}

// A full disk: the dumper's stdio stream fails a write it reports nowhere;
// the writer says so instead of leaving a short file behind.
TEST(RecordFormat, AWriteThatFailedIsAnErrorNotASilentlyShortFile) {
  PcapWriter w("/dev/full", RecordLink::Udp);
  w.write(1, 0, 0, std::vector<std::byte>(100000));  // past stdio's buffer: written at once, and failed
  EXPECT_THROW(w.check(), std::runtime_error);
  EXPECT_THROW(w.flush(), std::runtime_error);
}

}  // namespace
}  // namespace lanecast::replay
