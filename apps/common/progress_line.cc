#include "apps/common/progress_line.h"

#include <unistd.h>

namespace lanecast::apps {

ProgressLine::ProgressLine(bool quiet, std::FILE* to)
    : to_(to), quiet_(quiet), in_place_(!quiet && ::isatty(::fileno(to)) == 1) {}

ProgressLine::~ProgressLine() { end(); }

void ProgressLine::show(const std::string& text) {
  if (quiet_) return;
  if (in_place_) {
    // Back to the line's start, the text, and clear what a longer one left.
    std::fprintf(to_, "\r%s\033[K", text.c_str());
    open_ = true;
  } else {
    std::fprintf(to_, "%s\n", text.c_str());
  }
  std::fflush(to_);
}

void ProgressLine::clear() {
  if (!open_) return;
  std::fputs("\r\033[K", to_);
  std::fflush(to_);
  open_ = false;
}

void ProgressLine::end() {
  if (!open_) return;
  std::fputc('\n', to_);
  std::fflush(to_);
  open_ = false;
}

}  // namespace lanecast::apps
