#include "apps/bench/group_exchange.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace lanecast::apps {
namespace {

// One small broadcast rooted at each member in turn (member r roots the
// r-th, with the bytes of buffer(r)), all posted in the same order on every
// member, in chunks below the 64 a member may have outstanding.
template <class Buffer>
void one_from_each(Group& g, Buffer&& buffer, const char* what) {
  constexpr uint32_t kChunk = 32;
  for (uint32_t first = 0; first < g.size(); first += kChunk) {
    std::vector<Completion> done;
    for (uint32_t r = first; r < std::min(g.size(), first + kChunk); ++r)
      done.push_back(g.broadcast(r, buffer(r), "linear"));
    for (auto& d : done) {
      const Status s = d.wait();
      if (!s.ok()) throw std::runtime_error(std::string(what) + ": " + s.message);
    }
  }
}


}  // namespace

void barrier(Group& g) {
  static std::byte token[1];
  one_from_each(g, [](uint32_t) { return std::span(token, 1); }, "barrier");
}

void all_to_all(Group& g, std::span<std::byte* const> all, size_t bytes, const char* what) {
  const size_t piece = std::max<uint64_t>(1, std::min<uint64_t>(g.spec().max_message_bytes, bytes));
  for (size_t first = 0; first < bytes; first += piece) {
    const size_t count = std::min(piece, bytes - first);
    one_from_each(g, [&](uint32_t r) { return std::span(all[r] + first, count); }, what);
  }
}


}  // namespace lanecast::apps
