#include "apps/common/stop_signals.h"

#include <cstring>
#include <string>

namespace lanecast::apps {
namespace {

// SIGPIPE: whoever read our output went away (`lanecast bench --testbed |
// head`); by default it would end the process on its next write, leaving
// the namespaces it built behind. A handler (not SIG_IGN, which programs
// we start would inherit) turns it into a stop like the others.
constexpr int kSignals[4] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
volatile std::sig_atomic_t g_received = 0;
bool g_installed = false;

void note(int sig) {
  if (g_received == 0) g_received = sig;
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

}  // namespace

Stopped::Stopped(int sig) : std::runtime_error("stopped by " + signal_name(sig)), signal(sig) {}

StopSignals::StopSignals() {
  if (g_installed) throw std::logic_error("StopSignals: one at a time");
  g_installed = true;
  g_received = 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = note;
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: a blocking wait returns EINTR and its loop looks again.
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  g_installed = false;
}

int StopSignals::received() { return g_received; }

void StopSignals::throw_if_stopped() {
  if (g_received != 0) throw Stopped(g_received);
}

}  // namespace lanecast::apps
