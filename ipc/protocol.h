// What an application and `lanecast daemon` say on the daemon's Unix socket
// (DIR/control.sock, SOCK_SEQPACKET): the application's Hello, the daemon's
// Welcome - with the client's file, a sealed memfd, attached (SCM_RIGHTS)
// when the answer is yes. Nothing else is said: the socket then stays open
// for the application's life, and either side closing it ends the client.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ipc/client_file.h"

namespace lanecast::ipc {

struct Hello {
  uint32_t version = kFormatVersion;
  uint8_t role = 0;
  uint8_t reserved[3] = {};
  uint64_t publish_bytes = 0;   // 0: the daemon's default
  uint64_t delivery_bytes = 0;
  char name[32] = {};           // for counters and messages: valid_client_name(), NUL-terminated
};

// Why a daemon refused a client (Welcome::status), each counted apart.
enum class Refusal : int32_t {
  None = 0,
  TooManyClients,   // --max-clients connections already (answered or not)
  Credentials,      // the peer's uid/gid is not one the user model allows
  HelloTimeout,     // no hello within --hello-timeout
  BadHello,         // not one Hello of the right size
  Version,          // a client library of another kFormatVersion
  BadRole,
  BadName,          // valid_client_name() says no
  RingSize,         // a ring outside kMinRing..--max-ring
  MemoryTotal,      // all clients' files together would pass --max-client-memory
  NoMemory,         // the memfd could not be made or filled (the host's memory)
  TooManyForUser,   // the peer's uid holds --max-clients-per-user connections already
  kCount
};
inline constexpr std::array<const char*, static_cast<size_t>(Refusal::kCount)> kRefusalNames = {
    "none",     "too_many_clients", "credentials", "hello_timeout", "bad_hello",   "version",
    "bad_role", "bad_name",         "ring_size",   "memory_total",  "no_memory",
    "too_many_for_user"};
inline const char* refusal_name(Refusal r) {
  const auto i = static_cast<size_t>(r);
  return i < kRefusalNames.size() ? kRefusalNames[i] : "unknown";
}

struct Welcome {
  int32_t status = 0;           // a Refusal; 0 (None): welcome, the memfd is attached
  uint32_t client_id = 0;
  uint64_t file_bytes = 0;      // the memfd's size
  char reason[192] = {};        // when refused: why, for a person
};

// A client's name shows in counters (Prometheus labels, `lanecast stat`) and
// messages: at most 31 bytes of printable ASCII (space to '~'), no control
// characters. Quotes and backslashes are allowed - the counters' writers
// escape them - but nothing that could end a line.
inline constexpr size_t kMaxNameBytes = sizeof(Hello::name) - 1;
inline bool valid_client_name(std::string_view name) {
  if (name.size() > kMaxNameBytes) return false;
  for (const char ch : name) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

}  // namespace lanecast::ipc
