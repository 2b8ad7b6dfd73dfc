// Progress of long work on stderr, never on stdout (where --json goes): on a
// terminal one line rewritten in place, otherwise one plain line per update,
// so a log keeps them all. Quiet: nothing at all.
#pragma once

#include <cstdio>
#include <string>

namespace lanecast::apps {

class ProgressLine {
 public:
  explicit ProgressLine(bool quiet, std::FILE* to = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Shows `text` as the current state.
  void show(const std::string& text);
  // Ends the line in place (a terminal keeps the last state on screen);
  // later shows start a new one.
  void end();
  // Takes the line in place off the screen, so a table row printed next
  // starts on a clean line (plain lines stay: they are a log).
  void clear();

 private:
  std::FILE* to_;
  bool quiet_;
  bool in_place_;
  bool open_ = false;  // a line in place is on screen, not ended
};

}  // namespace lanecast::apps
