#include "apps/bench/member_processes.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <thread>

namespace lanecast::apps {

bool MemberProcesses::Member::ok() const {
  return !running && killed_why.empty() && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

std::string MemberProcesses::Member::how_ended() const {
  if (running) return "still running";
  if (!killed_why.empty()) return "killed by lanecast: " + killed_why;
  return describe_wait_status(wait_status);
}

void MemberProcesses::start(uint32_t rank, const Argv& argv) {
  if (members_.empty()) t0_ = std::chrono::steady_clock::now();
  Member m;
  m.rank = rank;
  m.out_path = dir_ + "/rank" + std::to_string(rank) + ".out";
  m.err_path = dir_ + "/rank" + std::to_string(rank) + ".err";
  m.pid = spawn_to_files(argv, m.out_path, m.err_path);
  m.running = true;
  members_.push_back(m);
}

double MemberProcesses::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

void MemberProcesses::ended(Member& m, int wait_status) {
  m.running = false;
  m.wait_status = wait_status;
  m.ended_s = elapsed_s();
}

size_t MemberProcesses::poll() {
  size_t running = 0;
  for (Member& m : members_) {
    if (!m.running) continue;
    int st = 0;
    const pid_t w = ::waitpid(m.pid, &st, WNOHANG);
    if (w == m.pid) ended(m, st);
    else if (w < 0 && errno == ECHILD) ended(m, 0);  // cannot happen: our own child
    else ++running;
  }
  return running;
}

void MemberProcesses::kill_all(const std::string& why) {
  poll();  // those that ended by themselves keep their own status
  for (Member& m : members_)
    if (m.running) {
      ::kill(m.pid, SIGKILL);
      m.killed_why = why;
    }
  // SIGKILL ends a process at once unless it sits in the kernel; bounded all
  // the same (a process that cannot be reaped cannot be helped from here).
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (poll() > 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

}  // namespace lanecast::apps
