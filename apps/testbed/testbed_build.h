// Building and removing the testbed of testbed_spec.h with ip and tc, one
// command at a time (argument vectors, no shell), each failure reported with
// its command line and what the command said.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/testbed/testbed_spec.h"

namespace lanecast::apps::testbed {

// UsageError unless this process may create namespaces (root).
void require_root(const char* what);  // "up", "--testbed"

// The namespaces of testbed `name`: nodes in order, then the switch and the
// probe, those that exist.
std::vector<std::string> namespaces_of(const std::string& name);

// Builds the testbed. If a step fails, or a stop signal arrives while a
// StopSignals lives (apps/common/stop_signals.h), it removes every namespace
// it made and throws (CommandFailed, Stopped). UsageError if a namespace of
// that name exists already. `node_made(i)` runs after node i's namespace and
// links are made (a progress line: a large testbed takes seconds).
using NodeMade = std::function<void(uint32_t node)>;
void up(const TestbedSpec& s, const NodeMade& node_made = {});

// Removes every namespace of testbed `name` (each veth goes with its
// namespace); returns how many there were. Tries them all, then throws
// CommandFailed naming those that would not go.
size_t down(const std::string& name);

// A testbed that exists while this object lives: built by the constructor,
// removed by the destructor (on every way out of the scope: an error, a
// stop signal). A destructor cannot throw: what `down` reports goes to
// stderr.
class TestbedScope {
 public:
  explicit TestbedScope(const TestbedSpec& s, const NodeMade& node_made = {});
  ~TestbedScope();
  TestbedScope(const TestbedScope&) = delete;
  TestbedScope& operator=(const TestbedScope&) = delete;
  const TestbedSpec& spec() const { return spec_; }

 private:
  TestbedSpec spec_;
};

}  // namespace lanecast::apps::testbed
