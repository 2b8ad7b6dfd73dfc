#include "ipc/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace lanecast::ipc {
namespace {

constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;

std::nullopt_t fail(std::string* why, const std::string& what, int err) {
  if (why != nullptr) *why = what + ": " + std::strerror(err);
  return std::nullopt;
}

}  // namespace

std::optional<SharedMemory> SharedMemory::create(const char* name, size_t bytes, std::string* why) {
  SharedMemory m;
  m.fd_ = ::memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (m.fd_ < 0) return fail(why, "memfd_create", errno);
  if (::ftruncate(m.fd_, static_cast<off_t>(bytes)) != 0) return fail(why, "ftruncate", errno);
  // Every page now: if the host has no memory for them, this is where it
  // says so, not a fault in the daemon's loop.
  if (::fallocate(m.fd_, 0, 0, static_cast<off_t>(bytes)) != 0) return fail(why, "fallocate", errno);
  if (::fcntl(m.fd_, F_ADD_SEALS, kSeals) != 0) return fail(why, "sealing the memfd", errno);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.fd_, 0);
  if (p == MAP_FAILED) return fail(why, "mmap", errno);
  m.map_ = p;
  m.bytes_ = bytes;
  return m;
}

std::optional<SharedMemory> SharedMemory::adopt(int fd, size_t bytes, std::string* why) {
  SharedMemory m;
  m.fd_ = fd;
  struct stat st{};
  if (::fstat(fd, &st) != 0) return fail(why, "fstat", errno);
  if (!S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != bytes) {
    if (why != nullptr) *why = "the descriptor is not a file of the size the daemon said";
    return std::nullopt;
  }
  // Unsealed, the other side could shrink it and this process would fault
  // on its next read.
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0 || !(seals & F_SEAL_SHRINK)) {
    if (why != nullptr) *why = "the descriptor is not a memfd sealed against shrinking";
    return std::nullopt;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail(why, "mmap", errno);
  m.map_ = p;
  m.bytes_ = bytes;
  return m;
}

SharedMemory::SharedMemory(SharedMemory&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), map_(std::exchange(o.map_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& o) noexcept {
  if (this != &o) {
    release();
    fd_ = std::exchange(o.fd_, -1);
    map_ = std::exchange(o.map_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

SharedMemory::~SharedMemory() { release(); }

void SharedMemory::close_fd() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void SharedMemory::release() {
  if (map_ != nullptr) ::munmap(map_, bytes_);
  map_ = nullptr;
  close_fd();
}

}  // namespace lanecast::ipc
