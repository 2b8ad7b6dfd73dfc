// Command-line helpers of `lanecast plan`: an option table (name, value, default,
// one-line doc) printed by --help, and parsers for sizes and numbers. Kept in
// apps/plan so that the plan library depends on nothing but the simulator.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lanecast::apps::plan {

// A user error: "lanecast plan: <what>", exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Option {
  std::string name;        // without the leading dashes
  std::string value_name;  // empty for a flag
  std::string default_text;
  std::string doc;
  std::function<void(std::string_view)> apply;  // gets "" for a flag
};

class OptionTable {
 public:
  void add(Option o) { options_.push_back(std::move(o)); }
  // Parses argv[first..argc) as --name VALUE, --name=VALUE or --flag.
  // Returns true if --help or -h was given. Throws UsageError.
  bool parse(int argc, char** argv, int first) const;
  std::string help() const;

 private:
  std::vector<Option> options_;
};

// "1400", "64K", "16M", "1G" (powers of 1024).
uint64_t parse_size(std::string_view text, std::string_view what);
// "a,b,c" and/or "lo:hi" (every power of two from lo to hi).
std::vector<uint64_t> parse_size_list(std::string_view text, std::string_view what);
uint64_t parse_uint(std::string_view text, std::string_view what, uint64_t max);
double parse_double(std::string_view text, std::string_view what, double min, double max);
std::string format_size(uint64_t bytes);  // 1536 -> "1.5K"

}  // namespace lanecast::apps::plan
