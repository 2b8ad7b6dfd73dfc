// `lanecast key`: makes a group key file, or says which key a file holds.
// A new key file is created, never overwritten, and never through a
// symbolic link (O_CREAT | O_EXCL | O_NOFOLLOW), readable by its owner
// alone (0600) from the moment it exists; the key is never printed.
#include "apps/key/key_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "apps/common/options.h"
#include "lanecast/lanecast.h"

namespace lanecast::apps {
namespace {

const char* kKeyUsage =
    "usage: lanecast key --new FILE | --fingerprint FILE\n"
    "\n"
    "A group key (docs/security.md) is 32 random bytes every member holds, in a file of\n"
    "64 hex digits that only its owner may read. With one (the group file's key_file, or\n"
    "LANECAST_GROUP_KEY_FILE) every frame of the group is sealed, and frames that do not\n"
    "open are dropped and counted. --new writes a fresh key to FILE, which must not exist\n"
    "(mode 0600); copy it to every member's host over a channel you trust.\n"
    "--fingerprint prints the 16 hex digits that tell keys apart (the bench, the daemon and\n"
    "a failed bootstrap print them) without saying anything of the key.\n"
    "\n";

void write_new(const std::string& path) {
  const std::string text = AuthKey::generate()->hex() + "\n";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw UsageError("--new " + path + ": " + std::strerror(errno) +
                     (errno == EEXIST ? " (a key file is never overwritten)" : ""));
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  const int why = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    throw std::runtime_error("--new " + path + ": " + std::strerror(why));
  }
  std::printf("lanecast key: a new group key in %s (fingerprint %s)\n", path.c_str(),
              AuthKey::from_file(path)->fingerprint().c_str());
}

}  // namespace

int key_main(int argc, char** argv) {
  std::string fresh, print;
  OptionTable t;
  t.add({"new", "FILE", "", "write a fresh key to FILE (which must not exist)",
         [&](std::string_view v) { fresh = std::string(v); }});
  t.add({"fingerprint", "FILE", "", "print the fingerprint of the key in FILE",
         [&](std::string_view v) { print = std::string(v); }});
  if (t.parse(argc, argv, 1)) {
    std::fputs(kKeyUsage, stdout);
    std::fputs(t.help().c_str(), stdout);
    return 0;
  }
  if (fresh.empty() == print.empty()) throw UsageError("give one of --new FILE and --fingerprint FILE");
  if (!fresh.empty()) write_new(fresh);
  else std::printf("%s\n", AuthKey::from_file(print)->fingerprint().c_str());
  return 0;
}

}  // namespace lanecast::apps
