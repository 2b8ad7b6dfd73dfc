// The daemon's directory (--dir): control.sock, where applications connect,
// and stats, which `lanecast stat` maps - nothing else (clients' memory is
// in memfds handed over on the socket). The daemon may run as root in a
// directory such as /dev/shm that anyone can create entries in, so it
// trusts no entry it did not make:
//   - the directory must be a real directory (not a symbolic link) of the
//     daemon's user, writable by nobody else, under parents that nobody
//     else can rename entries of (root's or the user's, or sticky); made
//     if absent, refused with the reason otherwise;
//   - it stays 0700 while the daemon makes its entries, then opens to the
//     user model's group (0750) if there is one (access_policy.h);
//   - control.sock may be a dead socket of the daemon's user (a daemon
//     that crashed), which is replaced; a live one means another daemon
//     serves the directory; anything else is refused;
//   - stats is made exclusively (safe_files.h).
// Every entry is made and removed relative to the directory's descriptor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "apps/daemon/access_policy.h"

namespace lanecast::daemon {

// Where the daemon of `group`'s member `rank` listens when --dir is not
// given: /run/lanecast/GROUP-rRANK. /run is root's and nobody else's, so no
// ordinary user can make /run/lanecast or an entry in it before the daemon
// (unlike /dev/shm or /tmp, where anyone can take a predictable name
// first). A root daemon makes /run/lanecast (0755) if absent; another user's
// needs it made for it (the systemd unit's RuntimeDirectory=). The group's
// name must be letters, digits, '_', '-' and '.', not starting with '.', so
// it names one entry and steers no path. Throws std::runtime_error saying
// what is wrong.
std::string default_daemon_dir(const std::string& group, uint32_t rank);

class DaemonDir {
 public:
  // Throws std::runtime_error saying what is wrong with the path.
  DaemonDir(const std::string& path, const AccessPolicy& access);
  ~DaemonDir();  // removes control.sock and stats if it made them
  DaemonDir(const DaemonDir&) = delete;
  DaemonDir& operator=(const DaemonDir&) = delete;

  const std::string& path() const { return path_; }  // absolute, without symbolic links
  std::string socket_path() const { return path_ + "/control.sock"; }
  std::string stats_path() const { return path_ + "/stats"; }
  // DIR/stats, new, of `bytes` (allocated), for the stats file to map.
  int make_stats_file(size_t bytes);
  // Listens on DIR/control.sock (SOCK_SEQPACKET, non-blocking): the fd.
  int listen();
  // Everything is in place: the directory opens to the policy's group.
  void open_to_group();

 private:
  const AccessPolicy& access_;
  std::string path_;
  int dirfd_ = -1;
  bool made_socket_ = false, made_stats_ = false;
};

}  // namespace lanecast::daemon
