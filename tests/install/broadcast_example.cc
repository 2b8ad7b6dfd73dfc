// Four members in this process on the in-process fabric: each of three
// algorithms broadcasts 1 MiB from rank 0 and from rank 3, and every
// member's bytes must equal the root's. Built against the installed
// lanecast (tests/install/run.sh); exits 0 and prints "ok" when they do.
#include <lanecast/lanecast.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

int main() {
  try {
    lanecast::EngineOptions eo;
    eo.memory_mb = 256;
    lanecast::Engine engine(eo);
    for (const char* algo : {"chain", "bintree", "binomial"}) {
      lanecast::GroupOptions go;
      go.nodes = 4;
      go.algo = algo;
      go.max_message_bytes = 1 << 20;
      auto group = engine.create_local_group(go);
      for (lanecast::Rank root : {0u, 3u}) {
        std::vector<std::vector<std::byte>> bufs(go.nodes, std::vector<std::byte>(1 << 20));
        for (size_t i = 0; i < bufs[root].size(); ++i) bufs[root][i] = std::byte(static_cast<uint8_t>(i * 131 + root));
        std::vector<lanecast::Completion> done;
        for (lanecast::Rank r = 0; r < go.nodes; ++r) done.push_back(group->member(r).broadcast(root, bufs[r]));
        for (lanecast::Rank r = 0; r < go.nodes; ++r) {
          const lanecast::Status s = done[r].wait();
          if (!s.ok()) {
            std::fprintf(stderr, "%s from %u: rank %u: %s\n", algo, root, r, s.message.c_str());
            return 1;
          }
          if (std::memcmp(bufs[r].data(), bufs[root].data(), bufs[r].size()) != 0) {
            std::fprintf(stderr, "%s from %u: rank %u holds other bytes than the root's\n", algo, root, r);
            return 1;
          }
        }
        std::printf("%s from rank %u: 1 MiB on all %u members, equal to the root's\n", algo, root, go.nodes);
      }
    }
    std::printf("ok\n");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "broadcast_example: %s\n", e.what());
    return 1;
  }
}
