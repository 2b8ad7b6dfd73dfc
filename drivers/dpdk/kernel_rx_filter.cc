#include "drivers/dpdk/kernel_rx_filter.h"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace lanecast::drivers {
namespace {

constexpr size_t kMaxAddresses = 48;  // every jump within 255 instructions

sock_filter stmt(uint16_t code, uint32_t k) { return sock_filter{code, 0, 0, k}; }
sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) { return sock_filter{code, jt, jf, k}; }

}  // namespace

std::vector<sock_filter> rx_filter_program(const std::vector<PeerAddress>& accept, uint16_t ethertype,
                                           uint32_t keep_bytes) {
  if (accept.size() > kMaxAddresses)
    throw std::length_error("kernel rx filter: " + std::to_string(accept.size()) + " addresses, at most " +
                            std::to_string(kMaxAddresses));
  // Layout (n addresses, 4 instructions each):
  //   0          ldh [12]                 EtherType
  //   1          jeq ethertype, 2, drop
  //   2+4i       ld [0]                   destination bytes 0-3
  //   3+4i       jeq hi_i, +0, next
  //   4+4i       ldh [4]                  destination bytes 4-5
  //   5+4i       jeq lo_i, keep, next
  //   2+4n       ret 0                    drop
  //   3+4n       ret keep_bytes           keep
  // Classic BPF loads are big-endian: hi_i and lo_i are the address's bytes
  // read as a network-order word and half-word.
  std::vector<sock_filter> p;
  const size_t n = accept.size();
  const size_t drop = 2 + 4 * n, keep = drop + 1;
  p.push_back(stmt(BPF_LD | BPF_H | BPF_ABS, 12));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, ethertype, 0, static_cast<uint8_t>(drop - 2)));
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* a = accept[i].bytes;
    if (accept[i].len != 6) throw std::invalid_argument("kernel rx filter: an address of 6 bytes");
    const uint32_t hi = uint32_t{a[0]} << 24 | uint32_t{a[1]} << 16 | uint32_t{a[2]} << 8 | a[3];
    const uint32_t lo = uint32_t{a[4]} << 8 | a[5];
    const size_t at = 2 + 4 * i, next = at + 4;
    p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, 0));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, hi, 0, static_cast<uint8_t>(next - (at + 2))));
    p.push_back(stmt(BPF_LD | BPF_H | BPF_ABS, 4));
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, lo, static_cast<uint8_t>(keep - (at + 4)),
                     static_cast<uint8_t>(next - (at + 4))));
  }
  p.push_back(stmt(BPF_RET | BPF_K, 0));
  p.push_back(stmt(BPF_RET | BPF_K, keep_bytes));
  return p;
}

std::string attach_rx_filter(int fd, const std::vector<sock_filter>& program) {
  sock_fprog prog{static_cast<unsigned short>(program.size()), const_cast<sock_filter*>(program.data())};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog) == 0) return "";
  return std::string("SO_ATTACH_FILTER: ") + std::strerror(errno);
}

}  // namespace lanecast::drivers
