// spawn_to_files (apps/common/subprocess.h) as an attacker who can write to
// the directory would meet it: a symlink or a file planted at a member's
// output path is refused - the command is not started, the symlink's target
// and the planted file are left as they were - and fresh paths work.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "apps/common/subprocess.h"

namespace lanecast::apps {
namespace {

namespace fs = std::filesystem;

struct Dir {
  Dir() {
    std::string t = (fs::temp_directory_path() / "lanecast-spawn-XXXXXX").string();
    path = ::mkdtemp(t.data()) ? t : "";
  }
  ~Dir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string path;
};

std::string read(const std::string& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), {}};
}
void write(const std::string& p, const std::string& text) { std::ofstream(p) << text; }

int wait_exit(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SpawnToFiles, FreshPathsGetTheCommandsOutput) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  const pid_t pid = spawn_to_files({"/bin/sh", "-c", "echo out; echo err >&2"}, d.path + "/o", d.path + "/e");
  EXPECT_EQ(wait_exit(pid), 0);
  EXPECT_EQ(read(d.path + "/o"), "out\n");
  EXPECT_EQ(read(d.path + "/e"), "err\n");
}

TEST(SpawnToFiles, ASymlinkPlantedAtEitherPathIsRefusedNotFollowed) {
  for (const bool at_err : {false, true}) {
    Dir d;
    ASSERT_FALSE(d.path.empty());
    const std::string target = d.path + "/victim";
    write(target, "precious\n");
    const std::string out = d.path + "/o", err = d.path + "/e";
    fs::create_symlink(target, at_err ? err : out);
    EXPECT_THROW(spawn_to_files({"/bin/sh", "-c", "echo overwritten"}, out, err), CommandFailed);
    EXPECT_EQ(read(target), "precious\n") << (at_err ? "stderr" : "stdout") << "'s symlink was followed";
  }
}

TEST(SpawnToFiles, AFilePlantedAtThePathIsRefusedAndKept) {
  Dir d;
  ASSERT_FALSE(d.path.empty());
  write(d.path + "/o", "planted\n");
  EXPECT_THROW(spawn_to_files({"/bin/true"}, d.path + "/o", d.path + "/e"), CommandFailed);
  EXPECT_EQ(read(d.path + "/o"), "planted\n");
}

}  // namespace
}  // namespace lanecast::apps
