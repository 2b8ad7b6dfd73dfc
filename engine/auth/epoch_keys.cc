#include "engine/auth/epoch_keys.h"

#include <sodium.h>

#include <stdexcept>

namespace lanecast::engine::auth {
namespace {

void start_sodium() {
  if (sodium_init() < 0) throw std::runtime_error("group key: libsodium cannot start");
}

void derive(std::array<uint8_t, 32>& out, const AuthKey& secret, uint64_t subkey, const char (&context)[9]) {
  start_sodium();
  static_assert(AuthKey::kBytes == crypto_kdf_KEYBYTES && crypto_kdf_CONTEXTBYTES == 8);
  if (crypto_kdf_derive_from_key(out.data(), out.size(), subkey, context, secret.bytes().data()) != 0)
    throw std::runtime_error("group key: cannot derive a key");
}

// Keyed BLAKE2b-256 (the secret is its key) over a context, the group id,
// the epoch, the member count and every incarnation, each in a fixed width:
// no two formations hash the same bytes.
void derive_formation(std::array<uint8_t, 32>& out, const AuthKey& secret, const char (&context)[9], uint32_t group_id,
                      uint32_t epoch, std::span<const uint64_t> incarnations) {
  start_sodium();
  crypto_generichash_state st;
  if (crypto_generichash_init(&st, secret.bytes().data(), secret.bytes().size(), out.size()) != 0)
    throw std::runtime_error("group key: cannot derive a key");
  const auto put = [&st](const void* p, size_t n) {
    crypto_generichash_update(&st, static_cast<const uint8_t*>(p), n);
  };
  const uint64_t n = incarnations.size();
  put(context, 8);
  put(&group_id, sizeof group_id);
  put(&epoch, sizeof epoch);
  put(&n, sizeof n);
  put(incarnations.data(), incarnations.size_bytes());
  crypto_generichash_final(&st, out.data(), out.size());
  sodium_memzero(&st, sizeof st);
}

}  // namespace

EpochKeys::~EpochKeys() {
  sodium_memzero(frame.data(), frame.size());
  sodium_memzero(payload.data(), payload.size());
}

HelloKey::~HelloKey() { sodium_memzero(key.data(), key.size()); }

EpochKeys derive_formation_keys(const AuthKey& secret, uint32_t group_id, uint32_t epoch,
                                std::span<const uint64_t> incarnations) {
  EpochKeys k;
  derive_formation(k.frame, secret, "lcframe2", group_id, epoch, incarnations);
  derive_formation(k.payload, secret, "lcseal02", group_id, epoch, incarnations);
  k.fingerprint = secret.fingerprint();
  return k;
}

HelloKey derive_hello_key(const AuthKey& secret, uint32_t group_id) {
  HelloKey k;
  derive(k.key, secret, group_id, "lchello1");
  return k;
}

}  // namespace lanecast::engine::auth
