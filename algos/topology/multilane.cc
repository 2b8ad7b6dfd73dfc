#include "algos/topology/multilane.h"

#include <algorithm>
#include <stdexcept>

namespace lanecast::algos::topology {

// Every table is reserved to its final size before it is filled: one request
// per table, as resource_requests() counts them.
MultilaneLayout::MultilaneLayout(uint32_t p, Rank root, std::span<const uint32_t> site_of_rank,
                                 std::pmr::memory_resource* mem)
    : p_(p), root_(root), sites_(mem), order_(mem), chain_(mem) {
  if (p == 0 || root >= p) throw std::invalid_argument("multilane: root is outside the group");
  if (!site_of_rank.empty() && site_of_rank.size() != p)
    throw std::invalid_argument("multilane: site_of_rank must give a site for every rank");
  if (site_of_rank.empty()) {
    sites_.reserve(1);
    sites_.push_back({0, p - 1, 0});
    return;
  }
  // Distinct site ids, rotated so that the root's comes first.
  std::pmr::vector<uint32_t> ids(site_of_rank.begin(), site_of_rank.end(), mem);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto at = std::lower_bound(ids.begin(), ids.end(), site_of_rank[root]);
  std::rotate(ids.begin(), at, ids.end());
  // Members site by site, each in virtual-rank order (the root left out).
  sites_.reserve(ids.size());
  order_.reserve(p - 1);
  chain_.assign(p, UINT32_MAX);
  for (uint32_t id : ids) {
    Site s{static_cast<uint32_t>(order_.size()), 0, 0};
    for (Rank v = 1; v < p; ++v) {
      const Rank r = (v + root) % p;
      if (site_of_rank[r] != id) continue;
      chain_[r] = static_cast<uint32_t>(order_.size());
      order_.push_back(r);
      ++s.count;
    }
    if (!sites_.empty()) s.flip = multilane_next_flip(sites_.back().count, sites_.back().flip);
    sites_.push_back(s);
  }
}

std::array<size_t, 4> MultilaneLayout::resource_requests(uint32_t p, bool with_sites) {
  if (!with_sites) return {sizeof(Site), 0, 0, 0};
  // The constructor's scratch copy of the site ids, sites_ (at most one site
  // per rank), order_ and chain_.
  return {size_t{p} * sizeof(uint32_t), size_t{p} * sizeof(Site), size_t{p > 0 ? p - 1 : 0} * sizeof(Rank),
          size_t{p} * sizeof(uint32_t)};
}

std::vector<uint32_t> MultilaneLayout::contiguous(uint32_t p, uint32_t sites) {
  if (sites == 0 || sites > p) throw std::invalid_argument("multilane: 1..p sites");
  std::vector<uint32_t> out(p);
  for (Rank r = 0; r < p; ++r) out[r] = static_cast<uint32_t>(uint64_t{r} * sites / p);
  return out;
}

Rank MultilaneLayout::rank_at(uint32_t k) const {
  return order_.empty() ? (k + 1 + root_) % p_ : order_[k];
}

uint32_t MultilaneLayout::chain_of(Rank r) const {
  return chain_.empty() ? (r + p_ - root_) % p_ - 1 : chain_[r];
}

uint32_t MultilaneLayout::site_at(uint32_t k) const {
  // The last site whose first member is at or before k (an empty site 0
  // shares its first with site 1, which this picks).
  const auto it = std::upper_bound(sites_.begin(), sites_.end(), k,
                                   [](uint32_t key, const Site& s) { return key < s.first; });
  return static_cast<uint32_t>(it - sites_.begin()) - 1;
}

std::pair<Rank, Lane> MultilaneLayout::entry(uint32_t c, uint32_t h) const {
  const Site& s = sites_[c];
  return {rank_at(s.first + multilane_member(h, 0, s.count)), static_cast<Lane>((h + s.flip) & 1u)};
}

Rank MultilaneLayout::feeder_of(uint32_t c, uint32_t h) const {
  if (c == 0 || sites_[c - 1].count == 0) return root_;
  const Site& prev = sites_[c - 1];
  return rank_at(prev.first + multilane_feeder(h, prev.count));
}

MultilanePlace MultilaneLayout::place(Rank me) const {
  if (me >= p_) throw std::invalid_argument("multilane: rank is outside the group");
  MultilanePlace out;
  if (me == root_) {
    // The first site with members: site 0, or site 1 when the root is alone.
    uint32_t c = 0;
    while (c < sites_.size() && sites_[c].count == 0) ++c;
    if (c == sites_.size()) return out;  // a group of one
    for (uint32_t h = 0; h < 2; ++h) {
      const auto [r, lane] = entry(c, h);
      out.to[h][0] = r;
      out.lane[h][0] = lane;
      out.count[h] = 1;
    }
    return out;
  }
  const uint32_t k = chain_of(me), c = site_at(k);
  const Site& s = sites_[c];
  const uint32_t j = k - s.first, n = s.count;
  out.site = c;
  for (uint32_t h = 0; h < 2; ++h) {
    std::array<uint32_t, 2> kids{};
    const uint32_t nk = multilane_children(h, j, n, kids);
    for (uint32_t i = 0; i < nk; ++i) {
      out.to[h][i] = rank_at(s.first + kids[i]);
      out.lane[h][i] = multilane_lane(h, kids[i], n, s.flip);
    }
    out.count[h] = nk;
    if (c + 1 < sites_.size() && j == multilane_feeder(h, n)) {
      const auto [r, lane] = entry(c + 1, h);
      out.to[h][out.count[h]] = r;
      out.lane[h][out.count[h]++] = lane;
    }
    const uint32_t pos = multilane_position(h, j, n);
    out.from[h] = pos == 0 ? feeder_of(c, h) : rank_at(s.first + multilane_member(h, (pos - 1) / 2, n));
    out.from_lane[h] = multilane_lane(h, j, n, s.flip);
  }
  return out;
}

}  // namespace lanecast::algos::topology
