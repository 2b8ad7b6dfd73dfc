// The BPF filesystem at /sys/fs/bpf, where libxdp (under DPDK's af_xdp PMD)
// pins the XDP dispatcher it attaches to an interface.
#pragma once

#include <string>

namespace lanecast::apps::testbed {

// Mounts bpffs at /sys/fs/bpf unless one is there; returns what it did
// ("bpffs at /sys/fs/bpf: mounted" or "...: there already"). Throws
// std::runtime_error saying why it cannot.
std::string mount_bpffs_if_missing();

}  // namespace lanecast::apps::testbed
