// Engine: EAL start-up, polling cores, and the groups they serve.
#include <rte_launch.h>
#include <rte_lcore.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/runtime/clock.h"
#include "engine/runtime/eal.h"
#include "lanecast/lanecast.h"
#include "engine/runtime/poller.h"

namespace lanecast {
namespace {

int poller_main(void* arg) {
  static_cast<engine::Poller*>(arg)->run();
  return 0;
}


bool never(const void*) { return false; }

}  // namespace

// EngineOptions::idle_look_us: a thread that drives the in-calls poller for
// a few turns once the members went that long without one. While the
// application calls in often (a loop of broadcasts) it only sleeps: a look
// then would take the poller from a thread about to wait on it (which then
// sleeps a slice, engine/api/member.cc) and its wake-ups would take CPU from
// the ranks that share it. drive_until returns at once when an application
// thread is driving or the poller is parked (a group being joined or left).
struct Engine::Looker {
  Looker(engine::Poller& p, uint64_t every_us) : thread([this, &p, every_us] { run(p, every_us); }) {}
  ~Looker() {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    cv.notify_one();
    thread.join();
  }
  void run(engine::Poller& p, uint64_t every_us) {
    const uint64_t every = every_us * 1000;
    uint64_t nap = every;
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::nanoseconds(nap), [this] { return stop; })) {
      const uint64_t now = engine::now_ns(), last = p.last_driven_ns();
      if (last + every > now) {  // a call drove the members lately
        nap = last + every - now;
        continue;
      }
      lock.unlock();
      p.drive_until(never, nullptr, 0);  // the last turns only: while they find work, a few
      lock.lock();
      nap = every;
    }
  }
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  std::thread thread;  // last: started once the rest is made
};

Engine::Engine(const EngineOptions& opts) : opts_(opts) {
  if (opts.memory_mb < 64) throw std::invalid_argument("engine: memory_mb must be at least 64");
  if (opts.idle_look_us > 1'000'000)
    throw std::invalid_argument("engine: idle_look_us must be 0 (off) .. 1000000 (1 s), not " +
                                std::to_string(opts.idle_look_us));
  // By default one polling core per CPU but one, at least one and at most
  // two. The CPU left over carries the application's threads and the
  // kernel's work for kernel-backed ports; a poller that shares its CPU with
  // them is preempted for tens of microseconds at a time (on a 2-CPU host, 8
  // members on the fabric: chain 2 B 18 us with one poller, 124 us with two;
  // docs/engine.md, "Polling cores").
  const uint32_t cpus = static_cast<uint32_t>(engine::usable_cpus().size());
  const uint32_t want = opts.progress_in_calls ? 1
                        : opts.polling_cores ? opts.polling_cores
                                             : std::clamp<uint32_t>(cpus > 0 ? cpus - 1 : 1, 1, 2);
  engine::EalOptions eal;
  eal.memory_mb = opts.memory_mb;
  eal.hugepages = opts.hugepages;
  eal.polling_cores = want;
  eal.main_lcore_only = opts.progress_in_calls;
  eal.log_level = opts.log_level;
  engine::eal_start(eal);  // no-op when this process started EAL before

  engine::BackoffOptions b;
  b.max_sleep_ns = opts.idle_sleep_max_ns;
  b.spin_ns = opts.idle_spin_us * 1000;
  b.busy_spin_ns = opts.busy_spin_us * 1000;
  b.yield_when_idle = opts.yield_when_idle;
  if (opts.idle_sleep_max_ns == 0) b.spin_ns = b.busy_spin_ns = UINT64_MAX;
  if (opts.progress_in_calls) {  // one poller, driven by the application's waits
    pollers_.push_back(std::make_unique<engine::Poller>(b, true));
    if (opts.idle_look_us > 0) looker_ = std::make_unique<Looker>(*pollers_[0], opts.idle_look_us);
    return;
  }
  lcores_ = engine::eal_workers();
  if (lcores_.size() > want) lcores_.resize(want);
  if (lcores_.empty())
    throw std::runtime_error(
        "engine: DPDK has no worker lcore to poll on (an engine progressing in calls started DPDK in this process "
        "without any: the engine with polling cores must come first)");
  for (unsigned lc : lcores_) {
    auto p = std::make_unique<engine::Poller>(b);
    if (rte_eal_remote_launch(poller_main, p.get(), lc) != 0)
      throw std::runtime_error("engine: lcore " + std::to_string(lc) + " is busy");
    pollers_.push_back(std::move(p));
  }
}

Engine::~Engine() {
  looker_.reset();
  for (auto& p : pollers_) p->stop();
  for (unsigned lc : lcores_) rte_eal_wait_lcore(lc);
}

uint64_t Engine::idle_naps() const {
  uint64_t n = 0;
  for (const auto& p : pollers_) n += p->sleeps();
  return n;
}

uint64_t Engine::poll_iterations() const {
  uint64_t n = 0;
  for (const auto& p : pollers_) n += p->iterations();
  return n;
}

uint64_t Engine::longest_poll_cycle_ns() const {
  uint64_t most = 0;
  for (const auto& p : pollers_) most = std::max(most, p->longest_cycle_ns());
  return most;
}

uint64_t Engine::long_poll_cycles() const {
  uint64_t n = 0;
  for (const auto& p : pollers_) n += p->long_cycles();
  return n;
}

void Engine::reset_longest_poll_cycle() {
  for (auto& p : pollers_) p->reset_longest_cycle();
}

std::vector<int> Engine::poller_cpus() const {
  std::vector<int> cpus;
  for (unsigned lc : lcores_) {
    const rte_cpuset_t set = rte_lcore_cpuset(lc);
    int cpu = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
      if (CPU_ISSET(c, &set)) cpu = c;
    cpus.push_back(cpu);
  }
  return cpus;
}

void Engine::park_all() {
  for (auto& p : pollers_) p->park();
}

void Engine::unpark_all() {
  for (auto& p : pollers_) p->unpark();
}

}  // namespace lanecast
