// One message on a SOCK_SEQPACKET Unix socket with at most one descriptor
// attached (SCM_RIGHTS): how the daemon hands an application its memfd.
#pragma once

#include <cstddef>
#include <sys/types.h>

namespace lanecast::ipc {

// Sends `n` bytes and, if fd >= 0, the descriptor; never blocks, never
// raises SIGPIPE. True when the whole message went.
bool send_with_fd(int sock, const void* buf, size_t n, int fd);
// Receives one message into `buf`: its length (or -1, errno set), and the
// attached descriptor in *fd (close-on-exec), or -1 if none came. Anything
// more that was attached is closed, and a message longer than `n` is an
// error (EMSGSIZE), never taken in part.
ssize_t recv_with_fd(int sock, void* buf, size_t n, int* fd);

}  // namespace lanecast::ipc
