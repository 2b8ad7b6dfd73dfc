// A capture file read for replay (libpcap: pcap and pcapng, microsecond and
// nanosecond time stamps, an optional BPF filter): every packet's UDP payload
// - or, with whole_frame, the packet as captured - and its time stamp, in
// file order, held in memory so replay can schedule against absolute time.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace lanecast::replay {

struct Packet {
  uint64_t ts_ns;     // the capture's time stamp
  uint64_t offset;    // of its bytes in PcapSource::bytes
  uint32_t len;
};

struct PcapSource {
  std::vector<Packet> packets;
  std::vector<std::byte> bytes;
  std::string link;          // the capture's link type, by name
  bool nanosecond = false;   // the file's time stamps were nanoseconds
  bool pcapng = false;
  // Packets of the file that are not messages, by reason.
  uint64_t read = 0, not_udp = 0, fragments = 0, truncated = 0, filtered_out = 0;
  std::span<const std::byte> payload(size_t i) const {
    return {bytes.data() + packets[i].offset, packets[i].len};
  }
  uint64_t total_bytes() const { return bytes.size(); }
};

// Throws std::runtime_error naming the file and what is wrong (cannot open,
// not a capture, a link type it cannot take apart, a filter that does not
// compile). max_message: larger payloads are refused with the packet's number.
PcapSource load_pcap(const std::string& path, bool whole_frame, const std::string& filter, uint64_t max_message);

// The UDP payload of a frame of link type `dlt` (DLT_* numbers), or an
// empty span with *why set: "not udp", "fragment", "truncated".
std::span<const std::byte> udp_payload(int dlt, std::span<const std::byte> frame, uint32_t wire_len, const char** why);

}  // namespace lanecast::replay
