#include "ipc/fd_passing.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lanecast::ipc {

bool send_with_fd(int sock, const void* buf, size_t n, int fd) {
  iovec iov{const_cast<void*>(buf), n};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    m.msg_control = control;
    m.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  return ::sendmsg(sock, &m, MSG_NOSIGNAL | MSG_DONTWAIT) == static_cast<ssize_t>(n);
}

ssize_t recv_with_fd(int sock, void* buf, size_t n, int* fd) {
  *fd = -1;
  iovec iov{buf, n};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  // Room for a few descriptors, so that extras a peer attached arrive here
  // and are closed rather than counted on being dropped.
  alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))] = {};
  m.msg_control = control;
  m.msg_controllen = sizeof control;
  const ssize_t got = ::recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
  if (got < 0) return got;
  for (cmsghdr* c = CMSG_FIRSTHDR(&m); c != nullptr; c = CMSG_NXTHDR(&m, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      if (*fd < 0) *fd = f;
      else ::close(f);
    }
  }
  if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
    errno = EMSGSIZE;
    return -1;
  }
  return got;
}

}  // namespace lanecast::ipc
