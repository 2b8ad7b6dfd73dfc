// Who may use a daemon: its own user and root, always; with --allow-group
// GROUP also every user of GROUP - a peer whose gid is GROUP, or whose uid
// the user database lists in GROUP (its primary group or a supplementary
// one). The daemon checks the peer's credentials (SO_PEERCRED, taken by the
// kernel at connect) against this, and makes its directory and socket
// reachable by exactly that group: the kernel's permission check on the
// socket file and the daemon's on the credentials must both pass.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace lanecast::daemon {

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

class AccessPolicy {
 public:
  using GroupsOf = std::function<std::vector<gid_t>(uid_t)>;
  // This process's user; `allow_group` a group name or number ("": none).
  // Throws std::invalid_argument naming --allow-group for a group that does
  // not exist.
  explicit AccessPolicy(const std::string& allow_group);
  // For tests: any owner, group and group database.
  AccessPolicy(uid_t owner, std::optional<gid_t> group, GroupsOf groups_of);

  bool allows(const PeerCredentials& c) const;
  uid_t owner() const { return owner_; }
  const std::optional<gid_t>& group() const { return group_; }
  const std::string& group_name() const { return group_name_; }
  // Modes of what the daemon makes: the directory, its socket, its stats.
  mode_t dir_mode() const { return group_ ? 0750 : 0700; }
  mode_t socket_mode() const { return group_ ? 0660 : 0600; }
  mode_t stats_mode() const { return group_ ? 0640 : 0600; }
  std::string describe() const;  // for the start-up line and errors

 private:
  uid_t owner_;
  std::optional<gid_t> group_;
  std::string group_name_;
  GroupsOf groups_of_;
};

// A user's groups by the user database: its primary group and every group
// that lists it (getpwuid_r, getgrouplist). Empty for an unknown uid.
std::vector<gid_t> groups_of_user(uid_t uid);

}  // namespace lanecast::daemon
