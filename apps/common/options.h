// A small table-driven option parser for the lanecast commands: each option
// has a name, a default and a one-line doc, and --help prints the table.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lanecast::apps {

// A user error: printed as "lanecast: <what>" with exit status 2.
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
  // Parses argv[first..argc); throws UsageError for unknown or malformed options.
  // Returns true if --help was given.
  bool parse(int argc, char** argv, int first);
  std::string help() const;
  // Whether the last parse met --name (for options that apply only together
  // with another, or whose default depends on it).
  bool given(std::string_view name) const;

 private:
  std::vector<Option> options_;
  std::vector<std::string> given_;
};

// "1400", "64K", "16M", "1G" (powers of 1024). Throws UsageError.
uint64_t parse_size(std::string_view text, std::string_view what);
// "1,64K,1M" or "1:16M" (every power of two from 1 to 16M) or a mix.
std::vector<uint64_t> parse_size_list(std::string_view text, std::string_view what);
// "2,65536,1048576": sizes as parse_size_list reads them back (another
// command's --sizes or --size).
std::string size_list_text(const std::vector<uint64_t>& sizes);
uint64_t parse_uint(std::string_view text, std::string_view what, uint64_t max);
double parse_double(std::string_view text, std::string_view what, double min, double max);
std::string format_size(uint64_t bytes);  // 1536 -> "1.5K", 16777216 -> "16M"

}  // namespace lanecast::apps
