#include "apps/tune/lanecast_run.h"

#include <sys/wait.h>

#include <stdexcept>

namespace lanecast::apps {

std::string tail_lines(const std::string& text, size_t lines) {
  size_t start = text.size();
  while (start > 0 && text[start - 1] == '\n') --start;  // trailing newlines are not lines
  const size_t end = start;
  for (size_t n = 0; n < lines && start > 0; ++n) {
    const size_t nl = text.rfind('\n', start - 1);
    start = nl == std::string::npos ? 0 : nl;
  }
  return text.substr(start == 0 ? 0 : start + 1, end - (start == 0 ? 0 : start + 1));
}

std::string run_lanecast(const Argv& argv, ProgressLine* progress, const std::string& what,
                         std::chrono::milliseconds limit, bool exit1_ok) {
  if (progress != nullptr) progress->show("tune: " + what + ": " + command_line(argv));
  const CommandResult r = run_command(argv, limit);
  if (progress != nullptr) progress->clear();
  const bool ok = r.ok() || (exit1_ok && !r.timed_out && WIFEXITED(r.wait_status) && WEXITSTATUS(r.wait_status) == 1);
  if (!ok)
    throw std::runtime_error(command_line(argv) + ": " + describe_wait_status(r.wait_status) +
                             (r.timed_out ? " (timed out)" : "") + ": " + tail_lines(r.err, 3));
  return r.out;
}

}  // namespace lanecast::apps
