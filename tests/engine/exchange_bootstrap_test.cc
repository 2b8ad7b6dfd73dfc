// The exchange bootstrap (engine/bootstrap/exchange_bootstrap.h): the
// application hands back every member's endpoint record. What comes back is
// bytes from other processes - a buggy or hostile peer of the application's
// own collective - so each way of getting it wrong is refused with its own
// message naming the rank, and nothing crashes on any input. No DPDK.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "engine/bootstrap/endpoint_record.h"
#include "engine/bootstrap/exchange_bootstrap.h"

namespace lanecast::engine::bootstrap {
namespace {

uint64_t test_seed() {
  if (const char* s = std::getenv("LANECAST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261206;
}

drivers::PeerAddress mac(uint8_t last) {
  drivers::PeerAddress a;
  a.len = 6;
  const uint8_t b[6] = {2, 0, 0, 3, 0, last};
  std::copy(b, b + 6, a.bytes);
  return a;
}

GroupSpec spec_of(uint32_t n) {
  GroupSpec s;
  s.name = "comm";
  s.id = 9;
  s.bootstrap = "exchange";
  s.lanes = 1;
  for (uint32_t r = 0; r < n; ++r) s.members.push_back({r, {"net_af_packet0,iface=v0"}, {}, 0});
  return s;
}

Endpoint member(uint32_t r) {
  Endpoint e;
  e.rank = r;
  e.lanes = {mac(static_cast<uint8_t>(10 + r))};
  e.incarnation = 1000 + r;
  return e;
}

std::vector<std::byte> bytes_of(const std::vector<uint8_t>& v) {
  std::vector<std::byte> out(v.size());
  std::memcpy(out.data(), v.data(), v.size());
  return out;
}

// Every member's record as an honest exchange returns it, for `spec`.
std::vector<std::vector<std::byte>> honest(const GroupSpec& spec) {
  std::vector<std::vector<std::byte>> all;
  for (uint32_t r = 0; r < spec.members.size(); ++r) all.push_back(bytes_of(encode_record({member(r), spec_digest(spec)})));
  return all;
}

// Joins as rank 1 with an exchange that returns `back`; "" when the table
// formed, else the refusal.
std::string refusal(GroupSpec spec, std::vector<std::vector<std::byte>> back) {
  spec.exchange = [&](std::span<const std::byte>) { return back; };
  try {
    make_exchange_bootstrap(spec)->exchange(member(1));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

TEST(ExchangeBootstrap, FormsTheTableFromEveryRecord) {
  GroupSpec spec = spec_of(3);
  std::vector<std::byte> mine;
  spec.exchange = [&](std::span<const std::byte> record) {
    mine.assign(record.begin(), record.end());
    return honest(spec_of(3));
  };
  const EndpointTable t = make_exchange_bootstrap(spec)->exchange(member(1));
  // What it handed the application is this member's record, as encoded.
  EXPECT_EQ(mine, bytes_of(encode_record({member(1), spec_digest(spec)})));
  ASSERT_EQ(t.members.size(), 3u);
  for (uint32_t r = 0; r < 3; ++r) {
    EXPECT_EQ(t.members[r].rank, r);
    EXPECT_TRUE(t.members[r].lanes.at(0) == mac(static_cast<uint8_t>(10 + r)));
  }
  EXPECT_EQ(t.epoch, epoch_of(9, t.members));
  EXPECT_NE(t.epoch, 0u);
  EXPECT_LE(mine.size(), kMaxEndpointRecordBytes);
}

TEST(ExchangeBootstrap, RefusesEveryWrongAnswerByName) {
  const GroupSpec spec = spec_of(3);
  auto back = honest(spec);
  EXPECT_EQ(refusal(spec, back), "");

  auto short_list = back;
  short_list.pop_back();
  EXPECT_EQ(refusal(spec, short_list), "comm: 2 endpoint records for a group of 3");

  auto missing = back;
  missing[2].clear();
  EXPECT_EQ(refusal(spec, missing), "comm: rank 2 passed no endpoint record through the exchange");

  auto garbage = back;
  garbage[0].assign(40, std::byte{0x41});
  EXPECT_EQ(refusal(spec, garbage), "comm: rank 0's endpoint record is unusable: not a lanecast endpoint record (no LCEP mark)");

  auto padded = back;  // an application that passed its fixed-size slot whole
  padded[2].resize(kMaxEndpointRecordBytes);
  EXPECT_NE(refusal(spec, padded).find("rank 2's endpoint record is unusable: "), std::string::npos);

  auto swapped = back;
  std::swap(swapped[0], swapped[2]);
  EXPECT_EQ(refusal(spec, swapped), "comm: rank 0's endpoint record says rank 2");

  GroupSpec other = spec;
  other.window = 64;  // another member started with other settings
  auto foreign = back;
  foreign[1] = bytes_of(encode_record({member(1), spec_digest(other)}));
  EXPECT_NE(refusal(spec, foreign).find("rank 1 was started with other group settings"), std::string::npos);

  auto twice = back;  // two ranks behind one port
  Endpoint e = member(2);
  e.lanes = member(0).lanes;
  twice[2] = bytes_of(encode_record({e, spec_digest(spec)}));
  EXPECT_EQ(refusal(spec, twice),
            "comm: ranks 0 and 2 have the same address 02:00:00:03:00:0a on lane 0 (one port for two members?)");
}

TEST(ExchangeBootstrap, TheApplicationsFailureIsTheJoins) {
  GroupSpec spec = spec_of(2);
  spec.exchange = [](std::span<const std::byte>) -> std::vector<std::vector<std::byte>> {
    throw std::runtime_error("rank 1: its port was refused");
  };
  try {
    make_exchange_bootstrap(spec)->exchange(member(0));
    FAIL() << "no throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "rank 1: its port was refused");
  }
  spec.exchange = nullptr;
  EXPECT_THROW(make_exchange_bootstrap(spec), std::invalid_argument);
}

// Any bytes at all in any member's place: a table or a refusal, never a crash.
TEST(ExchangeBootstrap, RandomAnswersAreRefusedOrFormed) {
  std::mt19937_64 rng(test_seed());
  const GroupSpec spec = spec_of(4);
  const auto good = honest(spec);
  int formed = 0;
  for (int i = 0; i < 20'000; ++i) {
    auto back = good;
    if (rng() % 8 == 0) back.resize(rng() % 7);
    for (auto& rec : back) {
      switch (rng() % 4) {
        case 0: break;
        case 1: rec.resize(rng() % 300); break;
        case 2:
          if (!rec.empty()) rec[rng() % rec.size()] = static_cast<std::byte>(rng());
          break;
        case 3:
          rec.resize(rng() % 64);
          for (auto& b : rec) b = static_cast<std::byte>(rng());
          break;
      }
    }
    formed += refusal(spec, back).empty();
  }
  EXPECT_GT(formed, 0);  // some answers stayed good
  std::printf("random answers: %d of 20000 formed (seed %llu)\n", formed, static_cast<unsigned long long>(test_seed()));
}

}  // namespace
}  // namespace lanecast::engine::bootstrap
