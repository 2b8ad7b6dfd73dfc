// Chooses the CRC-32C implementation once, from the CPU's features, and runs
// it; also the test hook that runs a named one.
#include "engine/checksum/crc32c.h"

#include <array>
#include <iterator>
#include <stdexcept>
#include <string>

#include "engine/checksum/crc32c_kernels.h"
#include "engine/checksum/crc32c_paths.h"

namespace lanecast::engine {
namespace {

using crc32c_kernels::Kernel;

// Null if this build does not have the path.
const Kernel* compiled_kernel(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::Table:
      return &crc32c_kernels::kTable;
#if defined(__x86_64__)
    case Crc32cPath::Sse42:
      return &crc32c_kernels::kSse42;
    case Crc32cPath::Sse42Interleaved:
      return &crc32c_kernels::kSse42Interleaved;
    case Crc32cPath::Avx512:
      return &crc32c_kernels::kAvx512;
#else
    default:
      return nullptr;
#endif
  }
  return nullptr;
}

bool cpu_runs(Crc32cPath path) {
#if defined(__x86_64__)
  __builtin_cpu_init();  // so this is right even when called from another static initialiser
  const bool crc32 = __builtin_cpu_supports("sse4.2");
  const bool clmul = crc32 && __builtin_cpu_supports("pclmul");
  switch (path) {
    case Crc32cPath::Table:
      return true;
    case Crc32cPath::Sse42:
      return crc32;
    case Crc32cPath::Sse42Interleaved:
      return clmul;
    case Crc32cPath::Avx512:
      // __builtin_cpu_supports also checks that the OS saves the 512-bit state.
      return clmul && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("vpclmulqdq");
  }
  return false;
#else
  return path == Crc32cPath::Table;
#endif
}

constexpr size_t kPaths = std::size(kAllCrc32cPaths);
static_assert(
    [] {
      for (size_t i = 0; i < kPaths; ++i)
        if (static_cast<size_t>(kAllCrc32cPaths[i]) != i) return false;
      return true;
    }(),
    "kAllCrc32cPaths lists the enum in order, so a path indexes Paths::runnable");

// What this build and CPU can run, decided at first use rather than by a
// namespace-scope initialiser, so frames checked from other static
// initialisers already get the right paths.
struct Paths {
  std::array<const Kernel*, kPaths> runnable{};  // null where not available
  Crc32cPath best = Crc32cPath::Table;
  const Kernel* best_kernel = nullptr;
};

const Paths& paths() {
  static const Paths p = [] {
    Paths r;
    for (Crc32cPath path : kAllCrc32cPaths) {
      if (compiled_kernel(path) == nullptr || !cpu_runs(path)) continue;
      r.runnable[static_cast<size_t>(path)] = compiled_kernel(path);
      r.best = path;  // the enum lists paths slowest first
      r.best_kernel = compiled_kernel(path);
    }
    return r;
  }();
  return p;
}

const Kernel& available_kernel(Crc32cPath path) {
  if (!crc32c_available(path))
    throw std::invalid_argument(std::string("crc32c: path ") + crc32c_path_name(path) +
                                " is not available on this CPU or build");
  return *paths().runnable[static_cast<size_t>(path)];
}

// CRC-32C starts from all ones and inverts the result; the kernels work on the
// raw register, so a CRC continues from the previous call's result.
uint32_t run_update(const Kernel& k, uint32_t crc, const void* data, size_t len) {
  return ~k.update(~crc, static_cast<const uint8_t*>(data), len);
}

uint32_t run_copy(const Kernel& k, uint32_t crc, void* dst, const void* src, size_t len) {
  return ~k.copy(~crc, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), len);
}

}  // namespace

const char* crc32c_path_name(Crc32cPath path) {
  switch (path) {
    case Crc32cPath::Table:
      return "table";
    case Crc32cPath::Sse42:
      return "sse42";
    case Crc32cPath::Sse42Interleaved:
      return "sse42x3";
    case Crc32cPath::Avx512:
      return "avx512";
  }
  return "?";
}

bool crc32c_available(Crc32cPath path) {
  const auto i = static_cast<size_t>(path);
  return i < kPaths && paths().runnable[i] != nullptr;
}

Crc32cPath crc32c_best_path() { return paths().best; }

uint32_t crc32c(uint32_t crc, const void* data, size_t len) {
  return run_update(*paths().best_kernel, crc, data, len);
}

uint32_t crc32c_copy(uint32_t crc, void* dst, const void* src, size_t len) {
  return run_copy(*paths().best_kernel, crc, dst, src, len);
}

uint32_t crc32c_with(Crc32cPath path, uint32_t crc, const void* data, size_t len) {
  return run_update(available_kernel(path), crc, data, len);
}

uint32_t crc32c_copy_with(Crc32cPath path, uint32_t crc, void* dst, const void* src, size_t len) {
  return run_copy(available_kernel(path), crc, dst, src, len);
}

}  // namespace lanecast::engine
