#include "apps/common/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

extern char** environ;

namespace lanecast::apps {
namespace {

using Clock = std::chrono::steady_clock;

// A file descriptor closed when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string errno_text(int e) { return std::strerror(e); }

// The program argv[0] names: itself if it holds a '/', else the first
// executable file of that name on PATH, then in the sbin folders (ip and tc
// live there, and a user's PATH may lack them).
std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* env = std::getenv("PATH");
  std::string dirs = env != nullptr && *env != '\0' ? env : "/usr/local/bin:/usr/bin:/bin";
  dirs += ":/usr/local/sbin:/usr/sbin:/sbin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = colon > start ? dirs.substr(start, colon - start) : ".";
    const std::string path = dir + "/" + name;
    // A file, not a folder of that name (/usr/lib/x86_64-linux-gnu/tc holds
    // tc's tables, and a PATH may list /usr/lib/x86_64-linux-gnu).
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0) return path;
    start = colon + 1;
  }
  const bool iproute = name == "ip" || name == "tc";
  throw CommandFailed("cannot run '" + name + "': not found on PATH" +
                      (iproute ? " (it comes with iproute2: apt-get install iproute2)" : ""));
}

// fork + execve with the three standard descriptors given. The child gets a
// process group of its own and, when asked, dies with this process. An
// execve that fails is reported through a close-on-exec pipe, so the caller
// learns it here and not as a puzzling exit status.
pid_t spawn(const Argv& argv, int in, int out, int err, bool die_with_parent) {
  if (argv.empty()) throw std::invalid_argument("spawn: no program given");
  const std::string program = find_program(argv[0]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw CommandFailed("cannot run " + command_line(argv) + ": " + errno_text(errno));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(report[0]);
    ::close(report[1]);
    throw CommandFailed("cannot run " + command_line(argv) + ": fork: " + errno_text(e));
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to execve.
    ::setpgid(0, 0);
    if (die_with_parent && (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0) ::_exit(127);
    ::execve(program.c_str(), args.data(), environ);
    const int e = errno;
    [[maybe_unused]] const ssize_t n = ::write(report[1], &e, sizeof e);
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here: whichever runs first
  ::close(report[1]);
  int e = 0;
  ssize_t n;
  do n = ::read(report[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    ::waitpid(pid, nullptr, 0);
    throw CommandFailed("cannot run " + command_line(argv) + ": " + errno_text(e));
  }
  return pid;
}

// Waits for pid until `deadline`, then kills it; returns its wait status.
int reap(pid_t pid, Clock::time_point deadline, bool& timed_out) {
  int status = 0;
  for (;;) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) return status;
    if (w < 0 && errno != EINTR) return status;
    if (Clock::now() >= deadline) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

bool CommandResult::ok() const { return !timed_out && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0; }

std::string this_program() {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
  return p.string();
}

std::string command_line(const Argv& argv) {
  std::string s;
  for (const std::string& a : argv) {
    if (!s.empty()) s += ' ';
    const bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                         "0123456789-_./:=,+@%") == std::string::npos;
    if (plain) {
      s += a;
      continue;
    }
    s += '\'';
    for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
    s += '\'';
  }
  return s;
}

std::string describe_wait_status(int st) {
  if (WIFEXITED(st)) return "exit " + std::to_string(WEXITSTATUS(st));
  if (WIFSIGNALED(st)) {
    const char* name = ::strsignal(WTERMSIG(st));
    return "killed by signal " + std::to_string(WTERMSIG(st)) + (name != nullptr ? " (" + std::string(name) + ")" : "");
  }
  return "wait status " + std::to_string(st);
}

CommandResult run_command(const Argv& argv, std::chrono::milliseconds limit) {
  const Clock::time_point deadline = Clock::now() + limit;
  Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw CommandFailed("cannot run " + command_line(argv) + ": " + errno_text(errno));
  Fd out_r(out[0]), out_w(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) throw CommandFailed("cannot run " + command_line(argv) + ": " + errno_text(errno));
  Fd err_r(err[0]), err_w(err[1]);
  const pid_t pid = spawn(argv, null.get(), out_w.get(), err_w.get(), /*die_with_parent=*/true);
  out_w.reset();
  err_w.reset();

  CommandResult r;
  pollfd fds[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_pipes = 2;
  while (open_pipes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) break;
    const int n = ::poll(fds, 2, static_cast<int>(std::min<long long>(left, 1000)));
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2 && n > 0; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;  // poll skips it from now on
        --open_pipes;
      }
    }
  }
  r.wait_status = reap(pid, open_pipes > 0 ? Clock::now() : deadline, r.timed_out);
  return r;
}

std::string run_checked(const Argv& argv, std::chrono::milliseconds limit) {
  CommandResult r = run_command(argv, limit);
  if (r.ok()) return r.out;
  char bound[48];
  std::snprintf(bound, sizeof bound, "did not finish within %.1f s", static_cast<double>(limit.count()) / 1000);
  std::string why = r.timed_out ? std::string(bound) : "failed (" + describe_wait_status(r.wait_status) + ")";
  while (!r.err.empty() && (r.err.back() == '\n' || r.err.back() == ' ')) r.err.pop_back();
  throw CommandFailed(command_line(argv) + " " + why + (r.err.empty() ? "" : ": " + r.err));
}

// The files are new (the caller's fresh directory): anything already at
// either path - a file or a symlink planted there - is refused, not followed
// or overwritten.
pid_t spawn_to_files(const Argv& argv, const std::string& out_path, const std::string& err_path) {
  constexpr int kNew = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  Fd null(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  Fd out(::open(out_path.c_str(), kNew, 0644));
  if (out.get() < 0) throw CommandFailed("cannot create " + out_path + ": " + errno_text(errno));
  Fd err(::open(err_path.c_str(), kNew, 0644));
  if (err.get() < 0) throw CommandFailed("cannot create " + err_path + ": " + errno_text(errno));
  return spawn(argv, null.get(), out.get(), err.get(), /*die_with_parent=*/true);
}

}  // namespace lanecast::apps
