// The input format of shm_fuzz, shared by the target (which decodes it) and
// make_corpus.cc (which writes seeds in it). One input is a client's file
// of `lanecast daemon` (ipc/client_file.h) laid out by the daemon, then a
// sequence of steps by three parties sharing its bytes: the daemon (its
// side of every ring, through the views it made from its own layout), the
// application (the client library's side, through views it made by
// checking the file), and the attacker, who writes anything anywhere.
//
//   byte 0   file: bits 0-1 role (0 and 3: both rings, 1 publisher, 2
//            subscriber), bits 2-4 the publish ring's size, bits 5-7 the
//            delivery ring's (kShmRings)
//   byte 1   the daemon's largest message: 16 + 8 * byte
//   then steps, until the input ends; each starts with a byte whose low
//   three bits say what (ShmStep) and whose high five bits are `n`:
//     Bytes       u16 offset (modulo the file), then n + 1 bytes written there
//     Word        u16 word index (modulo the file's words), u8 value kind
//                 (kShmWordKinds), and with kind 0 eight bytes of the value
//     DaemonTake  the daemon takes up to n + 1 records of the publish ring
//     DaemonGive  the daemon delivers a message of u16 bytes (modulo 4096)
//     DaemonTell  the daemon pushes a notice
//     ClientOpen  the application checks the file and takes new views
//     ClientTake  the application takes up to n + 1 messages and notices
//     ClientPut   the application publishes a record of u16 bytes (modulo 4096)
#pragma once

#include <cstdint>
#include <vector>

namespace lanecast::fuzz {

inline constexpr uint64_t kShmRings[8] = {4096, 4104, 4160, 5000, 8192, 12288, 16384, 65536};

enum class ShmStep : uint8_t { Bytes, Word, DaemonTake, DaemonGive, DaemonTell, ClientOpen, ClientTake, ClientPut };

// Word values: 0 raw (eight bytes follow); then, relative to the ring whose
// header or records the word falls in (the publish ring's otherwise):
enum ShmWordKind : uint8_t {
  kWordRaw,
  kWordZero,
  kWordOnes,
  kWordCapacity,
  kWordCapacityMinus1,
  kWordPastEnd,      // capacity + 8
  kWordFileBytes,
  kWordHeadPlusCap,  // the ring's head + capacity + 8
  kWordTailMinus8,
  kWordHuge,         // 1 << 63
  kWordPlus8,        // the word's value + 8
  kWordLow32,        // a torn update: the low half of all ones
  kWordSkip,         // a skip record head (length 0)
  kShmWordKinds
};

inline uint8_t shm_step(ShmStep s, uint8_t n = 0) { return static_cast<uint8_t>(static_cast<uint8_t>(s) | (n << 3)); }

// Appends a little-endian u16.
inline void put16(std::vector<uint8_t>& v, uint16_t x) {
  v.push_back(static_cast<uint8_t>(x));
  v.push_back(static_cast<uint8_t>(x >> 8));
}

}  // namespace lanecast::fuzz
