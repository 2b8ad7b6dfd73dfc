// An application that subscribes through the host's `lanecast daemon`
// (client library only), and checks what it gets: from every member's
// daemon and each publisher id, messages numbered 0, 1, 2, ... in order,
// each with the bytes stream_publisher made.
//
//   stream_subscriber --dir DIR --members 3 --ids 1,2 --count 100000 [--timeout 60] [--name NAME]
//                     [--ring BYTES] [--silent-after MS] [--daemon-user USER]
//
// Exits 0 once it holds `count` messages from each (member, id) of the
// lists, every one in order and intact; 1 on a gap, a duplicate, a bad
// message, eviction, the daemon going away or the timeout (saying which).
// Messages not in stream_publisher's format (another application's) are
// counted and passed over; one in that format with wrong bytes is an error.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lanecast/client.h"
#include "apps/examples/stream_message.h"

int main(int argc, char** argv) {
  lanecast::daemon::ClientOptions o;
  o.role = lanecast::daemon::Role::Subscriber;
  uint32_t members = 1;
  std::vector<uint32_t> ids{1};
  uint64_t count = 1000;
  double timeout = 60;
  std::string name = "subscriber";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--dir") o.dir = v;
    else if (k == "--daemon-user") o.daemon_user = v;
    else if (k == "--members") members = static_cast<uint32_t>(std::strtoul(v.c_str(), nullptr, 10));
    else if (k == "--count") count = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--timeout") timeout = std::strtod(v.c_str(), nullptr);
    else if (k == "--name") name = v;
    else if (k == "--ring") o.delivery_bytes = std::strtoull(v.c_str(), nullptr, 10);
    else if (k == "--silent-after")
      o.daemon_silent_after = std::chrono::milliseconds(std::strtoull(v.c_str(), nullptr, 10));
    else if (k == "--ids") {
      ids.clear();
      for (size_t at = 0; at <= v.size();) {
        const size_t comma = v.find(',', at);
        ids.push_back(static_cast<uint32_t>(std::strtoul(v.substr(at, comma - at).c_str(), nullptr, 10)));
        if (comma == std::string::npos) break;
        at = comma + 1;
      }
    } else {
      std::fprintf(stderr, "usage: stream_subscriber --dir DIR --members N --ids A,B --count N [--timeout S] [--name NAME] "
                           "[--ring BYTES] [--silent-after MS] [--daemon-user USER]\n");
      return 2;
    }
  }
  o.name = name;
  try {
    auto c = lanecast::daemon::Client::connect(o);
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> next;  // (member, id) -> the number due
    uint64_t complete = 0, other = 0, foreign = 0;
    const uint64_t want = uint64_t{members} * ids.size();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    lanecast::daemon::Message m;
    while (complete < want) {
      if (std::chrono::steady_clock::now() > deadline) {
        std::fprintf(stderr, "%s: timeout with %llu of %llu (member, publisher) pairs complete\n", name.c_str(),
                     static_cast<unsigned long long>(complete), static_cast<unsigned long long>(want));
        for (const auto& [k, n] : next)
          std::fprintf(stderr, "  member %u id %u: %llu\n", k.first, k.second, static_cast<unsigned long long>(n));
        return 1;
      }
      if (!c->next_for(m, std::chrono::milliseconds(100))) {
        if (const auto why = c->closed(); why != lanecast::daemon::Closed::No) {
          std::fprintf(stderr, "%s: %s, with %llu of %llu (member, publisher) pairs complete\n", name.c_str(),
                       lanecast::daemon::describe(why), static_cast<unsigned long long>(complete),
                       static_cast<unsigned long long>(want));
          return 1;
        }
        continue;
      }
      uint32_t id;
      uint64_t seq;
      if (!lanecast::examples::is_example(m.data)) {
        ++foreign;
        continue;
      }
      if (!lanecast::examples::read_message(m.data, &id, &seq)) {
        std::fprintf(stderr, "%s: message %llu of member %u is not intact\n", name.c_str(),
                     static_cast<unsigned long long>(m.seq), m.publisher);
        return 1;
      }
      uint64_t& due = next[{m.publisher, id}];
      if (seq != due) {
        std::fprintf(stderr, "%s: member %u id %u: message %llu where %llu was due\n", name.c_str(), m.publisher, id,
                     static_cast<unsigned long long>(seq), static_cast<unsigned long long>(due));
        return 1;
      }
      ++due;
      const bool listed = m.publisher < members && std::find(ids.begin(), ids.end(), id) != ids.end();
      if (!listed) ++other;
      else if (due == count) ++complete;
    }
    std::printf("%s: %llu messages from each of %u members x %zu publishers, in order and intact (%llu others, "
                "%llu in other formats, %llu records skipped)\n",
                name.c_str(), static_cast<unsigned long long>(count), members, ids.size(),
                static_cast<unsigned long long>(other), static_cast<unsigned long long>(foreign),
                static_cast<unsigned long long>(c->skipped()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stream_subscriber: %s\n", e.what());
    return 1;
  }
}
