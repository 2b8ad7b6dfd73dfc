#include "apps/daemon/access_policy.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace lanecast::daemon {
namespace {

std::optional<gid_t> parse_gid(const std::string& s) {
  if (s.empty() || s.size() > 10 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const unsigned long v = std::stoul(s);
  if (v > 0xfffffffeUL) return std::nullopt;
  return static_cast<gid_t>(v);
}

}  // namespace

std::vector<gid_t> groups_of_user(uid_t uid) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) return {};
  std::vector<gid_t> groups(64);
  for (int tries = 0; tries < 4; ++tries) {
    int n = static_cast<int>(groups.size());
    if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &n) >= 0) {
      groups.resize(static_cast<size_t>(n));
      return groups;
    }
    groups.resize(static_cast<size_t>(n) + 16);  // n says how many there are
  }
  return {pw.pw_gid};
}

AccessPolicy::AccessPolicy(const std::string& allow_group) : owner_(::geteuid()), groups_of_(groups_of_user) {
  if (allow_group.empty()) return;
  std::vector<char> buf(16384);
  struct group gr{};
  struct group* found = nullptr;
  if (::getgrnam_r(allow_group.c_str(), &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    group_ = gr.gr_gid;
    group_name_ = gr.gr_name;
    return;
  }
  if (const auto gid = parse_gid(allow_group)) {
    group_ = *gid;
    if (::getgrgid_r(*gid, &gr, buf.data(), buf.size(), &found) == 0 && found != nullptr) group_name_ = gr.gr_name;
    else group_name_ = allow_group;
    return;
  }
  throw std::invalid_argument("--allow-group: no group '" + allow_group + "' on this host (a name or a number)");
}

AccessPolicy::AccessPolicy(uid_t owner, std::optional<gid_t> group, GroupsOf groups_of)
    : owner_(owner), group_(group), group_name_(group ? std::to_string(*group) : ""), groups_of_(std::move(groups_of)) {}

bool AccessPolicy::allows(const PeerCredentials& c) const {
  if (c.uid == 0 || c.uid == owner_) return true;
  if (!group_) return false;
  if (c.gid == *group_) return true;
  const std::vector<gid_t> g = groups_of_(c.uid);
  return std::find(g.begin(), g.end(), *group_) != g.end();
}

std::string AccessPolicy::describe() const {
  std::string s = "uid " + std::to_string(owner_) + " and root";
  if (group_) s += " and group " + group_name_ + " (gid " + std::to_string(*group_) + ")";
  return s;
}

}  // namespace lanecast::daemon
