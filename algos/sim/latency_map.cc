#include "algos/sim/latency_map.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>

namespace lanecast::algos::sim {
namespace {

[[noreturn]] void fail(size_t line, const std::string& msg) {
  throw std::invalid_argument("topology:" + std::to_string(line) + ": " + msg);
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != '\r') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_u32(std::string_view s, uint32_t* out) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// "0-3,8,10-11" -> ranks
std::vector<Rank> parse_ranks(std::string_view s, size_t line) {
  std::vector<Rank> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find(',', i);
    if (j == std::string_view::npos) j = s.size();
    const std::string_view item = s.substr(i, j - i);
    const size_t dash = item.find('-');
    uint32_t a = 0, b = 0;
    const bool ok = dash == std::string_view::npos
                        ? parse_u32(item, &a) && (b = a, true)
                        : parse_u32(item.substr(0, dash), &a) && parse_u32(item.substr(dash + 1), &b);
    if (!ok || b < a) fail(line, "bad rank list '" + std::string(s) + "' (want e.g. 0-3,8)");
    if (b - a > (1u << 24)) fail(line, "rank range too large");
    for (uint32_t r = a; r <= b; ++r) out.push_back(r);
    i = j + 1;
  }
  return out;
}

}  // namespace

Picos parse_duration(std::string_view text, std::string_view what) {
  const std::string s(text);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string unit = s.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "us") scale = 1e6;
  else if (unit == "ns") scale = 1e3;
  else if (unit == "ms") scale = 1e9;
  else if (unit == "s") scale = 1e12;
  else if (unit == "ps") scale = 1;
  if (used == 0 || scale == 0 || !(v >= 0) || !std::isfinite(v) || v * scale > 1e18)
    throw std::invalid_argument(std::string(what) + ": '" + s +
                                "' is not a duration (e.g. 50us, 1.5ms, 800ns; bare numbers are us)");
  return static_cast<Picos>(std::llround(v * scale));
}

void LatencyMap::set_site_latency(int a, int b, Picos t) {
  const size_t n = site_names_.size();
  site_latency_[static_cast<size_t>(a) * n + static_cast<size_t>(b)] = static_cast<int64_t>(t);
  site_latency_[static_cast<size_t>(b) * n + static_cast<size_t>(a)] = static_cast<int64_t>(t);
}

LatencyMap LatencyMap::parse(std::string_view text, Picos default_t0) {
  LatencyMap t(default_t0);
  size_t line_no = 0;
  std::vector<std::vector<std::string_view>> lines;
  {
    size_t i = 0;
    while (i <= text.size()) {
      size_t j = text.find('\n', i);
      if (j == std::string_view::npos) j = text.size();
      std::string_view l = text.substr(i, j - i);
      if (const size_t h = l.find('#'); h != std::string_view::npos) l = l.substr(0, h);
      lines.push_back(split_words(l));
      i = j + 1;
    }
  }
  struct SiteDef { std::string name; std::vector<Rank> ranks; };
  std::vector<SiteDef> sites;
  struct SiteLat { std::string a, b; Picos t; size_t line; };
  std::vector<SiteLat> site_lats;
  Rank max_rank = 0;
  bool any_rank = false;
  auto note_rank = [&](Rank r) { max_rank = std::max(max_rank, r); any_rank = true; };

  for (line_no = 1; line_no <= lines.size(); ++line_no) {
    const auto& w = lines[line_no - 1];
    if (w.empty()) continue;
    const std::string_view cmd = w[0];
    auto need = [&](size_t n, const char* usage) {
      if (w.size() != n) fail(line_no, std::string("usage: ") + usage);
    };
    if (cmd == "nodes") {
      need(2, "nodes COUNT");
      if (!parse_u32(w[1], &t.nodes_) || t.nodes_ == 0) fail(line_no, "bad node count");
    } else if (cmd == "default") {
      need(2, "default LATENCY");
      t.default_ = parse_duration(w[1], "topology:" + std::to_string(line_no));
    } else if (cmd == "site") {
      if (w.size() < 3) fail(line_no, "usage: site NAME RANKS (e.g. site a 0-3,8)");
      SiteDef s{std::string(w[1]), {}};
      for (const auto& x : sites)
        if (x.name == s.name) fail(line_no, "site '" + s.name + "' defined twice");
      for (size_t k = 2; k < w.size(); ++k)
        for (Rank r : parse_ranks(w[k], line_no)) { s.ranks.push_back(r); note_rank(r); }
      sites.push_back(std::move(s));
    } else if (cmd == "latency") {
      need(4, "latency SITE SITE LATENCY");
      site_lats.push_back({std::string(w[1]), std::string(w[2]),
                           parse_duration(w[3], "topology:" + std::to_string(line_no)), line_no});
    } else if (cmd == "pair") {
      need(4, "pair RANK RANK LATENCY");
      uint32_t a = 0, b = 0;
      if (!parse_u32(w[1], &a) || !parse_u32(w[2], &b) || a == b) fail(line_no, "bad pair of ranks");
      const Picos lat = parse_duration(w[3], "topology:" + std::to_string(line_no));
      t.pairs_[(uint64_t{a} << 32) | b] = lat;
      t.pairs_[(uint64_t{b} << 32) | a] = lat;
      note_rank(std::max(a, b));
    } else if (cmd == "matrix") {
      need(1, "matrix (then one row of latencies per node)");
      if (t.nodes_ == 0) fail(line_no, "'matrix' needs a 'nodes' line before it");
      const uint32_t n = t.nodes_;
      t.matrix_.assign(size_t{n} * n, 0);
      for (uint32_t row = 0; row < n; ++row) {
        ++line_no;
        while (line_no <= lines.size() && lines[line_no - 1].empty()) ++line_no;
        if (line_no > lines.size()) fail(line_no - 1, "matrix ends early: want " + std::to_string(n) + " rows");
        const auto& v = lines[line_no - 1];
        if (v.size() != n)
          fail(line_no, "matrix row has " + std::to_string(v.size()) + " entries, want " + std::to_string(n));
        for (uint32_t c = 0; c < n; ++c)
          t.matrix_[size_t{row} * n + c] = parse_duration(v[c], "topology:" + std::to_string(line_no));
      }
    } else {
      fail(line_no, "unknown directive '" + std::string(cmd) +
                        "' (want nodes, default, site, latency, pair or matrix)");
    }
  }

  if (t.nodes_ != 0 && any_rank && max_rank >= t.nodes_)
    throw std::invalid_argument("topology: rank " + std::to_string(max_rank) + " is outside 'nodes " +
                                std::to_string(t.nodes_) + "'");
  if (!sites.empty()) {
    const size_t size = t.nodes_ != 0 ? t.nodes_ : size_t{max_rank} + 1;
    t.site_of_.assign(size, -1);
    for (size_t i = 0; i < sites.size(); ++i) {
      t.site_names_.push_back(sites[i].name);
      for (Rank r : sites[i].ranks) {
        if (t.site_of_[r] != -1)
          throw std::invalid_argument("topology: rank " + std::to_string(r) + " is in two sites");
        t.site_of_[r] = static_cast<int>(i);
      }
    }
    t.site_latency_.assign(sites.size() * sites.size(), -1);
  }
  for (const auto& sl : site_lats) {
    auto find = [&](const std::string& name) {
      for (size_t i = 0; i < t.site_names_.size(); ++i)
        if (t.site_names_[i] == name) return static_cast<int>(i);
      fail(sl.line, "unknown site '" + name + "'");
    };
    t.set_site_latency(find(sl.a), find(sl.b), sl.t);
  }
  return t;
}

LatencyMap LatencyMap::load(const std::string& path, Picos default_t0) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("topology: cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse(ss.str(), default_t0);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
}

LatencyMap LatencyMap::random_islands(uint32_t nodes, uint32_t islands, Picos intra, Picos inter_min,
                                  Picos inter_max, uint64_t seed) {
  if (islands == 0 || islands > nodes) throw std::invalid_argument("random_islands: need 1..nodes islands");
  std::mt19937_64 rng(seed);
  LatencyMap t(intra);
  t.nodes_ = nodes;
  t.site_of_.resize(nodes);
  // Every island gets one member first, the rest go anywhere; then shuffle ranks.
  for (uint32_t r = 0; r < nodes; ++r)
    t.site_of_[r] = r < islands ? static_cast<int>(r) : static_cast<int>(rng() % islands);
  for (uint32_t r = nodes; r > 1; --r) std::swap(t.site_of_[r - 1], t.site_of_[rng() % r]);
  for (uint32_t i = 0; i < islands; ++i) t.site_names_.push_back("island" + std::to_string(i));
  t.site_latency_.assign(size_t{islands} * islands, -1);
  for (uint32_t a = 0; a < islands; ++a) {
    t.set_site_latency(static_cast<int>(a), static_cast<int>(a), intra);
    for (uint32_t b = a + 1; b < islands; ++b)
      t.set_site_latency(static_cast<int>(a), static_cast<int>(b),
                         inter_min + (inter_max > inter_min ? rng() % (inter_max - inter_min + 1) : 0));
  }
  return t;
}

void LatencyMap::check_fits(uint32_t nodes) const {
  if (nodes_ != 0 && nodes_ != nodes)
    throw std::invalid_argument("topology describes " + std::to_string(nodes_) + " nodes, the group has " +
                                std::to_string(nodes));
  if (site_of_.size() > nodes)
    throw std::invalid_argument("topology places rank " + std::to_string(site_of_.size() - 1) +
                                " in a site, the group has only " + std::to_string(nodes) + " nodes");
}

double LatencyMap::spread(uint32_t nodes) const {
  check_fits(nodes);  // a matrix has no row for a rank beyond it
  if (uniform() || nodes < 2) return 1;
  // Ranks from `named` on are in no site, no pair and no matrix: any two of them
  // stand for all (their latency to every rank is the default).
  size_t named = std::max<size_t>(nodes_, site_of_.size());
  for (const auto& [key, t] : pairs_) named = std::max<size_t>(named, (key >> 32) + 1);
  const uint32_t count = static_cast<uint32_t>(std::min<size_t>(nodes, named + 2));
  Picos lo = std::numeric_limits<Picos>::max(), hi = 0;
  for (Rank a = 0; a < count; ++a)
    for (Rank b = 0; b < count; ++b)
      if (a != b) {
        const Picos t = latency(a, b);
        lo = std::min(lo, t);
        hi = std::max(hi, t);
      }
  if (hi == lo) return 1;
  if (lo == 0) return std::numeric_limits<double>::infinity();
  return static_cast<double>(hi) / static_cast<double>(lo);
}

Picos LatencyMap::lookup(Rank from, Rank to) const {
  if (!pairs_.empty()) {
    if (auto it = pairs_.find((uint64_t{from} << 32) | to); it != pairs_.end()) return it->second;
  }
  if (!matrix_.empty()) return matrix_[size_t{from} * nodes_ + to];
  const int a = site_of(from), b = site_of(to);
  if (a >= 0 && b >= 0) {
    const int64_t v = site_latency_[static_cast<size_t>(a) * site_names_.size() + static_cast<size_t>(b)];
    if (v >= 0) return static_cast<Picos>(v);
  }
  return default_;
}

}  // namespace lanecast::algos::sim
