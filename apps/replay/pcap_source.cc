#include "apps/replay/pcap_source.h"

#include <pcap/pcap.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace lanecast::replay {
namespace {

uint16_t be16(const std::byte* p) {
  return static_cast<uint16_t>((std::to_integer<uint16_t>(p[0]) << 8) | std::to_integer<uint16_t>(p[1]));
}

// From an IP header on: the UDP payload.
std::span<const std::byte> from_ip(std::span<const std::byte> f, bool captured_all, const char** why) {
  if (f.size() < 1) {
    *why = "not udp";
    return {};
  }
  const unsigned version = std::to_integer<unsigned>(f[0]) >> 4;
  size_t l4 = 0;
  if (version == 4) {
    if (f.size() < 20) return *why = "truncated", std::span<const std::byte>{};
    const size_t ihl = (std::to_integer<size_t>(f[0]) & 0xF) * 4;
    if (ihl < 20 || f.size() < ihl) return *why = "truncated", std::span<const std::byte>{};
    if (std::to_integer<unsigned>(f[9]) != 17) return *why = "not udp", std::span<const std::byte>{};
    if ((be16(f.data() + 6) & 0x3FFF) != 0) return *why = "fragment", std::span<const std::byte>{};  // MF or an offset
    l4 = ihl;
  } else if (version == 6) {
    if (f.size() < 40) return *why = "truncated", std::span<const std::byte>{};
    if (std::to_integer<unsigned>(f[6]) != 17) return *why = "not udp", std::span<const std::byte>{};  // extension headers: not taken apart
    l4 = 40;
  } else {
    return *why = "not udp", std::span<const std::byte>{};
  }
  if (f.size() < l4 + 8) return *why = "truncated", std::span<const std::byte>{};
  const size_t udp_len = be16(f.data() + l4 + 4);
  if (udp_len < 8) return *why = "not udp", std::span<const std::byte>{};
  const size_t want = udp_len - 8;
  if (!captured_all || f.size() < l4 + 8 + want) return *why = "truncated", std::span<const std::byte>{};
  return f.subspan(l4 + 8, want);
}

}  // namespace

std::span<const std::byte> udp_payload(int dlt, std::span<const std::byte> f, uint32_t wire_len, const char** why) {
  const bool all = wire_len == f.size();
  *why = "not udp";
  switch (dlt) {
    case DLT_EN10MB: {
      size_t at = 12;
      if (f.size() < 14) return *why = "truncated", std::span<const std::byte>{};
      uint16_t type = be16(f.data() + at);
      while ((type == 0x8100 || type == 0x88A8) && f.size() >= at + 6) {  // VLAN tags
        at += 4;
        type = be16(f.data() + at);
      }
      if (type != 0x0800 && type != 0x86DD) return {};
      return from_ip(f.subspan(at + 2), all, why);
    }
    case DLT_RAW:
    case DLT_IPV4:
    case DLT_IPV6:
#ifdef DLT_RAW_ALT
    case DLT_RAW_ALT:
#endif
      return from_ip(f, all, why);
    case DLT_LINUX_SLL:
      if (f.size() < 16) return *why = "truncated", std::span<const std::byte>{};
      if (be16(f.data() + 14) != 0x0800 && be16(f.data() + 14) != 0x86DD) return {};
      return from_ip(f.subspan(16), all, why);
    case DLT_LINUX_SLL2:
      if (f.size() < 20) return *why = "truncated", std::span<const std::byte>{};
      if (be16(f.data()) != 0x0800 && be16(f.data()) != 0x86DD) return {};
      return from_ip(f.subspan(20), all, why);
    case DLT_NULL:
    case DLT_LOOP:
      if (f.size() < 4) return *why = "truncated", std::span<const std::byte>{};
      return from_ip(f.subspan(4), all, why);
    default:
      return {};
  }
}

PcapSource load_pcap(const std::string& path, bool whole_frame, const std::string& filter, uint64_t max_message) {
  char err[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, void (*)(pcap_t*)> p(
      pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err), pcap_close);
  if (!p) throw std::runtime_error("--pcap " + path + ": " + err);
  PcapSource s;
  const int dlt = pcap_datalink(p.get());
  const char* name = pcap_datalink_val_to_name(dlt);
  s.link = name ? name : ("DLT " + std::to_string(dlt));
  {
    // pcapng and pcap tell themselves apart by their first four bytes, and a
    // pcap file its nanosecond time stamps by its magic.
    FILE* f = std::fopen(path.c_str(), "rb");
    uint32_t magic = 0;
    if (f != nullptr) {
      if (std::fread(&magic, 4, 1, f) != 1) magic = 0;
      std::fclose(f);
    }
    s.pcapng = magic == 0x0A0D0D0A;
    s.nanosecond = magic == 0xA1B23C4D || magic == 0x4D3CB2A1;
  }
  if (!whole_frame && dlt != DLT_EN10MB && dlt != DLT_RAW && dlt != DLT_IPV4 && dlt != DLT_IPV6 &&
      dlt != DLT_LINUX_SLL && dlt != DLT_LINUX_SLL2 && dlt != DLT_NULL && dlt != DLT_LOOP)
    throw std::runtime_error("--pcap " + path + ": link type " + s.link +
                             " cannot be taken apart into UDP payloads (--whole-frame replays the packets as captured)");
  if (!filter.empty()) {
    bpf_program prog{};
    if (pcap_compile(p.get(), &prog, filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
      throw std::runtime_error("--filter '" + filter + "': " + pcap_geterr(p.get()));
    const int rc = pcap_setfilter(p.get(), &prog);
    pcap_freecode(&prog);
    if (rc != 0) throw std::runtime_error("--filter '" + filter + "': " + pcap_geterr(p.get()));
  }
  pcap_pkthdr* h;
  const u_char* data;
  int rc;
  uint64_t number = 0;
  while ((rc = pcap_next_ex(p.get(), &h, &data)) == 1) {
    ++number;
    ++s.read;
    const std::span<const std::byte> frame(reinterpret_cast<const std::byte*>(data), h->caplen);
    std::span<const std::byte> msg;
    if (whole_frame) {
      if (h->caplen < h->len) {
        ++s.truncated;
        continue;
      }
      msg = frame;
    } else {
      const char* why = nullptr;
      msg = udp_payload(dlt, frame, h->len, &why);
      if (msg.data() == nullptr && (why == nullptr || std::strcmp(why, "not udp") == 0)) {
        ++s.not_udp;
        continue;
      }
      if (msg.data() == nullptr) {
        if (std::strcmp(why, "fragment") == 0) ++s.fragments;
        else ++s.truncated;
        continue;
      }
    }
    if (msg.size() > max_message)
      throw std::runtime_error("--pcap " + path + ": packet " + std::to_string(number) + " carries " +
                               std::to_string(msg.size()) + " bytes, more than the stream takes (" +
                               std::to_string(max_message) + ")");
    // With PCAP_TSTAMP_PRECISION_NANO, tv_usec holds nanoseconds.
    const uint64_t ts = static_cast<uint64_t>(h->ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(h->ts.tv_usec);
    s.packets.push_back(Packet{ts, s.bytes.size(), static_cast<uint32_t>(msg.size())});
    s.bytes.insert(s.bytes.end(), msg.begin(), msg.end());
  }
  if (rc == PCAP_ERROR)
    throw std::runtime_error("--pcap " + path + ": after packet " + std::to_string(number) + ": " + pcap_geterr(p.get()));
  for (const Packet& k : s.packets)
    if (k.ts_ns % 1000 != 0) s.nanosecond = true;  // pcapng: finer than microseconds in use
  if (!filter.empty()) {
    // Offline, libpcap counts nothing the filter took out: count the file.
    std::unique_ptr<pcap_t, void (*)(pcap_t*)> all(pcap_open_offline(path.c_str(), err), pcap_close);
    uint64_t total = 0;
    while (all && pcap_next_ex(all.get(), &h, &data) == 1) ++total;
    s.filtered_out = total > s.read ? total - s.read : 0;
  }
  return s;
}

}  // namespace lanecast::replay
