// The pieces of authenticated groups, alone: the anti-replay window, seals
// made and opened (every byte of a sealed frame matters; another key,
// epoch, group or sender opens nothing; a counter opens once), payload
// seals, and group keys read as an attacker would plant them.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/auth/epoch_keys.h"
#include "engine/auth/frame_auth.h"
#include "engine/auth/replay_window.h"
#include "lanecast/group_spec.h"
#include "engine/wire/wire.h"

namespace lanecast::engine::auth {
namespace {

using Check = ReplayWindow::Check;

TEST(ReplayWindow, EachCounterOnceInAnyOrderWithinTheWindow) {
  ReplayWindow w;
  const uint64_t base = uint64_t{1} << 40;
  EXPECT_EQ(w.check(base), Check::New);
  w.accept(base);
  EXPECT_EQ(w.check(base), Check::Replayed);
  for (uint64_t c : {base + 5, base + 2, base + 1, base + 4}) {  // reordered
    ASSERT_EQ(w.check(c), Check::New) << c - base;
    w.accept(c);
  }
  for (uint64_t c : {base, base + 1, base + 2, base + 4, base + 5}) EXPECT_EQ(w.check(c), Check::Replayed);
  EXPECT_EQ(w.check(base + 3), Check::New);  // never seen: still taken
  // Far ahead: everything the window left behind is stale, seen or not.
  const uint64_t far = base + 10 * ReplayWindow::kSpan;
  w.accept(far);
  EXPECT_EQ(w.check(base + 3), Check::Stale);
  EXPECT_EQ(w.check(far - ReplayWindow::kSpan), Check::Stale);
  EXPECT_EQ(w.check(far - ReplayWindow::kSpan + 1), Check::New);
  EXPECT_EQ(w.check(far), Check::Replayed);
}

// Bits of blocks that come back into the ring are cleared when the window
// moves: a counter one ring-length ahead of one that was seen is new.
TEST(ReplayWindow, MovingOnClearsWhatComesIntoTheWindow) {
  ReplayWindow w;
  for (uint64_t c = 0; c < 64 * ReplayWindow::kBlocks; c += 7) {
    ASSERT_EQ(w.check(c), Check::New) << c;
    w.accept(c);
  }
  const uint64_t next = 64 * ReplayWindow::kBlocks + 7;  // the same ring slot as 7
  EXPECT_EQ(w.check(next), Check::New);
  w.accept(next);
  EXPECT_EQ(w.check(next), Check::Replayed);
  EXPECT_EQ(w.check(next + 64), Check::New);
}

std::shared_ptr<const AuthKey> key_of(char digit) {
  return AuthKey::from_hex(std::string(64, digit), "test");
}

// An Ethernet link header: destination, source, EtherType (as a port writes it).
constexpr uint16_t kLink = 14;
void write_link(uint8_t* at, uint8_t to, uint8_t from) {
  const uint8_t h[kLink] = {2, 0, 0, 0, 0, to, 2, 0, 0, 0, 0, from, 0x88, 0xB5};
  std::memcpy(at, h, kLink);
}

// A sealed ack from rank `src` to rank `to`, as a node writes it: link
// header, lanecast header, body, seal.
std::vector<uint8_t> sealed_ack(FrameAuth& a, uint32_t src, uint32_t cum, uint8_t to = 2) {
  std::vector<uint8_t> f(kLink + wire::kAckHeaderBytes + wire::kSealBytes);
  write_link(f.data(), to, static_cast<uint8_t>(src));
  wire::AckBody b{};
  b.cum_ack = cum;
  wire::write_ack(f.data() + kLink, {7, 9, src}, b, wire::kFlagSealed);
  a.seal_frame(f.data(), kLink, wire::frame_seal_at(wire::FrameType::Ack));
  return f;
}

// The link header's bytes included: a frame sent to one member (its
// destination address) does not open at another, nor from another source.
TEST(FrameAuth, EveryByteOfASealedFrameMatters) {
  const EpochKeys keys = derive_formation_keys(*key_of('a'), 7, 9, {});
  FrameAuth sender(keys, 1, 4), receiver(keys, 2, 4);
  const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
  std::vector<uint8_t> f = sealed_ack(sender, 1, 33);
  for (size_t i = 0; i < f.size(); ++i) {
    std::vector<uint8_t> bad = f;
    bad[i] ^= 0x10;
    EXPECT_NE(receiver.open_frame(bad.data(), kLink, seal_at, 1), FrameAuth::Verdict::Ok) << "byte " << i;
  }
  EXPECT_EQ(receiver.open_frame(f.data(), kLink, seal_at, 2), FrameAuth::Verdict::BadTag) << "another sender's";
  EXPECT_EQ(receiver.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::Ok);
  EXPECT_EQ(receiver.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::Replayed);
  // The next frame opens; the first, sent again, still does not.
  std::vector<uint8_t> g = sealed_ack(sender, 1, 34);
  EXPECT_EQ(receiver.open_frame(g.data(), kLink, seal_at, 1), FrameAuth::Verdict::Ok);
  EXPECT_EQ(receiver.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::Replayed);
}

// A receiver's window is per sender: a frame the sender sent to rank 3,
// readdressed to rank 2, carries a counter rank 2 never saw. Only the tag
// can refuse it.
TEST(FrameAuth, AFrameOpensOnlyAtTheAddressItWasSentTo) {
  const EpochKeys keys = derive_formation_keys(*key_of('a'), 7, 9, {});
  FrameAuth sender(keys, 1, 4), receiver(keys, 2, 4);
  const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
  std::vector<uint8_t> to3 = sealed_ack(sender, 1, 5, /*to=*/3);
  std::vector<uint8_t> to2 = sealed_ack(sender, 1, 6, /*to=*/2);
  EXPECT_EQ(receiver.open_frame(to2.data(), kLink, seal_at, 1), FrameAuth::Verdict::Ok);
  write_link(to3.data(), 2, 1);  // readdressed to rank 2
  EXPECT_EQ(receiver.open_frame(to3.data(), kLink, seal_at, 1), FrameAuth::Verdict::BadTag);
}

TEST(FrameAuth, AnotherKeyEpochOrGroupOpensNothing) {
  const auto key = key_of('a');
  const EpochKeys mine = derive_formation_keys(*key, 7, 9, {});
  FrameAuth sender(mine, 1, 4);
  const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
  for (const EpochKeys& other : {derive_formation_keys(*key_of('b'), 7, 9, {}), derive_formation_keys(*key, 7, 10, {}),
                                 derive_formation_keys(*key, 8, 9, {})}) {
    FrameAuth receiver(other, 2, 4);
    const std::vector<uint8_t> f = sealed_ack(sender, 1, 1);
    EXPECT_EQ(receiver.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::BadTag);
  }
}

// The epoch is 32 bits: after about 2^16 formations under one key two of
// them share one. Their members' incarnations differ, and so do their keys:
// a frame or payload recorded in one formation does not open in the other.
TEST(FrameAuth, TwoFormationsOfOneEpochShareNoKey) {
  const auto key = key_of('a');
  const uint64_t lives[4] = {0x1111, 0x2222, 0x3333, 0x4444};
  uint64_t restarted[4] = {0x1111, 0x2222, 0x3333, 0x4445};  // rank 3 in another life
  const EpochKeys first = derive_formation_keys(*key, 7, 9, lives);
  const EpochKeys second = derive_formation_keys(*key, 7, 9, restarted);
  const EpochKeys first_again = derive_formation_keys(*key, 7, 9, lives);
  EXPECT_NE(first.frame, second.frame);
  EXPECT_NE(first.payload, second.payload);
  EXPECT_EQ(first.frame, first_again.frame) << "every member derives its formation's keys alike";
  const uint16_t seal_at = wire::frame_seal_at(wire::FrameType::Ack);
  FrameAuth recorded(first, 1, 4), now(second, 2, 4), then(first_again, 2, 4);
  const std::vector<uint8_t> f = sealed_ack(recorded, 1, 1);
  EXPECT_EQ(now.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::BadTag) << "a recorded frame opens again";
  EXPECT_EQ(then.open_frame(f.data(), kLink, seal_at, 1), FrameAuth::Verdict::Ok);
  std::vector<uint8_t> bytes(1400, 0x5a);
  const wire::Seal s = recorded.seal_payload(bytes.data(), static_cast<uint32_t>(bytes.size()));
  EXPECT_FALSE(now.payload_ok(bytes.data(), 1400, 1, s)) << "a recorded payload opens again";
  EXPECT_TRUE(then.payload_ok(bytes.data(), 1400, 1, s));
  // Ranks' lives in another order are another formation too.
  restarted[3] = 0x4444;
  std::swap(restarted[0], restarted[1]);
  EXPECT_NE(derive_formation_keys(*key, 7, 9, restarted).frame, first.frame);
}

TEST(FrameAuth, APayloadSealIsTheSealersOverItsBytes) {
  const EpochKeys keys = derive_formation_keys(*key_of('c'), 1, 1, {});
  FrameAuth root(keys, 0, 3), receiver(keys, 2, 3);
  std::vector<uint8_t> bytes(1400);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  const wire::Seal s = root.seal_payload(bytes.data(), static_cast<uint32_t>(bytes.size()));
  EXPECT_TRUE(receiver.payload_ok(bytes.data(), 1400, 0, s));
  EXPECT_FALSE(receiver.payload_ok(bytes.data(), 1400, 1, s)) << "sealed by another member";
  EXPECT_FALSE(receiver.payload_ok(bytes.data(), 1399, 0, s)) << "cut short";
  bytes[700] ^= 1;
  EXPECT_FALSE(receiver.payload_ok(bytes.data(), 1400, 0, s)) << "one bit changed";
  // Two seals of the same bytes never share a nonce.
  bytes[700] ^= 1;
  const wire::Seal t = root.seal_payload(bytes.data(), 1400);
  EXPECT_NE(s.counter, t.counter);
  EXPECT_NE(0, std::memcmp(s.tag, t.tag, sizeof s.tag));
}

// ---------------------------------------------------------------- keys

class KeyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/lanecast-keys-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    chmod(path.c_str(), mode);
    return path;
  }
  static void expect_refused(const std::string& path, const std::string& why) {
    try {
      AuthKey::from_file(path);
      ADD_FAILURE() << path << " was taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  std::string dir_;
  const std::string hex_ = std::string(32, 'e') + std::string(32, '0');
};

TEST_F(KeyFiles, AFileOnlyItsOwnerReadsIsTaken) {
  const auto k = AuthKey::from_file(write("good", hex_ + "\n", 0600));
  EXPECT_EQ(k->hex(), hex_);
  EXPECT_EQ(AuthKey::from_file(write("ro", hex_, 0400))->fingerprint(), k->fingerprint());
  EXPECT_EQ(k->fingerprint().size(), 16u);
  EXPECT_EQ(k->fingerprint().find("ee"), std::string::npos) << "the fingerprint says nothing of the key";
}

TEST_F(KeyFiles, WhatAnotherUserCouldReadOrPlantIsRefused) {
  expect_refused(write("loose", hex_, 0644), "group or others");
  expect_refused(write("group", hex_, 0640), "group or others");
  const std::string target = write("target", hex_, 0600);
  const std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0);
  expect_refused(link, "symbolic link");
  expect_refused(dir_, "not a regular file");
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(fifo, "not a regular file");
  const std::string foreign = write("foreign", hex_, 0600);
  if (geteuid() == 0) {
    ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
    expect_refused(foreign, "owned by uid 65534");
  }
  expect_refused(write("short", std::string(62, 'a'), 0600), "62 characters");
  expect_refused(write("nothex", std::string(63, 'a') + "g", 0600), "not hex");
  expect_refused(write("huge", std::string(5000, 'a'), 0600), "longer than a key file");
  expect_refused(dir_ + "/absent", "No such file");
}

TEST_F(KeyFiles, TheEnvironmentGivesOneKeyOrNone) {
  unsetenv("LANECAST_GROUP_KEY");
  unsetenv("LANECAST_GROUP_KEY_FILE");
  EXPECT_EQ(AuthKey::from_environment(), nullptr);
  // A file alone, before any hex digits were read.
  setenv("LANECAST_GROUP_KEY_FILE", write("k", std::string(64, '3'), 0600).c_str(), 1);
  EXPECT_EQ(AuthKey::from_environment()->hex(), std::string(64, '3'));
  setenv("LANECAST_GROUP_KEY", hex_.c_str(), 1);
  EXPECT_THROW(AuthKey::from_environment(), std::invalid_argument);
  unsetenv("LANECAST_GROUP_KEY");
  unsetenv("LANECAST_GROUP_KEY_FILE");
  // The digits are wiped where they lay and unset once read; the key read
  // stays the process's (a second join finds no variable, the same key).
  setenv("LANECAST_GROUP_KEY", hex_.c_str(), 1);
  const char* digits = getenv("LANECAST_GROUP_KEY");
  ASSERT_NE(digits, nullptr);
  EXPECT_EQ(AuthKey::from_environment()->hex(), hex_);
  EXPECT_EQ(getenv("LANECAST_GROUP_KEY"), nullptr);
  EXPECT_EQ(AuthKey::from_environment()->hex(), hex_);
  // Given both, still refused: the digits read earlier count as given.
  setenv("LANECAST_GROUP_KEY_FILE", write("k4", hex_, 0600).c_str(), 1);
  EXPECT_THROW(AuthKey::from_environment(), std::invalid_argument);
  unsetenv("LANECAST_GROUP_KEY_FILE");
  // A group spec's own key first, then its key file, then the environment.
  GroupSpec spec;
  spec.key_file = write("k2", std::string(64, '1'), 0600);
  EXPECT_EQ(resolve_key(spec)->hex(), std::string(64, '1'));
  spec.key = key_of('2');
  EXPECT_EQ(resolve_key(spec)->hex(), std::string(64, '2'));
}

// The VmFlags of the mapping of /proc/self/smaps that holds `p`.
std::string vm_flags_of(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%" SCNxPTR "-%" SCNxPTR " ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(KeyMemory, AKeysPagesAreLeftOutOfCoreDumps) {
  const auto k = AuthKey::generate();
  const std::string flags = vm_flags_of(k->bytes().data());
  ASSERT_FALSE(flags.empty());
  EXPECT_NE(flags.find(" dd"), std::string::npos) << flags;
}

}  // namespace
}  // namespace lanecast::engine::auth
