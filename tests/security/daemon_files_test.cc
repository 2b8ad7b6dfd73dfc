// The daemon's own files and its counters against what a local user can
// prepare: entries planted where the daemon writes (symbolic links, hard
// links, FIFOs, other users' files, directories of the wrong owner or
// mode), names built to break the Prometheus text, more counters than the
// stats file holds; and the user model's decisions. In process, on real
// files in a scratch directory; the parts that need another user to own
// something are skipped when not run as root.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "apps/daemon/access_policy.h"
#include "apps/daemon/daemon_dir.h"
#include "apps/daemon/metrics.h"
#include "apps/daemon/safe_files.h"

namespace lanecast::daemon {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

// A scratch directory of this user, mode 0700, removed afterwards.
struct Scratch {
  Scratch() {
    char t[] = "/tmp/lanecast-files-XXXXXX";
    path = ::mkdtemp(t);
  }
  ~Scratch() { fs::remove_all(path); }
  std::string operator/(const std::string& n) const { return path + "/" + n; }
  std::string path;
};

std::string slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

// The things a local user plants at a path, each pointing at (or being) a
// victim file whose bytes must survive.
enum class Plant { Symlink, Hardlink, Fifo, ForeignFile, Directory };
const Plant kPlants[] = {Plant::Symlink, Plant::Hardlink, Plant::Fifo, Plant::ForeignFile, Plant::Directory};
const char* name_of(Plant p) {
  switch (p) {
    case Plant::Symlink: return "symlink";
    case Plant::Hardlink: return "hardlink";
    case Plant::Fifo: return "fifo";
    case Plant::ForeignFile: return "foreign file";
    case Plant::Directory: return "directory";
  }
  return "?";
}
// False when this plant needs root (another user's file) and we are not.
bool plant(Plant p, const std::string& at, const std::string& victim) {
  switch (p) {
    case Plant::Symlink: return ::symlink(victim.c_str(), at.c_str()) == 0;
    case Plant::Hardlink: return ::link(victim.c_str(), at.c_str()) == 0;
    case Plant::Fifo: return ::mkfifo(at.c_str(), 0666) == 0;
    case Plant::Directory: return ::mkdir(at.c_str(), 0755) == 0;
    case Plant::ForeignFile:
      if (::geteuid() != 0) return false;
      write(at, "planted by another user\n");
      return ::chown(at.c_str(), kNobody, kNobody) == 0;
  }
  return false;
}

// Defect 2: files opened O_CREAT|O_TRUNC followed whatever was planted at
// their names. Nothing planted is followed, written through or reused; the
// victim keeps its bytes; the refusal names the path and what is there.
TEST(SafeFiles, NothingPlantedAtANewFileIsFollowed) {
  for (const Plant p : kPlants) {
    Scratch s;
    const std::string victim = s / "victim", at = s / "stats";
    write(victim, "the victim's bytes\n");
    if (!plant(p, at, victim)) continue;
    const int dirfd = ::open(s.path.c_str(), O_RDONLY | O_DIRECTORY);
    try {
      const int fd = create_new_file_at(dirfd, "stats", at, 0600, true, "--dir");
      ::close(fd);
      ADD_FAILURE() << name_of(p) << ": accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(at), std::string::npos) << e.what();
    }
    ::close(dirfd);
    EXPECT_EQ(slurp(victim), "the victim's bytes\n") << name_of(p);
    try {
      ::close(create_new_file(at, 0600, "--record"));
      ADD_FAILURE() << name_of(p) << ": --record accepted";
    } catch (const std::runtime_error&) {
    }
    EXPECT_EQ(slurp(victim), "the victim's bytes\n") << name_of(p);
  }
}

TEST(SafeFiles, AnOwnLeftoverIsReplacedAnExistingRecordIsNot) {
  Scratch s;
  write(s / "stats", "an old daemon's stats\n");
  const int dirfd = ::open(s.path.c_str(), O_RDONLY | O_DIRECTORY);
  const int fd = create_new_file_at(dirfd, "stats", s / "stats", 0640, true, "--dir");
  struct stat st{};
  ASSERT_EQ(::fstat(fd, &st), 0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ::close(fd);
  ::close(dirfd);
  write(s / "capture.pcap", "yesterday's capture\n");
  EXPECT_THROW(create_new_file(s / "capture.pcap", 0600, "--record"), std::runtime_error);
  EXPECT_EQ(slurp(s / "capture.pcap"), "yesterday's capture\n");
}

// The Prometheus file is replaced by rename: a link planted at its name is
// refused (at start: check_replaceable; later: replace_file says so), and
// the victim is never written.
TEST(SafeFiles, APrometheusFileIsReplacedOnlyIfItIsOurs) {
  for (const Plant p : kPlants) {
    Scratch s;
    const std::string victim = s / "victim", at = s / "lanecast.prom";
    write(victim, "the victim's bytes\n");
    if (!plant(p, at, victim)) continue;
    EXPECT_THROW(check_replaceable(at, "--prometheus"), std::runtime_error) << name_of(p);
    std::string why;
    EXPECT_FALSE(replace_file(at, "lanecast_x 1\n", 0644, &why)) << name_of(p);
    EXPECT_NE(why.find(at), std::string::npos);
    EXPECT_EQ(slurp(victim), "the victim's bytes\n") << name_of(p);
  }
  Scratch s;
  std::string why;
  ASSERT_TRUE(replace_file(s / "ok.prom", "a 1\n", 0644, &why)) << why;
  ASSERT_TRUE(replace_file(s / "ok.prom", "a 2\n", 0644, &why)) << why;
  EXPECT_EQ(slurp(s / "ok.prom"), "a 2\n");
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.path)) ++entries;
  EXPECT_EQ(entries, 1u);  // no temporary left behind
  EXPECT_NO_THROW(check_replaceable(s / "ok.prom", "--prometheus"));
}

// The directory: a symbolic link, another user's directory, one writable
// by its group or by others are refused; a dead socket of ours is replaced,
// anything else at control.sock refused; the directory ends up 0700.
TEST(DaemonDirectory, WhatIsNotTheDaemonsOwnIsRefused) {
  const AccessPolicy access("");
  Scratch s;
  fs::create_directory(s / "elsewhere");
  ASSERT_EQ(::symlink((s / "elsewhere").c_str(), (s / "link").c_str()), 0);
  EXPECT_THROW(DaemonDir(s / "link", access), std::runtime_error);
  write(s / "file", "x");
  EXPECT_THROW(DaemonDir(s / "file", access), std::runtime_error);
  ASSERT_EQ(::mkdir((s / "open").c_str(), 0700), 0);
  ASSERT_EQ(::chmod((s / "open").c_str(), 0777), 0);
  try {
    DaemonDir d(s / "open", access);
    ADD_FAILURE() << "a world-writable directory was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("writable"), std::string::npos) << e.what();
  }
  ASSERT_EQ(::chmod((s / "open").c_str(), 0770), 0);
  EXPECT_THROW(DaemonDir(s / "open", access), std::runtime_error);
  if (::geteuid() == 0) {
    ASSERT_EQ(::mkdir((s / "theirs").c_str(), 0700), 0);
    ASSERT_EQ(::chown((s / "theirs").c_str(), kNobody, kNobody), 0);
    try {
      DaemonDir d(s / "theirs", access);
      ADD_FAILURE() << "another user's directory was taken";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("belongs to uid 65534"), std::string::npos) << e.what();
    }
  }
  // A parent that others may write to, not sticky: they could swap the directory.
  ASSERT_EQ(::mkdir((s / "shared").c_str(), 0777), 0);
  ASSERT_EQ(::chmod((s / "shared").c_str(), 0777), 0);
  EXPECT_THROW(DaemonDir(s / "shared/d", access), std::runtime_error);
  ASSERT_EQ(::chmod((s / "shared").c_str(), 01777), 0);  // sticky, like /tmp and /dev/shm
  EXPECT_NO_THROW(DaemonDir(s / "shared/d", access));

  // control.sock: planted things are refused, a dead socket of ours is replaced.
  for (const Plant p : kPlants) {
    Scratch t;
    ASSERT_EQ(::mkdir((t / "d").c_str(), 0700), 0);
    write(t / "victim", "v");
    if (!plant(p, t / "d/control.sock", t / "victim")) continue;
    EXPECT_THROW(DaemonDir(t / "d", access), std::runtime_error) << name_of(p);
    EXPECT_EQ(slurp(t / "victim"), "v");
  }
  // A daemon that died: its socket file stays, nobody answers.
  Scratch t;
  ASSERT_EQ(::mkdir((t / "e").c_str(), 0755), 0);
  {
    const int fd = ::socket(AF_UNIX, SOCK_SEQPACKET, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", (t / "e/control.sock").c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  DaemonDir e(t / "e", access);
  struct stat st{};
  ASSERT_EQ(::stat((t / "e").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ::close(e.listen());
}

TEST(DaemonDirectory, AnotherLiveDaemonIsNotDisturbed) {
  const AccessPolicy access("");
  Scratch s;
  DaemonDir first(s / "d", access);
  const int fd = first.listen();
  try {
    DaemonDir second(s / "d", access);
    ADD_FAILURE() << "took a directory another daemon serves";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("another daemon"), std::string::npos) << e.what();
  }
  struct stat st{};
  EXPECT_EQ(::lstat((s / "d/control.sock").c_str(), &st), 0);
  ::close(fd);
}

// Defect 7: the user model. The daemon's user and root always; the
// group's members by gid or by the user database; nobody else.
TEST(UserModel, TheOwnerRootAndTheGroupsMembers) {
  const std::map<uid_t, std::vector<gid_t>> db = {{1000, {1000, 27, 4242}}, {1001, {1001}}, {1002, {1002, 4243}}};
  auto groups_of = [&](uid_t u) {
    const auto it = db.find(u);
    return it == db.end() ? std::vector<gid_t>{} : it->second;
  };
  const AccessPolicy alone(500, std::nullopt, groups_of);
  EXPECT_TRUE(alone.allows({1, 500, 500}));
  EXPECT_TRUE(alone.allows({1, 0, 0}));
  EXPECT_FALSE(alone.allows({1, 1000, 4242}));
  EXPECT_EQ(alone.dir_mode(), 0700u);
  EXPECT_EQ(alone.socket_mode(), 0600u);
  const AccessPolicy group(500, gid_t{4242}, groups_of);
  EXPECT_TRUE(group.allows({1, 1000, 1000}));   // 4242 is a supplementary group of uid 1000
  EXPECT_TRUE(group.allows({1, 1001, 4242}));   // its gid is the group
  EXPECT_FALSE(group.allows({1, 1001, 1001}));
  EXPECT_FALSE(group.allows({1, 1002, 1002}));  // another group
  EXPECT_FALSE(group.allows({1, 9999, 9999}));  // unknown to the database
  EXPECT_EQ(group.dir_mode(), 0750u);
  EXPECT_EQ(group.socket_mode(), 0660u);
  EXPECT_EQ(group.stats_mode(), 0640u);
  EXPECT_THROW(AccessPolicy("no-such-group-lanecast"), std::invalid_argument);
  EXPECT_TRUE(AccessPolicy("0").group().has_value());
}

// A small reader of the text exposition format (0.0.4): every line is a
// comment or `name{label="value",...} number`, label values escaped. It
// returns the samples, or fails the test at the first line that breaks it.
std::vector<std::pair<std::string, std::map<std::string, std::string>>> parse_exposition(const std::string& text) {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t eol = text.find('\n', at);
    EXPECT_NE(eol, std::string::npos) << "the text does not end with a line feed";
    if (eol == std::string::npos) break;
    const std::string line = text.substr(at, eol - at);
    at = eol + 1;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) continue;
    size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == ':')) ++i;
    const std::string name = line.substr(0, i);
    EXPECT_FALSE(name.empty()) << "no metric name: " << line;
    std::map<std::string, std::string> labels;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        const size_t eq = line.find('=', i);
        EXPECT_NE(eq, std::string::npos) << line;
        if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          ADD_FAILURE() << "a label without a quoted value: " << line;
          return out;
        }
        const std::string key = line.substr(i, eq - i);
        std::string value;
        size_t j = eq + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            ++j;
            if (j >= line.size() || (line[j] != '\\' && line[j] != '"' && line[j] != 'n')) {
              ADD_FAILURE() << "a bad escape: " << line;
              return out;
            }
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        if (j >= line.size()) {
          ADD_FAILURE() << "an unterminated label value: " << line;
          return out;
        }
        labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      EXPECT_LT(i, line.size()) << "no closing brace: " << line;
      ++i;
    }
    const std::string value = line.substr(i);
    EXPECT_TRUE(value.size() >= 2 && value[0] == ' ' &&
                std::all_of(value.begin() + 1, value.end(), [](char c) { return c >= '0' && c <= '9'; }))
        << "not ` value`: " << line;
    out.emplace_back(name, labels);
  }
  return out;
}

// Defect 8: a client's name went into the text unescaped, so a name could
// end its label and add samples of its own. Every value is escaped; the
// text parses; the name comes back as it was; no sample but ours.
TEST(Metrics, AClientsNameCannotInjectSamples) {
  const std::vector<std::string> names = {"plain",
                                          "quote\"d",
                                          "back\\slash",
                                          "} 1\nfake 2",
                                          "x\"} 1\nfake{a=\"b\"} 3\n# TYPE fake counter",
                                          "\\\"\n\\n"};
  std::vector<Metric> ms;
  for (size_t i = 0; i < names.size(); ++i)
    ms.push_back({"lanecast_client_messages_in", {{"client", std::to_string(i)}, {"name", names[i]}}, i, true,
                  "help with a \\ and a\nline feed"});
  const std::string text = prometheus_text(ms, "g\"roup\n", 3);
  const auto samples = parse_exposition(text);
  ASSERT_EQ(samples.size(), names.size()) << text;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(samples[i].first, "lanecast_client_messages_in");
    EXPECT_EQ(samples[i].second.at("name"), names[i]);
    EXPECT_EQ(samples[i].second.at("group"), "g\"roup\n");
  }
  EXPECT_EQ(text.find("\nfake"), std::string::npos);
}

// Defect 8: the stats file cut entries past 4096 and names past its field
// without a word. It still holds what fits, and says what did not.
TEST(Metrics, WhatTheStatsFileCannotHoldIsSaid) {
  Scratch s;
  const int fd = ::open((s / "stats").c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::posix_fallocate(fd, 0, kStatsFileBytes), 0);
  StatsFile stats(fd, s / "stats", "g", 0, 1);
  std::vector<Metric> ms;
  ms.push_back({"lanecast_long", {{"name", std::string(400, 'n')}}, 7, true, ""});
  for (uint32_t i = 0; i < kMaxStatsEntries + 100; ++i) ms.push_back({"lanecast_m" + std::to_string(i), {}, i, true, ""});
  stats.write(ms, 1);
  EXPECT_EQ(stats.left_out(), 101u);
  EXPECT_EQ(stats.names_cut(), 1u);
  const StatsSnapshot snap = read_stats(s / "stats");
  EXPECT_EQ(snap.entries.size(), kMaxStatsEntries);
  EXPECT_EQ(snap.left_out, 101u);
  EXPECT_EQ(snap.names_cut, 1u);
  EXPECT_EQ(snap.entries[0].first.size(), sizeof(StatsEntry::name) - 1);
  const std::string note = stats_cut_note(snap);
  EXPECT_NE(note.find("101 counters were left out"), std::string::npos) << note;
  EXPECT_NE(note.find("1 names were cut short"), std::string::npos) << note;
  stats.write({ms.begin() + 1, ms.begin() + 10}, 2);
  EXPECT_EQ(stats_cut_note(read_stats(s / "stats")), "");
  // `lanecast stat` does not follow a link planted at DIR/stats either.
  ASSERT_EQ(::symlink((s / "stats").c_str(), (s / "link").c_str()), 0);
  EXPECT_THROW(read_stats(s / "link"), std::runtime_error);
}

// An impostor that made the daemon's directory first wrote its stats file:
// `lanecast stat` refuses it, naming the owner, unless that user is the
// daemon user it was told to trust.
TEST(Metrics, AStatsFileOfAnUntrustedUserIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: a file of another user";
  Scratch s;
  const int fd = ::open((s / "stats").c_str(), O_RDWR | O_CREAT | O_EXCL, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::posix_fallocate(fd, 0, kStatsFileBytes), 0);
  StatsFile stats(fd, s / "stats", "g", 0, 1);
  stats.write({{"lanecast_forged", {}, 1, true, ""}}, 1);
  EXPECT_EQ(read_stats(s / "stats").entries.size(), 1u);  // root's own
  constexpr uid_t kImpostor = 4243;
  ASSERT_EQ(::chown((s / "stats").c_str(), kImpostor, kImpostor), 0);
  try {
    read_stats(s / "stats");
    FAIL() << "an impostor's stats were read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("belongs to uid 4243"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_stats(s / "stats", "4243").entries.size(), 1u);  // the daemon user trusted
  EXPECT_THROW(read_stats(s / "stats", "4244"), std::runtime_error);
}

}  // namespace
}  // namespace lanecast::daemon
