// Running other programs - ip, tc, member processes - without a shell: an
// argument vector goes to execve as it is, so no name or value is ever parsed
// by a shell, and every wait has a bound.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanecast::apps {

using Argv = std::vector<std::string>;

// A command that could not be run, failed, or outlived its bound; what()
// gives the command line and what it said on stderr.
struct CommandFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct CommandResult {
  int wait_status = 0;  // as waitpid gives it
  bool timed_out = false;
  std::string out, err;
  bool ok() const;
};

// The path of this program (/proc/self/exe), for running it again: members
// of a testbed, `bench` under `tune`.
std::string this_program();

// "ip -n 'a b' link": the argument vector as a reader would type it.
std::string command_line(const Argv& argv);
// "exit 1", "killed by signal 9 (Killed)".
std::string describe_wait_status(int wait_status);

// Runs argv to its end with stdin from /dev/null, collecting stdout and
// stderr; a command still running after `limit` is killed (timed_out). The
// child has a process group of its own, so a terminal's Ctrl-C reaches only
// this process, which then undoes its work with commands that are not cut
// short. Throws CommandFailed if the program cannot be started.
CommandResult run_command(const Argv& argv, std::chrono::milliseconds limit);

// run_command, and CommandFailed unless it exits 0; returns its stdout.
std::string run_checked(const Argv& argv, std::chrono::milliseconds limit = std::chrono::seconds(30));

// Starts argv in the background, stdout and stderr to the files given
// (created: CommandFailed if either path already exists, as a file or a
// symlink), stdin from /dev/null, in a process group of its
// own, killed by the kernel if this process dies first. Returns its pid.
pid_t spawn_to_files(const Argv& argv, const std::string& out_path, const std::string& err_path);

}  // namespace lanecast::apps
