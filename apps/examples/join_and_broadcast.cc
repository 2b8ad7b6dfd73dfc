// The smallest application of lanecast as a library: this process is one
// member of the group a group file describes; rank 0 broadcasts a greeting
// and every member prints what it got. Start one per member:
//
//   join_and_broadcast config/groups/static2.toml 0   (in rank 0's namespace)
//   join_and_broadcast config/groups/static2.toml 1   (in rank 1's namespace)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <vector>

#include "lanecast/lanecast.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s GROUP_FILE RANK\n", argv[0]);
    return 2;
  }
  try {
    lanecast::Engine engine({});
    auto group = engine.join(lanecast::load_group_file(argv[1]), static_cast<lanecast::Rank>(std::atoi(argv[2])));
    std::vector<std::byte> buf(64);
    if (group->rank() == 0) std::snprintf(reinterpret_cast<char*>(buf.data()), buf.size(), "hello from rank 0");
    const lanecast::Status s = group->broadcast(0, buf).wait();
    if (!s.ok()) throw std::runtime_error(s.message);
    std::printf("rank %u of %u got: %s\n", group->rank(), group->size(), reinterpret_cast<const char*>(buf.data()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
