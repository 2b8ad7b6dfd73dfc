// Who may answer a client at DIR/control.sock. A directory such as /dev/shm
// or /tmp lets anyone make DIR before the daemon does and listen there
// themselves; such an impostor would receive what the application publishes
// and could hand it forged deliveries. So before a client sends anything it
// reads the listener's uid from the socket (SO_PEERCRED: the kernel's word,
// fixed when the listener bound) and accepts only root, its own user, or a
// daemon user it was told to trust. The directory's owner counts for
// nothing: that is the impostor when there is one.
#pragma once

#include <sys/types.h>

#include <string>

namespace lanecast::daemon {

// The uid `user` names (a user name or a number); throws
// std::runtime_error naming `what` when there is no such user.
uid_t daemon_uid_of(const std::string& user, const std::string& what);

// Empty when the process at the other end of the connected socket `fd`
// runs as root, as this process's effective user or as `trusted` (a user
// name or uid; empty: no one more); otherwise why not, naming its uid.
std::string untrusted_daemon(int fd, const std::string& trusted, const std::string& socket_path);

// The same rule for a file the daemon wrote (its stats, read by `lanecast
// stat`): empty when `owner` is root, this process's effective user or
// `trusted`; otherwise why not, naming the owner. An impostor that made DIR
// first owns what it wrote there.
std::string untrusted_file_owner(uid_t owner, const std::string& trusted, const std::string& path);

}  // namespace lanecast::daemon
