// The member processes of a testbed run: started in the background with
// their output in files, watched without blocking, and killed and reaped on
// every way out (the destructor), so none outlives the run.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/common/subprocess.h"

namespace lanecast::apps {

class MemberProcesses {
 public:
  struct Member {
    uint32_t rank = 0;
    pid_t pid = -1;
    bool running = false;
    int wait_status = 0;
    double ended_s = 0;       // seconds after the first start
    std::string killed_why;   // when this object killed it: why
    std::string out_path, err_path;
    bool ok() const;          // ended by itself with exit 0
    std::string how_ended() const;  // "exit 1", "killed by signal 9 (Killed)", "killed by lanecast: ..."
  };

  explicit MemberProcesses(std::string dir) : dir_(std::move(dir)) {}
  ~MemberProcesses() { kill_all("the run ended"); }
  MemberProcesses(const MemberProcesses&) = delete;
  MemberProcesses& operator=(const MemberProcesses&) = delete;

  // Starts argv as member `rank`: stdout in DIR/rankR.out, stderr in .err.
  void start(uint32_t rank, const Argv& argv);
  // Reaps those that ended since; returns how many still run.
  size_t poll();
  // SIGKILL to every one still running, each reaped; `why` is recorded.
  void kill_all(const std::string& why);
  const std::vector<Member>& members() const { return members_; }
  double elapsed_s() const;

 private:
  void ended(Member& m, int wait_status);

  std::string dir_;
  std::vector<Member> members_;
  std::chrono::steady_clock::time_point t0_{};
};

}  // namespace lanecast::apps
