#include "apps/daemon/daemon_dir.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "apps/daemon/safe_files.h"

namespace lanecast::daemon {
namespace {

std::runtime_error dir_error(const std::string& path, const std::string& what) {
  return std::runtime_error("--dir " + path + ": " + what);
}

std::string octal(mode_t m) {
  char b[8];
  std::snprintf(b, sizeof b, "%04o", static_cast<unsigned>(m & 07777));
  return b;
}

// No one but root and `owner` may rename entries in any parent of the
// directory: each is theirs, and not writable by others unless sticky.
void check_parents(const std::string& real_parent, const std::string& shown, uid_t owner) {
  std::string at;
  size_t from = 0;
  for (;;) {
    const size_t slash = real_parent.find('/', from + 1);
    at = real_parent.substr(0, slash == std::string::npos ? real_parent.size() : slash);
    if (at.empty()) at = "/";
    struct stat st{};
    if (::lstat(at.c_str(), &st) != 0) throw dir_error(shown, at + ": " + std::strerror(errno));
    if (st.st_uid != 0 && st.st_uid != owner)
      throw dir_error(shown, "its parent " + at + " belongs to uid " + std::to_string(st.st_uid) +
                                 ", who could replace the directory; choose a --dir under root's or uid " +
                                 std::to_string(owner) + "'s directories");
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
      throw dir_error(shown, "its parent " + at + " (mode " + octal(st.st_mode) +
                                 ") is writable by others and not sticky: they could replace the directory");
    if (slash == std::string::npos) return;
    from = slash;
  }
}

}  // namespace

std::string default_daemon_dir(const std::string& group, uint32_t rank) {
  const bool plain = !group.empty() && group.size() <= 64 && group.front() != '.' &&
                     group.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") ==
                         std::string::npos;
  if (!plain)
    throw std::runtime_error("the group's name '" + group + "' cannot name the default --dir (/run/lanecast/GROUP-rRANK): "
                             "it must be 1..64 letters, digits, '_', '-' and '.', not starting with '.'; give --dir");
  const std::string base = "/run/lanecast";
  if (::mkdir(base.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("the default --dir needs " + base + ", which this user cannot make (" +
                             std::strerror(errno) + "): make it (systemd's RuntimeDirectory= does) or give --dir");
  return base + "/" + group + "-r" + std::to_string(rank);
}

DaemonDir::DaemonDir(const std::string& path, const AccessPolicy& access) : access_(access) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
  const std::string name = slash == std::string::npos ? p : p.substr(slash + 1);
  if (name.empty() || name == "." || name == "..") throw dir_error(path, "name a directory to make or use");
  char real[PATH_MAX];
  if (::realpath(parent.c_str(), real) == nullptr) throw dir_error(path, parent + ": " + std::strerror(errno));
  const std::string real_parent = real;
  check_parents(real_parent, path, access_.owner());
  path_ = (real_parent == "/" ? "" : real_parent) + "/" + name;
  if (path_.size() + sizeof "/control.sock" > sizeof(sockaddr_un::sun_path))
    throw dir_error(path, "too long for a socket path (" + std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                              " bytes with /control.sock)");

  const int parent_fd = ::open(real_parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (parent_fd < 0) throw dir_error(path, real_parent + ": " + std::strerror(errno));
  const bool made = ::mkdirat(parent_fd, name.c_str(), 0700) == 0;
  if (!made && errno != EEXIST) {
    const int e = errno;
    ::close(parent_fd);
    throw dir_error(path, std::string("cannot make it: ") + std::strerror(e));
  }
  dirfd_ = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd_ < 0) {
    struct stat st{};
    const int e = errno;
    const bool known = ::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
    ::close(parent_fd);
    throw dir_error(path, known && !S_ISDIR(st.st_mode) ? "it is " + describe_entry(st) + ", not a directory; remove it"
                                                         : std::string("cannot open it: ") + std::strerror(e));
  }
  ::close(parent_fd);
  auto refuse = [&](const std::string& why) {
    ::close(dirfd_);
    dirfd_ = -1;
    return dir_error(path, why);
  };
  struct stat st{};
  if (::fstat(dirfd_, &st) != 0) throw refuse(std::strerror(errno));
  if (st.st_uid != access_.owner())
    throw refuse("it exists and belongs to uid " + std::to_string(st.st_uid) + ", not to the daemon's user (uid " +
                 std::to_string(access_.owner()) + "); remove it or choose another --dir");
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    throw refuse("it exists and is writable by its group or by others (mode " + octal(st.st_mode) +
                 "); remove it or choose another --dir");
  // Closed to everyone else until its entries are made (open_to_group()).
  if (::fchmod(dirfd_, 0700) != 0) throw refuse(std::string("chmod: ") + std::strerror(errno));

  // A socket left by a daemon of this user that died is replaced; one that
  // answers is another daemon's; anything else is refused.
  const std::string sock = socket_path();
  if (::fstatat(dirfd_, "control.sock", &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISSOCK(st.st_mode) || st.st_uid != access_.owner() || st.st_nlink != 1)
      throw refuse(sock + " exists and is " + describe_entry(st) + ", not a socket this user left; remove it");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
    const int probe = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    const bool alive = probe >= 0 && ::connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    if (probe >= 0) ::close(probe);
    if (alive) throw refuse("another daemon serves it (its control.sock answers)");
    if (::unlinkat(dirfd_, "control.sock", 0) != 0 && errno != ENOENT)
      throw refuse("cannot remove the dead control.sock: " + std::string(std::strerror(errno)));
  }
}

DaemonDir::~DaemonDir() {
  if (dirfd_ < 0) return;
  if (made_socket_) ::unlinkat(dirfd_, "control.sock", 0);
  if (made_stats_) ::unlinkat(dirfd_, "stats", 0);
  ::close(dirfd_);
}

int DaemonDir::make_stats_file(size_t bytes) {
  const int fd = create_new_file_at(dirfd_, "stats", stats_path(), access_.stats_mode(), true, "--dir");
  made_stats_ = true;
  int err = 0;
  if (access_.group() && ::fchown(fd, static_cast<uid_t>(-1), *access_.group()) != 0) err = errno;
  if (err == 0) err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err != 0) {
    ::close(fd);
    throw std::runtime_error("cannot make the stats file " + stats_path() + ": " + std::strerror(err));
  }
  return fd;
}

int DaemonDir::listen() {
  const std::string sock = socket_path();
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    throw std::runtime_error("cannot listen on " + sock + ": " + std::strerror(e));
  }
  made_socket_ = true;
  int err = 0;
  if (::fchmodat(dirfd_, "control.sock", access_.socket_mode(), 0) != 0) err = errno;
  if (err == 0 && access_.group() &&
      ::fchownat(dirfd_, "control.sock", static_cast<uid_t>(-1), *access_.group(), AT_SYMLINK_NOFOLLOW) != 0)
    err = errno;
  if (err == 0 && ::listen(fd, 64) != 0) err = errno;
  if (err != 0) {
    ::close(fd);
    throw std::runtime_error("cannot listen on " + sock + ": " + std::strerror(err));
  }
  return fd;
}

void DaemonDir::open_to_group() {
  if (!access_.group()) return;
  if (::fchown(dirfd_, static_cast<uid_t>(-1), *access_.group()) != 0 || ::fchmod(dirfd_, access_.dir_mode()) != 0)
    throw std::runtime_error("--allow-group: cannot give " + path_ + " to group " + access_.group_name() + ": " +
                             std::strerror(errno));
}

}  // namespace lanecast::daemon
