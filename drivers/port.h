// The port interface: what the engine's poll loop needs of a link to the
// network. A port has one or more lanes (queues); frames are DPDK mbufs.
//
// The peer address is opaque bytes (a MAC for Ethernet, a LID/QPN/GID for an
// InfiniBand UD queue pair, after eRPC's generic transport): the engine asks the
// port to write the link header for a destination into the headroom of the
// frame's first mbuf, to tell how long that header is on received frames, and
// whether a received frame really comes from the peer it names.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

struct rte_mbuf;
struct rte_mempool;

namespace lanecast::drivers {

class Waker;

struct PeerAddress {
  // A MAC is 6; a UD endpoint 23 (GID, LID, Q_Key, lanes) + 3 per lane's
  // QPN, up to 35 (drivers/verbs/ud_address.h).
  static constexpr uint8_t kMaxBytes = 40;
  uint8_t len = 0;
  uint8_t bytes[kMaxBytes] = {};

  bool operator==(const PeerAddress& o) const {
    return len == o.len && std::memcmp(bytes, o.bytes, len) == 0;
  }
};

// "02:00:00:00:00:01" (hex bytes joined by ':'), "-" when empty: for messages.
std::string format_address(const PeerAddress& a);

// 16 random bytes that name one incarnation of a group on the wire (drawn
// from the kernel's CSPRNG, engine/group/address_seed.h). A port turns them into its
// kind of group address: a locally administered multicast MAC on Ethernet, a
// multicast GID on InfiniBand. Two jobs on one network then share a group
// address only by a 2^-46 accident (Ethernet), not because both are "group 1".
struct GroupAddressSeed {
  uint8_t bytes[16] = {};

  bool operator==(const GroupAddressSeed& o) const { return std::memcmp(bytes, o.bytes, sizeof bytes) == 0; }
};

// What a port can do, read once at set-up. The engine adapts to each answer
// visibly (a counter, a line in `bench`), never silently.
struct PortCaps {
  // Transmits a frame made of several mbufs (a header mbuf chained to a shared
  // payload mbuf): the zero-copy forward. Without it, frames are flattened
  // into one buffer (a counted copy).
  bool tx_chained = true;
  // Can join group addresses (join_group), and the network behind it copies
  // a frame sent to one to every port that joined it: one frame on the wire
  // per multicast. Without it (or when a join fails), a multicast is emulated
  // by one datagram per member.
  bool multicast = false;
  // Arrivals wake a sleeping polling core (attach_waker): idle cores can sleep
  // until a frame comes instead of napping on a timer.
  bool rx_wakeup = false;
};

// What a fault decorator (drivers/fault/) did to the frames of one way
// (received or sent), by kind; zero for every other port.
struct FaultStats {
  uint64_t lost = 0;               // lost at random (Bernoulli)
  uint64_t burst_lost = 0;         // lost in the Gilbert-Elliott model's bursts
  uint64_t reordered = 0;          // held back and let out after later frames
  uint64_t duplicated = 0;         // a second copy made (its own mbuf)
  uint64_t corrupted_header = 0;   // a byte flipped in the protocol's header
  uint64_t corrupted_payload = 0;  // a byte flipped past it
  uint64_t delayed = 0;            // held for a delay (and jitter)
  uint64_t no_buffer = 0;          // a duplicate or a corrupted copy not made: its pool was empty
};

// Counters a port keeps itself (the PMD's, or the ring port's own).
struct PortStats {
  uint64_t rx_frames = 0, tx_frames = 0;
  uint64_t tx_full = 0;       // frames tx_burst did not take (the caller kept them)
  uint64_t rx_missed = 0;     // the device or kernel ring had no room
  uint64_t rx_errors = 0, tx_errors = 0;
  uint64_t rx_no_buffer = 0;  // the rx mempool was empty
  uint64_t rx_lost_emulated = 0;  // multicast frames a loss decorator dropped on purpose
  FaultStats rx_faults, tx_faults;  // faults injected on purpose (drivers/fault/)
};

class Port {
 public:
  virtual ~Port() = default;

  // Datapath. Burst functions return counts, DPDK-style. tx_burst takes
  // ownership of the first `return value` mbufs only; the caller keeps the rest.
  // Neither blocks.
  virtual uint16_t rx_burst(uint16_t lane, rte_mbuf** frames, uint16_t max) = 0;
  virtual uint16_t tx_burst(uint16_t lane, rte_mbuf** frames, uint16_t count) = 0;

  // Control.
  virtual uint16_t lanes() const = 0;
  // Largest frame the port carries, link header included.
  virtual uint32_t max_frame_bytes() const = 0;
  virtual PeerAddress address() const = 0;
  virtual std::string name() const = 0;
  virtual PortCaps caps() const = 0;
  virtual PortStats stats() const = 0;

  // Link framing. write_link_header() writes link_header_bytes() bytes at `at`
  // addressed from this port to `dst`.
  virtual uint16_t link_header_bytes() const = 0;
  virtual void write_link_header(uint8_t* at, const PeerAddress& dst) const = 0;
  // Whether a received frame's link header is addressed to this port (or to a
  // group it joined); a frame for someone else is dropped and counted.
  virtual bool accepts(const uint8_t* link_header) const = 0;
  // Whether a received frame's link header says it was sent by `peer`: a frame
  // whose lanecast header names a rank must come from that rank's address.
  virtual bool is_from(const uint8_t* link_header, const PeerAddress& peer) const = 0;
  // accepts() over a received burst, one call per burst rather than a
  // virtual call per frame (the receive path asks it of every frame): bit i
  // of the result is set when frame i is addressed here; n <= kMaxScreened.
  // The default asks accepts() frame by frame; a port whose check is inline
  // loops over it itself, and decorators pass the burst on.
  static constexpr uint16_t kMaxScreened = 64;
  virtual uint64_t accepted(const uint8_t* const* link_headers, uint16_t n) const {
    uint64_t ok = 0;
    for (uint16_t i = 0; i < n; ++i) ok |= uint64_t{accepts(link_headers[i])} << i;
    return ok;
  }
  // The address a received frame was sent from (bootstrap: a member learns
  // its peers' addresses from their hellos).
  virtual PeerAddress source_of(const uint8_t* link_header) const = 0;

  // Framing may differ by direction: a UD queue pair sends no link header
  // (the destination travels in the work request; the port keeps a handle to
  // it in the frame's headroom) but receives every datagram behind a 40-byte
  // GRH. Ethernet ports: the same 14 bytes both ways.
  virtual uint16_t rx_link_header_bytes() const { return link_header_bytes(); }
  // The trailing bytes of the link header (sent and received alike) that a
  // frame's seal covers (engine/auth/): what names the destination, the same
  // bytes as the sender wrote them and as the receiver's port presents them,
  // so a frame readdressed to another member does not open there. Ethernet:
  // the whole header (the MACs); verbs: the destination's GID and QPN.
  virtual uint16_t sealed_link_bytes() const { return link_header_bytes(); }

  // Set-up, before the first frame to them: the peers this port will send
  // to (a verbs port makes an address handle for each; Ethernet needs
  // nothing). Returns "" or why it cannot reach one. May be called again
  // with more peers; never while another core transmits on this port.
  virtual std::string learn_peers(const PeerAddress* peers, size_t count) {
    (void)peers, (void)count;
    return "";
  }
  // Set-up: frames whose buffers come from `pool` will be handed to
  // tx_burst (a verbs port registers the pool's memory with the device, so
  // the adapter reads payload where it lies). "" or why not; a pool given
  // twice is registered once.
  virtual std::string register_pool(rte_mempool* pool) {
    (void)pool;
    return "";
  }

  // Multicast membership (control path; caps().multicast). group_address()
  // turns a group's address seed into the address its multicasts on `lane` are sent
  // to. join_group() makes frames sent to `group` reach `lane` of this port -
  // the NIC's multicast filter, the kernel interface's multicast list, or
  // ibv_attach_mcast on an InfiniBand UD queue pair - and returns "" or why it
  // could not (the engine then emulates, visibly). leave_group() undoes one
  // join. A port leaves what it joined when it is destroyed; what lives in
  // the kernel is tied to a descriptor, so the kernel undoes it when the
  // process dies however it dies.
  virtual PeerAddress group_address(const GroupAddressSeed& seed, uint16_t lane) const {
    (void)seed, (void)lane;
    return PeerAddress{};
  }
  virtual std::string join_group(uint16_t lane, const PeerAddress& group) {
    (void)lane, (void)group;
    return name() + " cannot join multicast groups";
  }
  virtual void leave_group(uint16_t lane, const PeerAddress& group) { (void)lane, (void)group; }

  // The discovery bootstrap's hellos (engine/bootstrap/wire_discovery.cc):
  // where lane `lane` sends and hears them for the group `group_id`. An
  // Ethernet port leaves `to` empty - the link's broadcast address, nothing
  // to join. A port without a broadcast address (verbs) joins a multicast
  // group named by the id and sets `to` to it. "" or why not;
  // leave_hellos() undoes a join.
  virtual std::string join_hellos(uint32_t group_id, uint16_t lane, PeerAddress* to) {
    (void)group_id, (void)lane;
    *to = PeerAddress{};
    return "";
  }
  virtual void leave_hellos(uint32_t group_id, uint16_t lane) { (void)group_id, (void)lane; }

  // A port that holds received frames back (drivers/delay/) says when the
  // next one is due, on the clock it was given (the engine's): its polling
  // core must not sleep past that. UINT64_MAX: nothing held.
  virtual uint64_t held_until_ns() const { return UINT64_MAX; }

  // Sleeping until arrival (caps().rx_wakeup). attach_waker() is called on the
  // control path with the waker of the core that polls this port;
  // arm_wakeup() just before that core sleeps and disarm_wakeup() when it woke.
  virtual void attach_waker(Waker* w) { (void)w; }
  virtual void detach_waker() {}
  virtual void arm_wakeup() {}
  virtual void disarm_wakeup() {}
};

}  // namespace lanecast::drivers
