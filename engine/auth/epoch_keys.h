// The keys one epoch of a group runs with, derived from the group's secret
// (AuthKey) with libsodium's KDF (BLAKE2b keyed with the secret, a subkey
// number and an 8-byte context): one key for frames' own seals and one for
// payload seals, both bound to the group id and the epoch, so no tag made
// in one group or epoch is good in another; and one key for the bootstrap's
// hellos, bound to the group id only (the epoch is not known yet).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "lanecast/group_spec.h"

namespace lanecast::engine::auth {

struct EpochKeys {
  std::array<uint8_t, 32> frame{}, payload{};
  std::string fingerprint;  // the secret's (AuthKey::fingerprint), for messages
  ~EpochKeys();
};

EpochKeys derive_epoch_keys(const AuthKey& secret, uint32_t group_id, uint32_t epoch);

struct HelloKey {
  std::array<uint8_t, 32> key{};
  ~HelloKey();
};
HelloKey derive_hello_key(const AuthKey& secret, uint32_t group_id);

}  // namespace lanecast::engine::auth
