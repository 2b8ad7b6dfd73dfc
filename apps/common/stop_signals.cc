#include "apps/common/stop_signals.h"

#include <cstring>
#include <string>

namespace lanecast::apps {
namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
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
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
  g_installed = false;
}

int StopSignals::received() { return g_received; }

void StopSignals::throw_if_stopped() {
  if (g_received != 0) throw Stopped(g_received);
}

}  // namespace lanecast::apps
