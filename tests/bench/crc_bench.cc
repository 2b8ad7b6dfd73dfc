// CRC-32C and its fused copy, per implementation: ns per call and bytes per ns
// at the lengths the engine sees (a small frame, a 1400-byte payload, a jumbo
// segment, a large message piece). Compares the fused check-and-copy with the
// old two passes (memcpy, then crc32c over the copy).
//
// usage: crc_bench [BATCHES]   (default 41)
// Caches are warm (every call reuses one 64-byte aligned source and one
// destination). Each call continues the CRC of the previous one, so calls do
// not overlap in the out-of-order core: a cell is the time of one call after
// another, as a core spends it on one frame after another. Each cell is the
// fastest of BATCHES short batches, taken round-robin over all cells: on a
// shared machine other tenants only ever add time, so the fastest batch is the
// code's own speed, and a busy spell hits every cell alike.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "engine/checksum/crc32c.h"
#include "engine/checksum/crc32c_paths.h"

using namespace lanecast::engine;

namespace {

constexpr size_t kLengths[] = {64, 1400, 8192, 65536};
constexpr size_t kNumLengths = std::size(kLengths);
constexpr size_t kBytesPerBatch = 64 << 10;

// Keeps the compiler from dropping or merging work whose result is unused.
void keep(const void* p, uint32_t v) { asm volatile("" : : "r"(p), "r"(v) : "memory"); }

// Returns the CRC continued from `crc` (memcpy alone returns it unchanged).
using Op = std::function<uint32_t(uint32_t crc, uint8_t* dst, const uint8_t* src, size_t len)>;

struct Row {
  std::string name;
  Op op;
  double ns[kNumLengths];  // fastest batch, per call
};

// ns per call over one batch.
double time_batch(const Op& op, uint8_t* dst, const uint8_t* src, size_t len) {
  const size_t calls = std::max<size_t>(8, kBytesPerBatch / len);
  uint32_t crc = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < calls; ++i) {
    crc = op(crc, dst, src, len);
    keep(dst, crc);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

void measure(std::vector<Row>& rows, uint8_t* dst, const uint8_t* src, int batches) {
  for (Row& r : rows) std::fill(std::begin(r.ns), std::end(r.ns), 1e300);
  for (int b = 0; b <= batches; ++b) {  // batch 0 warms caches and predictors
    for (Row& r : rows) {
      for (size_t i = 0; i < kNumLengths; ++i) {
        const double ns = time_batch(r.op, dst, src, kLengths[i]);
        if (b > 0) r.ns[i] = std::min(r.ns[i], ns);
      }
    }
  }
}

void print_row(const Row& r) {
  std::printf("%-20s", r.name.c_str());
  for (size_t i = 0; i < kNumLengths; ++i)
    std::printf(" | %8.1f %6.2f", r.ns[i], static_cast<double>(kLengths[i]) / r.ns[i]);
  std::printf("\n");
}

void print_ratio(const char* name, const Row& num, const Row& den) {
  std::printf("%-20s", name);
  for (size_t i = 0; i < kNumLengths; ++i) std::printf(" | %15.2f", num.ns[i] / den.ns[i]);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  const int batches = argc > 1 ? std::max(1, std::atoi(argv[1])) : 41;
  const size_t max_len = kLengths[kNumLengths - 1];
  std::vector<uint8_t> src_store(max_len + 64), dst_store(max_len + 64);
  uint8_t* src = src_store.data() + (64 - reinterpret_cast<uintptr_t>(src_store.data()) % 64) % 64;
  uint8_t* dst = dst_store.data() + (64 - reinterpret_cast<uintptr_t>(dst_store.data()) % 64) % 64;
  for (size_t i = 0; i < max_len; ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);

  std::vector<Crc32cPath> paths;
  for (Crc32cPath p : kAllCrc32cPaths)
    if (crc32c_available(p)) paths.push_back(p);
  const size_t n = paths.size();

  // Row order: memcpy, then per path crc alone, then per path memcpy + crc,
  // then per path the fused copy.
  std::vector<Row> rows;
  rows.push_back({"memcpy", [](uint32_t crc, uint8_t* d, const uint8_t* s, size_t len) {
                    std::memcpy(d, s, len);
                    return crc;
                  }, {}});
  for (Crc32cPath p : paths)
    rows.push_back({std::string("crc ") + crc32c_path_name(p),
                    [p](uint32_t crc, uint8_t*, const uint8_t* s, size_t len) { return crc32c_with(p, crc, s, len); },
                    {}});
  for (Crc32cPath p : paths)
    rows.push_back({std::string("memcpy+crc ") + crc32c_path_name(p),
                    [p](uint32_t crc, uint8_t* d, const uint8_t* s, size_t len) {
                      std::memcpy(d, s, len);
                      return crc32c_with(p, crc, d, len);
                    },
                    {}});
  for (Crc32cPath p : paths)
    rows.push_back({std::string("fused copy ") + crc32c_path_name(p),
                    [p](uint32_t crc, uint8_t* d, const uint8_t* s, size_t len) {
                      return crc32c_copy_with(p, crc, d, s, len);
                    },
                    {}});
  const auto two_pass = [&](size_t k) -> const Row& { return rows[1 + n + k]; };
  const auto fused = [&](size_t k) -> const Row& { return rows[1 + 2 * n + k]; };

  measure(rows, dst, src, batches);

  std::printf("crc_bench: best path %s; fastest of %d batches; ns per call, bytes per ns\n\n",
              crc32c_path_name(crc32c_best_path()), batches);
  std::printf("%-20s", "");
  for (size_t len : kLengths) std::printf(" | %13zu B", len);
  std::printf("\n%-20s", "");
  for (size_t i = 0; i < kNumLengths; ++i) std::printf(" | %8s %6s", "ns", "B/ns");
  std::printf("\n");
  for (const Row& r : rows) print_row(r);

  std::printf("\nfused copy / (memcpy + crc) on the same path: below 1 the fused copy wins\n");
  for (size_t k = 0; k < n; ++k) print_ratio(crc32c_path_name(paths[k]), fused(k), two_pass(k));
  // What the datapath did before: memcpy, then one crc32 stream (sse42).
  const size_t old = std::min<size_t>(1, n - 1);
  std::printf("\nfused copy on the best path / (memcpy + crc %s)\n", crc32c_path_name(paths[old]));
  print_ratio("best vs old", fused(n - 1), two_pass(old));
  return 0;
}
