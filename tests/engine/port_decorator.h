// The base of the tests' port decorators, which watch what a node sends and
// receives or take a capability away, while the frames still go through the
// real fabric (or the verbs model): drivers::ForwardingPort, its name marked.
#pragma once

#include <string>

#include "drivers/forwarding_port.h"

namespace lanecast::engine::test {

class PortDecorator : public drivers::ForwardingPort {
 public:
  explicit PortDecorator(drivers::Port& inner) : ForwardingPort(inner) {}
  std::string name() const override { return "decorated " + in_.name(); }
};

}  // namespace lanecast::engine::test
