#include "apps/common/options.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace lanecast::apps {

bool OptionTable::parse(int argc, char** argv, int first) {
  given_.clear();
  for (int i = first; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return true;
    if (arg.substr(0, 2) != "--") throw UsageError("unexpected argument '" + std::string(arg) + "' (see --help)");
    std::string_view name = arg.substr(2);
    std::string_view value;
    bool inline_value = false;
    if (auto eq = name.find('='); eq != std::string_view::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const Option* opt = nullptr;
    for (const auto& o : options_)
      if (o.name == name) opt = &o;
    if (opt == nullptr) throw UsageError("unknown option --" + std::string(name) + " (see --help)");
    given_.push_back(opt->name);
    if (opt->value_name.empty()) {
      if (inline_value) throw UsageError("--" + opt->name + " takes no value");
      opt->apply("");
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) throw UsageError("--" + opt->name + " needs a value (" + opt->value_name + ")");
      value = argv[++i];
    }
    opt->apply(value);
  }
  return false;
}

bool OptionTable::given(std::string_view name) const {
  for (const std::string& g : given_)
    if (g == name) return true;
  return false;
}

std::string OptionTable::help() const {
  std::string out;
  for (const auto& o : options_) {
    std::string left = "  --" + o.name + (o.value_name.empty() ? "" : " " + o.value_name);
    if (left.size() < 30) left.resize(30, ' ');
    else left += "\n" + std::string(30, ' ');
    out += left + o.doc;
    if (!o.default_text.empty()) out += " [default: " + o.default_text + "]";
    out += "\n";
  }
  return out;
}

uint64_t parse_uint(std::string_view t, std::string_view what, uint64_t max) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size() || t.empty())
    throw UsageError(std::string(what) + ": '" + std::string(t) + "' is not a whole number");
  if (v > max)
    throw UsageError(std::string(what) + ": " + std::string(t) + " is larger than " + std::to_string(max));
  return v;
}

double parse_double(std::string_view t, std::string_view what, double min, double max) {
  std::string s(t);
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    throw UsageError(std::string(what) + ": '" + s + "' is not a number");
  if (v < min || v > max) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s: %s is outside [%g, %g]", std::string(what).c_str(), s.c_str(), min, max);
    throw UsageError(buf);
  }
  return v;
}

uint64_t parse_size(std::string_view t, std::string_view what) {
  if (t.empty()) throw UsageError(std::string(what) + ": empty size");
  uint64_t mult = 1;
  switch (t.back()) {
    case 'k': case 'K': mult = 1ull << 10; break;
    case 'm': case 'M': mult = 1ull << 20; break;
    case 'g': case 'G': mult = 1ull << 30; break;
    default: break;
  }
  if (mult != 1) t.remove_suffix(1);
  const uint64_t v = parse_uint(t, what, UINT64_MAX / mult);
  return v * mult;
}

std::vector<uint64_t> parse_size_list(std::string_view text, std::string_view what) {
  std::vector<uint64_t> out;
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (auto colon = item.find(':'); colon != std::string_view::npos) {
      const uint64_t lo = parse_size(item.substr(0, colon), what);
      const uint64_t hi = parse_size(item.substr(colon + 1), what);
      if (lo == 0 || lo > hi)
        throw UsageError(std::string(what) + ": range '" + std::string(item) + "' needs 0 < low <= high");
      for (uint64_t v = lo; v <= hi; v *= 2) {
        out.push_back(v);
        if (v > UINT64_MAX / 2) break;
      }
    } else {
      out.push_back(parse_size(item, what));
    }
  }
  if (out.empty()) throw UsageError(std::string(what) + ": no sizes given");
  return out;
}

std::string size_list_text(const std::vector<uint64_t>& sizes) {
  std::string s;
  for (const uint64_t b : sizes) s += (s.empty() ? "" : ",") + std::to_string(b);
  return s;
}

std::string format_size(uint64_t b) {
  const char* units[] = {"", "K", "M", "G", "T"};
  int u = 0;
  double v = static_cast<double>(b);
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (v == std::floor(v)) std::snprintf(buf, sizeof buf, "%.0f%s", v, units[u]);
  else std::snprintf(buf, sizeof buf, "%.1f%s", v, units[u]);
  return buf;
}

}  // namespace lanecast::apps
