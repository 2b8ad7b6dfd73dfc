// AuthKey (lanecast/group_spec.h): a group's secret, read from hex digits, a
// file or the environment, and wiped when it goes. The file is checked as
// an attacker would use it: opened without following a symbolic link, then
// its owner and mode read from the descriptor opened (not from the path,
// which could change between the check and the read). The key's own pages
// are kept out of core dumps and swap, and hex digits from the environment
// are wiped there once read: a crash report, /proc/PID/environ or a child
// process is no way to the key.
#include <fcntl.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>

#include "lanecast/group_spec.h"

namespace lanecast {
namespace {

void need_sodium() {
  if (sodium_init() < 0) throw std::runtime_error("group key: libsodium cannot start");
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

size_t key_pages_bytes(size_t bytes) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// The key read from LANECAST_GROUP_KEY: the variable is gone once read, and
// later joins in this process take the same key.
std::mutex env_key_mutex;
std::shared_ptr<const AuthKey> env_key;

// Overwrites the variable's value where it lies (the block /proc/PID/environ
// shows, or the heap for one set later) and removes it.
void wipe_environment_variable(const char* name) {
  if (char* v = std::getenv(name); v != nullptr) sodium_memzero(v, std::strlen(v));
  ::unsetenv(name);
}

}  // namespace

void* AuthKey::operator new(size_t bytes) {
  const size_t len = key_pages_bytes(bytes);
  void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  // A dump must not carry the key; refused only by a kernel without the
  // advice, and then the pages are still the key's alone.
  (void)::madvise(p, len, MADV_DONTDUMP);
  // Locked (never swapped out) where RLIMIT_MEMLOCK or CAP_IPC_LOCK allow;
  // a process without either still runs.
  (void)::mlock(p, len);
  return p;
}

void AuthKey::operator delete(void* p) {
  if (p == nullptr) return;
  const size_t len = key_pages_bytes(sizeof(AuthKey));
  ::munlock(p, len);
  ::munmap(p, len);
}

std::shared_ptr<const AuthKey> AuthKey::from_hex(std::string_view hex, const std::string& what) {
  while (!hex.empty() && blank(hex.front())) hex.remove_prefix(1);
  while (!hex.empty() && blank(hex.back())) hex.remove_suffix(1);
  const std::string allowed = "allowed: " + std::to_string(2 * kBytes) + " hex digits (" +
                              std::to_string(8 * kBytes) + " bits; e.g. `lanecast key --new FILE`)";
  if (hex.size() != 2 * kBytes)
    throw std::invalid_argument(what + ": a group key of " + std::to_string(hex.size()) + " characters; " + allowed);
  std::shared_ptr<AuthKey> k(new AuthKey());
  for (size_t i = 0; i < kBytes; ++i) {
    const int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument(what + ": the group key holds a character that is not hex; " + allowed);
    k->bytes_[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return k;
}

std::shared_ptr<const AuthKey> AuthKey::from_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const int e = errno;
    throw std::invalid_argument(path + ": cannot read the group key file: " +
                                (e == ELOOP ? std::string("it is a symbolic link") : std::strerror(e)));
  }
  struct stat st {};
  std::string why;
  if (::fstat(fd, &st) != 0) why = std::strerror(errno);
  else if (!S_ISREG(st.st_mode)) why = "not a regular file";
  else if (st.st_uid != ::geteuid() && st.st_uid != 0) why = "owned by uid " + std::to_string(st.st_uid) + ", not by this user or root";
  else if (st.st_mode & 077) why = "group or others may read or write it (chmod 600)";
  else if (st.st_size > 4096) why = "longer than a key file (" + std::to_string(st.st_size) + " bytes)";
  char text[4097] = {};
  ssize_t n = 0;
  if (why.empty()) {
    n = ::read(fd, text, sizeof text - 1);
    if (n < 0) why = std::strerror(errno);
  }
  ::close(fd);
  if (!why.empty()) {
    sodium_memzero(text, sizeof text);
    throw std::invalid_argument(path + ": refused as a group key file: " + why);
  }
  try {
    auto k = from_hex(std::string_view(text, static_cast<size_t>(n)), path);
    sodium_memzero(text, sizeof text);
    return k;
  } catch (...) {
    sodium_memzero(text, sizeof text);
    throw;
  }
}

std::shared_ptr<const AuthKey> AuthKey::from_environment() {
  const std::lock_guard<std::mutex> lock(env_key_mutex);
  const char* hex = std::getenv("LANECAST_GROUP_KEY");
  const char* file = std::getenv("LANECAST_GROUP_KEY_FILE");
  if ((hex != nullptr || env_key != nullptr) && file != nullptr)
    throw std::invalid_argument("both LANECAST_GROUP_KEY and LANECAST_GROUP_KEY_FILE are set: give one");
  if (hex != nullptr) {
    std::shared_ptr<const AuthKey> k;
    try {
      k = from_hex(hex, "LANECAST_GROUP_KEY");
    } catch (...) {
      wipe_environment_variable("LANECAST_GROUP_KEY");
      throw;
    }
    wipe_environment_variable("LANECAST_GROUP_KEY");
    env_key = k;
    return k;
  }
  if (env_key != nullptr) return env_key;
  if (file != nullptr) return from_file(file);
  return nullptr;
}

std::shared_ptr<const AuthKey> AuthKey::generate() {
  need_sodium();
  std::shared_ptr<AuthKey> k(new AuthKey());
  randombytes_buf(k->bytes_.data(), kBytes);
  return k;
}

AuthKey::~AuthKey() { sodium_memzero(bytes_.data(), bytes_.size()); }

std::string AuthKey::hex() const {
  std::string out(2 * kBytes + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes_.data(), kBytes);
  out.pop_back();
  return out;
}

std::string AuthKey::fingerprint() const {
  need_sodium();
  uint8_t h[8];
  static const uint8_t kNothing[1] = {0};
  crypto_generichash(h, sizeof h, kNothing, 0, bytes_.data(), kBytes);
  char text[2 * sizeof h + 1];
  sodium_bin2hex(text, sizeof text, h, sizeof h);
  return text;
}

std::shared_ptr<const AuthKey> resolve_key(const GroupSpec& spec) {
  if (spec.key) return spec.key;
  if (!spec.key_file.empty()) return AuthKey::from_file(spec.key_file);
  return AuthKey::from_environment();
}

}  // namespace lanecast
