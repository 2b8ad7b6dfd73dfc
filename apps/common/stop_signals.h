// SIGINT, SIGTERM, SIGHUP and SIGPIPE (the reader of our output gone) noted
// instead of ending the process, for as long as a StopSignals lives. A
// command that builds something outside itself (a testbed of namespaces,
// member processes) checks between its steps and, when told to stop, throws
// Stopped; the destructors of what it built undo it on the way out, and main
// exits 128 + the signal, as the shell would report it.
#pragma once

#include <csignal>
#include <stdexcept>

namespace lanecast::apps {

struct Stopped : std::runtime_error {
  explicit Stopped(int sig);
  int signal;
};

class StopSignals {
 public:
  StopSignals();  // installs the handlers; at most one at a time
  ~StopSignals();  // restores what was there
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static int received();  // the signal that arrived first, 0 if none
  static void throw_if_stopped();

 private:
  struct sigaction old_[4];
};

}  // namespace lanecast::apps
