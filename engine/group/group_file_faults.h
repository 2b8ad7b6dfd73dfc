// The reader of a group file's [group.faults] table (group_file.cc reads the
// rest): its keys are a rule for every frame every member receives, each
// [[group.faults.link]] a rule of its own for the frames its selectors pick.
// Errors name the file and the line (toml_fields.h).
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <string>

#include "engine/group/toml_fields.h"
#include "lanecast/group_spec.h"

namespace lanecast {

class FaultTableReader : TomlFields {
 public:
  FaultTableReader(std::string file, int64_t max_members) : TomlFields(std::move(file)), max_members_(max_members) {}
  // [group.faults] of group table `g` into spec.faults (absent: nothing).
  void read(const toml::table& g, GroupSpec& spec) const;
  // The ranks [[group.faults.link]] names, once the members are known.
  void check_ranks(const toml::table& g, const GroupSpec& spec) const;

 private:
  // The fault keys of one table into `f`; whether any was there.
  bool read_values(const toml::table& t, const std::string& path, LinkFaults& f) const;

  int64_t max_members_;
};

}  // namespace lanecast
