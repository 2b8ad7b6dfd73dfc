// The daemon's client library as an installed application links it: with
// no daemon at DIR, connect() must refuse, saying so. Exits 0 when it does.
#include <lanecast/client.h>

#include <cstdio>
#include <exception>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR   (a directory where no daemon runs)\n", argv[0]);
    return 2;
  }
  lanecast::daemon::ClientOptions o;
  o.dir = argv[1];
  o.role = lanecast::daemon::Role::Subscriber;
  try {
    auto c = lanecast::daemon::Client::connect(o);
    std::fprintf(stderr, "client_example: connected to a daemon at %s that should not be there\n", argv[1]);
    return 1;
  } catch (const std::exception& e) {
    const std::string why = e.what();
    std::printf("refused as it should be: %s\n", why.c_str());
    return why.find("no lanecast daemon at") != std::string::npos ? 0 : 1;
  }
}
