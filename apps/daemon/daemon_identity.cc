#include "apps/daemon/daemon_identity.h"

#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lanecast::daemon {
namespace {

std::string user_name(uid_t uid) {
  std::vector<char> buf(4096);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return "";
  return found->pw_name;
}

std::string named(uid_t uid) {
  const std::string name = user_name(uid);
  return "uid " + std::to_string(uid) + (name.empty() ? "" : " (" + name + ")");
}

}  // namespace

uid_t daemon_uid_of(const std::string& user, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const unsigned long n = std::strtoul(user.c_str(), &end, 10);
  if (!user.empty() && *end == '\0' && errno == 0 && n < static_cast<unsigned long>(static_cast<uid_t>(-1)))
    return static_cast<uid_t>(n);
  std::vector<char> buf(4096);
  passwd pw{};
  passwd* found = nullptr;
  if (user.empty() || ::getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
    throw std::runtime_error(what + ": no user '" + user + "'");
  return found->pw_uid;
}

std::string untrusted_daemon(int fd, const std::string& trusted, const std::string& socket_path) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || len != sizeof cred)
    return "cannot tell who listens at " + socket_path + ": " + std::strerror(errno);
  const uid_t me = ::geteuid();
  if (cred.uid == 0 || cred.uid == me) return "";
  std::string also;
  if (!trusted.empty()) {
    const uid_t t = daemon_uid_of(trusted, "the trusted daemon user");
    if (cred.uid == t) return "";
    also = " or the trusted daemon user " + named(t);
  }
  return "refusing the daemon at " + socket_path + ": it runs as " + named(cred.uid) + " (pid " +
         std::to_string(cred.pid) + "), not as root, this user (" + named(me) + ")" + also +
         "; nothing was sent (anyone may make a directory in /dev/shm or /tmp and listen there). If uid " +
         std::to_string(cred.uid) + " is the daemon's own user, name it in LANECAST_DAEMON_USER or --daemon-user";
}

std::string untrusted_file_owner(uid_t owner, const std::string& trusted, const std::string& path) {
  const uid_t me = ::geteuid();
  if (owner == 0 || owner == me) return "";
  std::string also;
  if (!trusted.empty()) {
    const uid_t t = daemon_uid_of(trusted, "the trusted daemon user");
    if (owner == t) return "";
    also = " or the trusted daemon user " + named(t);
  }
  return "refusing " + path + ": it belongs to " + named(owner) + ", not to root, this user (" + named(me) + ")" +
         also + " - not a daemon this user trusts. If uid " + std::to_string(owner) +
         " is the daemon's own user, name it in LANECAST_DAEMON_USER or --daemon-user";
}

}  // namespace lanecast::daemon
