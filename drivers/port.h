// The port interface: what the engine's poll loop needs of a link to the
// network. A port has one or more lanes (queues); frames are DPDK mbufs.
//
// The peer address is opaque bytes (a MAC for Ethernet, a LID/QPN/GID for an
// InfiniBand UD queue pair, after eRPC's generic transport): the engine asks the
// port to write the link header for a destination into the headroom of the
// frame's first mbuf, and to tell how long that header is on received frames.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

struct rte_mbuf;

namespace lanecast::drivers {

struct PeerAddress {
  static constexpr uint8_t kMaxBytes = 24;
  uint8_t len = 0;
  uint8_t bytes[kMaxBytes] = {};

  bool operator==(const PeerAddress& o) const {
    return len == o.len && std::memcmp(bytes, o.bytes, len) == 0;
  }
};

struct PortStats {
  uint64_t rx_frames = 0;
  uint64_t tx_frames = 0;
  uint64_t tx_full = 0;  // frames the queue did not take (the caller keeps them)
};

class Port {
 public:
  virtual ~Port() = default;

  // Datapath. Burst functions return counts, DPDK-style. tx_burst takes
  // ownership of the first `return value` mbufs only; the caller keeps the rest.
  virtual uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) = 0;
  virtual uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) = 0;

  // Control.
  virtual uint16_t lanes() const = 0;
  // Largest frame the port carries, link header included.
  virtual uint32_t max_frame_bytes() const = 0;
  virtual PeerAddress address() const = 0;
  virtual std::string name() const = 0;

  // Link framing. write_link_header() writes link_header_bytes() bytes at `at`
  // addressed from this port to `dst`.
  virtual uint16_t link_header_bytes() const = 0;
  virtual void write_link_header(uint8_t* at, const PeerAddress& dst) const = 0;
  // Whether a received frame's link header is addressed to this port (or to a
  // group it joined); a frame for someone else is dropped and counted.
  virtual bool accepts(const uint8_t* link_header) const = 0;
};

}  // namespace lanecast::drivers
