#include "engine/auth/sealer.h"

#include <cstring>
#include <stdexcept>

namespace lanecast::engine::auth {
namespace {

void nonce_of(uint32_t rank, uint64_t counter, uint8_t out[crypto_aead_aes256gcm_NPUBBYTES]) {
  static_assert(crypto_aead_aes256gcm_NPUBBYTES == 12 && crypto_aead_aes256gcm_ABYTES == kTagBytes);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(rank >> (8 * i));
  for (int i = 0; i < 8; ++i) out[4 + i] = static_cast<uint8_t>(counter >> (8 * i));
}

// GCM with an empty message still wants a pointer for it.
const uint8_t kNoText[1] = {0};

}  // namespace

bool Sealer::available() { return sodium_init() >= 0 && crypto_aead_aes256gcm_is_available() == 1; }

Sealer::Sealer(const std::array<uint8_t, 32>& key) {
  if (!available())
    throw std::runtime_error("group key: this CPU lacks AES-NI or PCLMUL, which lanecast's frame tags need "
                             "(libsodium's AES-256-GCM)");
  crypto_aead_aes256gcm_beforenm(&state_, key.data());
}

Sealer::~Sealer() { sodium_memzero(&state_, sizeof state_); }

void Sealer::tag(const uint8_t* bytes, size_t len, uint32_t rank, uint64_t counter, uint8_t out[kTagBytes]) const {
  uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
  nonce_of(rank, counter, nonce);
  unsigned long long tag_len = 0;
  uint8_t none[1];
  crypto_aead_aes256gcm_encrypt_detached_afternm(none, out, &tag_len, kNoText, 0, bytes, len, nullptr, nonce, &state_);
}

bool Sealer::check(const uint8_t* bytes, size_t len, uint32_t rank, uint64_t counter,
                   const uint8_t tag[kTagBytes]) const {
  uint8_t nonce[crypto_aead_aes256gcm_NPUBBYTES];
  nonce_of(rank, counter, nonce);
  uint8_t none[1];
  return crypto_aead_aes256gcm_decrypt_detached_afternm(none, nullptr, kNoText, 0, tag, bytes, len, nonce, &state_) ==
         0;
}

}  // namespace lanecast::engine::auth
