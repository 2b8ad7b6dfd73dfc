#include "engine/auth/epoch_keys.h"

#include <sodium.h>

#include <stdexcept>

namespace lanecast::engine::auth {
namespace {

void derive(std::array<uint8_t, 32>& out, const AuthKey& secret, uint64_t subkey, const char (&context)[9]) {
  if (sodium_init() < 0) throw std::runtime_error("group key: libsodium cannot start");
  static_assert(AuthKey::kBytes == crypto_kdf_KEYBYTES && crypto_kdf_CONTEXTBYTES == 8);
  if (crypto_kdf_derive_from_key(out.data(), out.size(), subkey, context, secret.bytes().data()) != 0)
    throw std::runtime_error("group key: cannot derive a key");
}

}  // namespace

EpochKeys::~EpochKeys() {
  sodium_memzero(frame.data(), frame.size());
  sodium_memzero(payload.data(), payload.size());
}

HelloKey::~HelloKey() { sodium_memzero(key.data(), key.size()); }

EpochKeys derive_epoch_keys(const AuthKey& secret, uint32_t group_id, uint32_t epoch) {
  EpochKeys k;
  const uint64_t subkey = uint64_t{group_id} << 32 | epoch;
  derive(k.frame, secret, subkey, "lcframe1");
  derive(k.payload, secret, subkey, "lcseal01");
  k.fingerprint = secret.fingerprint();
  return k;
}

HelloKey derive_hello_key(const AuthKey& secret, uint32_t group_id) {
  HelloKey k;
  derive(k.key, secret, group_id, "lchello1");
  return k;
}

}  // namespace lanecast::engine::auth
