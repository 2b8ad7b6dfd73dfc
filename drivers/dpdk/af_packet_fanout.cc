// Unique PACKET_FANOUT groups for DPDK's af_packet PMD.
//
// The PMD (DPDK 22.11, drivers/net/af_packet) puts each of a port's sockets
// into a fanout group whose id it derives from the process and the
// interface: (getpid() ^ ifindex) & 0xffff. Fanout ids are shared by every
// process of a network namespace, and the kernel refuses (EINVAL) to put a
// socket of another interface into an existing group. Two processes started
// one after the other on neighbouring interfaces - two engines on one host,
// pid p on ifindex i and pid p+1 on ifindex i+1 - often derive the same id:
// the second fails to open its port ("could not set PACKET_FANOUT"). Worse,
// two processes on one interface whose ids collide would share one group
// and split each other's frames.
//
// So every PACKET_FANOUT a socket of this process asks for goes through
// here: the first socket of a group asks the kernel for an id no group of
// the namespace uses (PACKET_FANOUT_FLAG_UNIQUEID, Linux 4.4), reads it back,
// and the port's other sockets (one per queue pair) join that id. Every
// other setsockopt passes through unchanged. One process may open several
// ports on one interface (a group per MPI communicator, each with its own
// port): they ask for the same id, and each must get a group of its own -
// joined, they would split the interface's frames between them instead of
// each seeing every frame. af_packet_new_port() (af_packet_fanout.h), called
// before each port's probe, forgets the ids of the ports before it. The
// sockets that asked are remembered for the port too (port_sockets()): the
// port puts its receive filter on them, which the PMD has no devarg for.
//
// How the PMD's call reaches this function: with DPDK linked statically
// (meson -Ddpdk_link=static, the default) the link wraps setsockopt
// (-Wl,--wrap=setsockopt), so the PMD's objects call __wrap_setsockopt.
// With Debian's shared DPDK the PMD is a plugin linked against libc, which
// this does not reach: docs/groups.md says so.
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

#include "drivers/dpdk/af_packet_fanout.h"

namespace {

int real_setsockopt(int fd, int level, int name, const void* value, socklen_t len) {
  return static_cast<int>(syscall(SYS_setsockopt, fd, level, name, value, len));
}

// The ids the PMD asked for and the ones the kernel gave: a port's queue
// pairs ask for one id, and must share the group the first one made. Only
// the port being opened is remembered (af_packet_new_port()).
struct FanoutIds {
  static constexpr int kMax = 64;
  std::mutex lock;
  uint16_t asked[kMax] = {};
  uint16_t given[kMax] = {};
  int count = 0;
  int sockets[kMax] = {};  // every socket that asked, of the port being opened
  int socket_count = 0;
};
FanoutIds& fanout_ids() {
  static FanoutIds ids;
  return ids;
}

int unique_fanout(int fd, uint32_t arg) {
  const auto asked = static_cast<uint16_t>(arg & 0xffff);
  const uint32_t type_flags = arg >> 16;
  FanoutIds& ids = fanout_ids();
  std::lock_guard<std::mutex> hold(ids.lock);
  if (ids.socket_count < FanoutIds::kMax) ids.sockets[ids.socket_count++] = fd;
  for (int i = 0; i < ids.count; ++i) {
    if (ids.asked[i] != asked) continue;
    const uint32_t join = (type_flags << 16) | ids.given[i];
    return real_setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &join, sizeof join);
  }
  const uint32_t fresh = (type_flags | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
  if (real_setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &fresh, sizeof fresh) != 0) {
    if (errno != EINVAL) return -1;
    return real_setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg);  // a kernel without unique ids
  }
  uint32_t got = 0;
  socklen_t len = sizeof got;
  if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &got, &len) == 0 && ids.count < FanoutIds::kMax) {
    ids.asked[ids.count] = asked;
    ids.given[ids.count] = static_cast<uint16_t>(got & 0xffff);
    ++ids.count;
  }
  return 0;
}

}  // namespace

namespace lanecast::drivers::af_packet {

void new_port() {
  FanoutIds& ids = fanout_ids();
  std::lock_guard<std::mutex> hold(ids.lock);
  ids.count = 0;
  ids.socket_count = 0;
}

std::vector<int> port_sockets() {
  FanoutIds& ids = fanout_ids();
  std::lock_guard<std::mutex> hold(ids.lock);
  return std::vector<int>(ids.sockets, ids.sockets + ids.socket_count);
}

}  // namespace lanecast::drivers::af_packet

extern "C" int __wrap_setsockopt(int fd, int level, int name, const void* value, socklen_t len) {
  if (level == SOL_PACKET && name == PACKET_FANOUT && value != nullptr && len == sizeof(uint32_t)) {
    uint32_t arg;
    __builtin_memcpy(&arg, value, sizeof arg);
    return unique_fanout(fd, arg);
  }
  return real_setsockopt(fd, level, name, value, len);
}
