#include "apps/replay/pcap_writer.h"

#include <pcap/pcap.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace lanecast::replay {

RecordLink parse_record_link(const std::string& v) {
  if (v == "udp") return RecordLink::Udp;
  if (v == "raw") return RecordLink::Raw;
  throw std::invalid_argument("--link: udp or raw, not '" + v + "'");
}

int64_t realtime_offset_ns() {
  timespec r{}, m{};
  clock_gettime(CLOCK_REALTIME, &r);
  clock_gettime(CLOCK_MONOTONIC, &m);
  return (static_cast<int64_t>(r.tv_sec) - static_cast<int64_t>(m.tv_sec)) * 1'000'000'000 +
         (static_cast<int64_t>(r.tv_nsec) - static_cast<int64_t>(m.tv_nsec));
}

namespace {
// The largest packet libpcap reads back from an Ethernet capture: longer ones
// are written cut to it, their full length kept (as a capture tool with this
// snap length writes them).
constexpr uint32_t kSnapLen = 262144;
}  // namespace

PcapWriter::PcapWriter(const std::string& path, RecordLink link) : link_(link), path_(path) {
  dead_ = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, kSnapLen, PCAP_TSTAMP_PRECISION_NANO);
  if (dead_ == nullptr) throw std::runtime_error("libpcap: cannot make a capture handle");
  dumper_ = pcap_dump_open(dead_, path.c_str());
  if (dumper_ == nullptr) {
    const std::string why = pcap_geterr(dead_);
    pcap_close(dead_);
    throw std::runtime_error("cannot write " + path + ": " + why);
  }
}

PcapWriter::~PcapWriter() {
  if (dumper_ != nullptr) pcap_dump_close(dumper_);
  if (dead_ != nullptr) pcap_close(dead_);
}

void PcapWriter::flush() {
  if (pcap_dump_flush(dumper_) != 0) throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
  check();
}

void PcapWriter::check() const {
  // libpcap's dumper writes through stdio and reports nothing: a write that
  // failed (a full disk) shows only in the stream's error flag.
  if (std::ferror(pcap_dump_file(dumper_)) != 0) throw std::runtime_error("cannot write " + path_ + ": a write failed");
}

namespace {

void put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

uint16_t ip_checksum(const uint8_t* h) {
  uint32_t sum = 0;
  for (int i = 0; i < 20; i += 2) sum += static_cast<uint32_t>(h[i] << 8 | h[i + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

}  // namespace

void PcapWriter::write(uint64_t realtime_ns, uint32_t publisher, uint16_t stream, std::span<const std::byte> m) {
  pcap_pkthdr h{};
  h.ts.tv_sec = static_cast<time_t>(realtime_ns / 1'000'000'000ull);
  h.ts.tv_usec = static_cast<suseconds_t>(realtime_ns % 1'000'000'000ull);  // nanoseconds in a nano dumper
  if (link_ == RecordLink::Raw) {
    h.len = static_cast<uint32_t>(m.size());
    h.caplen = std::min(h.len, kSnapLen);
    pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, reinterpret_cast<const u_char*>(m.data()));
    ++written_;
    return;
  }
  constexpr size_t kHeaders = 14 + 20 + 8;
  frame_.assign(kHeaders + m.size(), 0);
  uint8_t* p = frame_.data();
  const uint8_t dst_mac[6] = {0x01, 0x00, 0x5e, 0x7f, 0x00, 0x01};  // 239.255.0.1's
  const uint8_t src_mac[6] = {0x02, 0x4c, 0x43, 0x00, static_cast<uint8_t>(publisher >> 8), static_cast<uint8_t>(publisher)};
  std::memcpy(p, dst_mac, 6);
  std::memcpy(p + 6, src_mac, 6);
  put16(p + 12, 0x0800);
  uint8_t* ip = p + 14;
  const bool fits = m.size() <= 65507;
  ip[0] = 0x45;
  put16(ip + 2, fits ? static_cast<uint16_t>(20 + 8 + m.size()) : 0);
  ip[8] = 1;   // TTL
  ip[9] = 17;  // UDP
  const uint8_t src_ip[4] = {10, 255, static_cast<uint8_t>(publisher >> 8), static_cast<uint8_t>(publisher)};
  const uint8_t dst_ip[4] = {239, 255, 0, 1};
  std::memcpy(ip + 12, src_ip, 4);
  std::memcpy(ip + 16, dst_ip, 4);
  put16(ip + 10, ip_checksum(ip));
  uint8_t* udp = ip + 20;
  put16(udp, static_cast<uint16_t>(7000 + stream));
  put16(udp + 2, static_cast<uint16_t>(7000 + stream));
  put16(udp + 4, fits ? static_cast<uint16_t>(8 + m.size()) : 0);  // checksum 0: none (IPv4 allows it)
  if (!m.empty()) std::memcpy(udp + 8, m.data(), m.size());
  h.len = static_cast<uint32_t>(frame_.size());
  h.caplen = std::min(h.len, kSnapLen);
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &h, frame_.data());
  ++written_;
}

}  // namespace lanecast::replay
