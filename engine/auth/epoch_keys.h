// The keys one formation of a group runs with, derived from the group's
// secret (AuthKey): one key for frames' own seals and one for payload
// seals. A formation is the group id, its 32-bit epoch and every member's
// 64-bit incarnation (random per process start, learnt by every member from
// the bootstrap), all under a keyed BLAKE2b: two formations share keys only
// if they share every member's incarnation, so a frame recorded in one never
// opens in another for the life of the key - even once the 32-bit epoch
// repeats (after about 2^16 formations by the birthday bound). And one key
// for the bootstrap's hellos, bound to the group id only (the formation is
// what the hellos decide).
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "lanecast/group_spec.h"

namespace lanecast::engine::auth {

struct EpochKeys {
  std::array<uint8_t, 32> frame{}, payload{};
  std::string fingerprint;  // the secret's (AuthKey::fingerprint), for messages
  ~EpochKeys();
};

// `incarnations`: every member's, by rank (a group of one process, whose
// members share one life: one random value drawn for the group).
EpochKeys derive_formation_keys(const AuthKey& secret, uint32_t group_id, uint32_t epoch,
                                std::span<const uint64_t> incarnations);

struct HelloKey {
  std::array<uint8_t, 32> key{};
  ~HelloKey();
};
HelloKey derive_hello_key(const AuthKey& secret, uint32_t group_id);

}  // namespace lanecast::engine::auth
