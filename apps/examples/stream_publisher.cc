// An application that publishes through the host's `lanecast daemon`
// without linking DPDK or the engine: only the client library
// (include/lanecast/client.h) and shared memory.
//
//   stream_publisher --dir /run/lanecast/feed-r0 --id 1 --count 100000 [--size 64] [--rate 50000]
//                    [--name NAME] [--ring BYTES] [--daemon-user USER]
//
// Publishes `count` messages of `size` bytes (numbered, checkable by
// stream_subscriber), at `rate` per second (0: as fast as the daemon takes
// them), and says how long it took - or why it could not (the daemon
// refused it, went away, or closed its stream).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "lanecast/client.h"
#include "apps/examples/stream_message.h"

int main(int argc, char** argv) {
  lanecast::daemon::ClientOptions o;
  o.role = lanecast::daemon::Role::Publisher;
  uint32_t id = 1;
  uint64_t count = 1000, size = 64;
  double rate = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") o.dir = v;
    else if (k == "--daemon-user") o.daemon_user = v;
    else if (k == "--id") id = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    else if (k == "--count") count = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--size") size = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--rate") rate = std::strtod(v.c_str(), nullptr);
    else if (k == "--name") o.name = v;
    else if (k == "--ring") o.publish_bytes = std::strtoull(v.c_str(), nullptr, 10);
    else {
      std::fprintf(stderr, "usage: stream_publisher --dir DIR --id N --count N [--size B] [--rate PER_S] [--name NAME] "
                           "[--ring BYTES] [--daemon-user USER]\n");
      return 2;
    }
  }
  if (o.dir.empty()) {
    std::fprintf(stderr, "stream_publisher: --dir DIR (the daemon's) is required\n");
    return 2;
  }
  if (o.name.empty()) o.name = "publisher-" + std::to_string(id);
  try {
    auto c = lanecast::daemon::Client::connect(o);
    std::vector<std::byte> m;
    const auto t0 = std::chrono::steady_clock::now();
    for (uint64_t s = 0; s < count; ++s) {
      if (rate > 0) std::this_thread::sleep_until(t0 + std::chrono::duration<double>(static_cast<double>(s) / rate));
      lanecast::examples::make_message(m, id, s, size);
      const auto r = c->publish_for(m, std::chrono::seconds(30));
      if (r != lanecast::daemon::Publish::Ok) {
        std::fprintf(stderr, "stream_publisher %u: message %llu: %s\n", id, static_cast<unsigned long long>(s),
                     r == lanecast::daemon::Publish::Closed     ? lanecast::daemon::describe(c->closed())
                     : r == lanecast::daemon::Publish::TooLarge ? "too large for the daemon's stream"
                                                                : "the daemon took nothing for 30 s");
        return 1;
      }
    }
    // Wait until the daemon took everything from the ring (or went).
    for (int i = 0; i < 3000 && c->published() < count && c->closed() == lanecast::daemon::Closed::No; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("stream_publisher %u: %llu messages of %llu bytes to rank %u's daemon in %.3f s (%.0f per s); "
                "the daemon took %llu\n",
                id, static_cast<unsigned long long>(count), static_cast<unsigned long long>(size), c->rank(), s,
                static_cast<double>(count) / s, static_cast<unsigned long long>(c->published()));
    return c->published() == count ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_publisher: %s\n", e.what());
    return 1;
  }
}
