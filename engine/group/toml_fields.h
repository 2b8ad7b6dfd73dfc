// Typed look-ups in a TOML table for files people write by hand (group
// files): each value of the wrong type or out of its range, and each unknown
// key, is an error naming the file, the line and what is allowed -
// std::invalid_argument "FILE:LINE: ...".
#pragma once

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "lanecast/group_spec.h"

namespace lanecast {

inline std::string joined(std::span<const std::string_view> words, std::string_view sep = ", ") {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += sep;
    out += w;
  }
  return out;
}

inline std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time: return "a date or time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// A number node's value: toml++ refuses an integer no double holds exactly
// (value<double>() is empty for 2^53 + 1), so integers are converted here.
inline double number_of(const toml::node& n) {
  if (const auto* i = n.as_integer()) return static_cast<double>(i->get());
  return n.as_floating_point()->get();
}

inline std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// "1 entry", "2 entries"
inline std::string count_of(size_t n, std::string_view one, std::string_view many) {
  return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

inline std::string in_quotes(std::string_view s) { return "\"" + std::string(s) + "\""; }

class TomlFields {
 public:
  explicit TomlFields(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const toml::source_region& at, const std::string& what) const {
    throw std::invalid_argument(file_ + ":" + std::to_string(at.begin.line) + ": " + what);
  }
  [[noreturn]] void fail(const toml::node& at, const std::string& what) const {
    fail(at.source(), what);
  }

  // Reports the first unknown key in file order (tables iterate sorted).
  void reject_unknown_keys(const toml::table& t, std::string_view where,
                           std::span<const std::string_view> allowed) const {
    const toml::key* first = nullptr;
    for (auto&& [key, value] : t) {
      if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
      if (first == nullptr || key.source().begin.line < first->source().begin.line) first = &key;
    }
    if (first != nullptr)
      fail(first->source(), "unknown key '" + std::string(first->str()) + "' in " + std::string(where) +
                                "; allowed: " + joined(allowed));
  }

  // Typed look-ups: nullopt when the key is absent, an error when its value
  // has another type or lies outside [lo, hi] (`allowed` says so in words).
  std::optional<int64_t> integer(const toml::table& t, std::string_view key, const std::string& path,
                                 int64_t lo, int64_t hi, const std::string& allowed) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_integer()) fail(*n, path + " must be an integer, not " + type_name(*n) + "; allowed " + allowed);
    const int64_t v = n->as_integer()->get();
    if (v < lo || v > hi) fail(*n, path + " is " + std::to_string(v) + ", out of range; allowed " + allowed);
    return v;
  }
  std::optional<int64_t> integer(const toml::table& t, std::string_view key, const std::string& path,
                                 int64_t lo, int64_t hi) const {
    return integer(t, key, path, lo, hi, std::to_string(lo) + ".." + std::to_string(hi));
  }

  // A finite number (integer or float), > 0 or >= 0.
  std::optional<double> number(const toml::table& t, std::string_view key, const std::string& path,
                               bool zero_allowed) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    const std::string allowed = zero_allowed ? "a finite number >= 0" : "a finite number > 0";
    if (!n->is_number()) fail(*n, path + " must be a number, not " + type_name(*n) + "; allowed " + allowed);
    const double v = number_of(*n);
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_allowed))
      fail(*n, path + " is " + number_text(v) + ", out of range; allowed " + allowed);
    return v;
  }

  // A timeout in milliseconds, kMinTimeoutMs..kMaxTimeoutMs (lanecast/group_spec.h).
  std::optional<double> timeout_ms(const toml::table& g, std::string_view key) const {
    const toml::node* n = g.get(key);
    if (n == nullptr) return std::nullopt;
    const std::string path = "group." + std::string(key);
    const std::string allowed = std::string("a finite number > 0 of milliseconds, ") + kTimeoutRange;
    if (!n->is_number()) fail(*n, path + " must be a number, not " + type_name(*n) + "; allowed " + allowed);
    const double v = number_of(*n);
    if (!timeout_in_range(v)) {
      char text[32];
      std::snprintf(text, sizeof text, "%.10g", v);
      fail(*n, path + " is " + text + ", out of range; allowed " + allowed);
    }
    return v;
  }

  std::optional<bool> boolean(const toml::table& t, std::string_view key, const std::string& path) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_boolean()) fail(*n, path + " must be true or false, not " + type_name(*n));
    return n->as_boolean()->get();
  }

  std::optional<std::string> string(const toml::table& t, std::string_view key, const std::string& path) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return std::nullopt;
    if (!n->is_string()) fail(*n, path + " must be a string, not " + type_name(*n));
    return n->as_string()->get();
  }

  const toml::array* array(const toml::table& t, std::string_view key, const std::string& path,
                           const std::string& of_what) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return nullptr;
    if (!n->is_array()) fail(*n, path + " must be an array of " + of_what + ", not " + type_name(*n));
    return n->as_array();
  }

 protected:
  std::string file_;
};

}  // namespace lanecast
