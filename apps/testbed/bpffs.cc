#include "apps/testbed/bpffs.h"

#include <sys/mount.h>
#include <sys/statfs.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanecast::apps::testbed {
namespace {

constexpr const char* kBpffs = "/sys/fs/bpf";
constexpr long kBpfFsMagic = 0xcafe4a11;  // linux/magic.h BPF_FS_MAGIC

}  // namespace

std::string mount_bpffs_if_missing() {
  struct statfs st;
  if (::statfs(kBpffs, &st) != 0)
    throw std::runtime_error(std::string(kBpffs) + ": " + std::strerror(errno) +
                             " (this kernel has no BPF filesystem to mount there)");
  if (static_cast<long>(st.f_type) == kBpfFsMagic) return std::string("bpffs at ") + kBpffs + ": there already";
  if (::mount("bpf", kBpffs, "bpf", 0, nullptr) != 0)
    throw std::runtime_error(std::string("cannot mount bpffs at ") + kBpffs + ": " + std::strerror(errno));
  return std::string("bpffs at ") + kBpffs + ": mounted";
}

}  // namespace lanecast::apps::testbed
