// The memory behind a client's file: an anonymous memfd, never a name in a
// directory (nothing to plant a link at, nothing left behind by a crash).
// The daemon makes it with every page allocated up front (fallocate: a host
// out of memory is a refusal of the client, not a SIGBUS later) and seals
// it against shrinking and growing, so the application it hands the
// descriptor to cannot truncate the pages from under the daemon's mapping.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace lanecast::ipc {

class SharedMemory {
 public:
  // A sealed memfd of `bytes` (zeroed), mapped read-write here; nullopt and
  // `why` when the host cannot give the memory.
  static std::optional<SharedMemory> create(const char* name, size_t bytes, std::string* why);
  // Maps the descriptor a daemon sent (taking it over): it must be a memfd
  // sealed against shrinking, of exactly `bytes`.
  static std::optional<SharedMemory> adopt(int fd, size_t bytes, std::string* why);

  SharedMemory(SharedMemory&& o) noexcept;
  SharedMemory& operator=(SharedMemory&& o) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();

  void* data() const { return map_; }
  size_t size() const { return bytes_; }
  int fd() const { return fd_; }
  void close_fd();  // the mapping stays

 private:
  SharedMemory() = default;
  void release();
  int fd_ = -1;
  void* map_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace lanecast::ipc
