// Delivered messages written as a pcap file with nanosecond time stamps
// (tcpdump, Wireshark and `lanecast replay` read it):
//
//   udp  each message as the payload of an Ethernet / IPv4 / UDP packet
//        from 10.255.P.Q (publisher rank P*256+Q) port 7000+stream to
//        239.255.0.1 port 7000+stream, so the payloads a replay of the
//        original capture delivered come out of `replay --pcap` again;
//        messages over 65507 bytes (no UDP datagram holds them) keep the
//        headers, with IP and UDP lengths 0 (as captures of segmentation
//        offload have them: Wireshark and `replay --pcap` take the rest
//        of the frame).
//   raw  each message as the frame itself (messages that were whole frames:
//        replay --whole-frame).
// A packet over 262144 bytes (the snap length: libpcap reads no longer one
// back) is written cut to it, its full length kept: readers count it
// truncated.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

struct pcap;
struct pcap_dumper;

namespace lanecast::replay {

enum class RecordLink : uint8_t { Udp, Raw };
RecordLink parse_record_link(const std::string& v);  // throws std::invalid_argument

class PcapWriter {
 public:
  // Throws std::runtime_error when the file cannot be written.
  PcapWriter(const std::string& path, RecordLink link);
  ~PcapWriter();
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  // realtime_ns: the time stamp (ns since the epoch).
  void write(uint64_t realtime_ns, uint32_t publisher, uint16_t stream, std::span<const std::byte> message);
  // Throws std::runtime_error when something could not be written.
  void flush();
  void check() const;
  uint64_t written() const { return written_; }

 private:
  pcap* dead_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  RecordLink link_;
  uint64_t written_ = 0;
  std::string path_;
  std::vector<uint8_t> frame_;  // the frame being written (kept: no allocation per message)
};

// CLOCK_REALTIME minus CLOCK_MONOTONIC now: what turns a stream's time
// (monotonic) into a capture's (since the epoch).
int64_t realtime_offset_ns();

}  // namespace lanecast::replay
