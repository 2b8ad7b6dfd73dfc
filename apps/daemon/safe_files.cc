#include "apps/daemon/safe_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lanecast::daemon {

std::string describe_entry(const struct stat& st) {
  switch (st.st_mode & S_IFMT) {
    case S_IFLNK: return "a symbolic link";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFDIR: return "a directory";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFREG: break;
    default: return "something that is not a regular file";
  }
  if (st.st_uid != ::geteuid()) return "a file of uid " + std::to_string(st.st_uid);
  if (st.st_nlink != 1) return "a file with " + std::to_string(st.st_nlink) + " links";
  return "a file";
}

bool is_own_file(const struct stat& st) {
  return S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && st.st_nlink == 1;
}

int create_new_file_at(int dirfd, const std::string& name, const std::string& shown, mode_t mode, bool replace_own,
                       const std::string& what) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd >= 0) {
      ::fchmod(fd, mode);  // whatever the umask took away
      return fd;
    }
    if (errno != EEXIST) throw std::runtime_error(what + ": cannot create " + shown + ": " + std::strerror(errno));
    struct stat st{};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile: try again
    if (!replace_own || !is_own_file(st))
      throw std::runtime_error(what + ": " + shown + " exists and is " + describe_entry(st) +
                               "; refusing to write through it (remove it, or choose another path)");
    if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT)
      throw std::runtime_error(what + ": cannot remove the old " + shown + ": " + std::strerror(errno));
  }
  throw std::runtime_error(what + ": " + shown + " keeps appearing while it is being created; refusing it");
}

int create_new_file(const std::string& path, mode_t mode, const std::string& what) {
  return create_new_file_at(AT_FDCWD, path, path, mode, false, what);
}

void check_replaceable(const std::string& path, const std::string& what) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!is_own_file(st))
      throw std::runtime_error(what + ": " + path + " exists and is " + describe_entry(st) +
                               "; refusing to replace it (remove it, or choose another path)");
  } else if (errno != ENOENT) {
    throw std::runtime_error(what + ": " + path + ": " + std::strerror(errno));
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw std::runtime_error(what + ": " + dir + " is not a directory");
}

bool replace_file(const std::string& path, const std::string& text, mode_t mode, std::string* why) {
  struct stat st{};
  if (::lstat(path.c_str(), &st) == 0 && !is_own_file(st)) {
    *why = path + " is " + describe_entry(st) + " now; not replaced";
    return false;
  }
  std::vector<char> tmp(path.begin(), path.end());
  const char suffix[] = ".tmp-XXXXXX";
  tmp.insert(tmp.end(), suffix, suffix + sizeof suffix);  // with its NUL
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot make a temporary beside " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, mode) == 0;
  for (size_t at = 0; ok && at < text.size();) {
    const ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) at += static_cast<size_t>(n);
  }
  const int err = errno;
  ::close(fd);
  if (!ok || std::rename(tmp.data(), path.c_str()) != 0) {
    *why = std::string("cannot write ") + path + ": " + std::strerror(ok ? errno : err);
    ::unlink(tmp.data());
    return false;
  }
  return true;
}

}  // namespace lanecast::daemon
