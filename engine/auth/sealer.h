// Tags under one key: AES-256-GCM with no plaintext - GMAC - over the bytes
// given, from libsodium (its AES-NI and PCLMUL code; no cipher here is
// written by lanecast). The nonce is the sealer's rank and its counter,
// which it never uses twice under a key, so a tag is never computed twice
// over different bytes with one nonce (GCM's one rule).
#pragma once

#include <sodium.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace lanecast::engine::auth {

inline constexpr size_t kTagBytes = 16;

class Sealer {
 public:
  explicit Sealer(const std::array<uint8_t, 32>& key);
  ~Sealer();
  Sealer(const Sealer&) = delete;
  Sealer& operator=(const Sealer&) = delete;
  // Whether this CPU runs libsodium's AES-256-GCM (AES-NI and PCLMUL).
  static bool available();

  void tag(const uint8_t* bytes, size_t len, uint32_t rank, uint64_t counter, uint8_t out[kTagBytes]) const;
  // In constant time.
  bool check(const uint8_t* bytes, size_t len, uint32_t rank, uint64_t counter, const uint8_t tag[kTagBytes]) const;

 private:
  crypto_aead_aes256gcm_state state_;  // the expanded key (16-byte aligned by its type)
};

}  // namespace lanecast::engine::auth
