#include "apps/replay/pcap_source.h"

#include <pcap/pcap.h>

#include <fcntl.h>

#include <algorithm>
#include <cstdio>
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
  size_t udp_len = be16(f.data() + l4 + 4);
  // IPv4 and UDP lengths 0: a datagram larger than the fields count (a
  // capture of segmentation offload, or lanecast record's messages over
  // 65507 bytes) - the rest of the frame, as Wireshark reads it.
  if (udp_len == 0 && version == 4 && be16(f.data() + 2) == 0) {
    if (!captured_all) return *why = "truncated", std::span<const std::byte>{};
    udp_len = f.size() - l4;
  }
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

CaptureReader::CaptureReader(const CaptureSpec& spec) : spec_(spec), p_(nullptr, pcap_close) {
  open();
  if (!spec_.whole_frame && dlt_ != DLT_EN10MB && dlt_ != DLT_RAW && dlt_ != DLT_IPV4 && dlt_ != DLT_IPV6 &&
      dlt_ != DLT_LINUX_SLL && dlt_ != DLT_LINUX_SLL2 && dlt_ != DLT_NULL && dlt_ != DLT_LOOP)
    throw std::runtime_error("--pcap " + spec_.path + ": link type " + link_ +
                             " cannot be taken apart into UDP payloads (--whole-frame replays the packets as captured)");
  // pcapng and pcap tell themselves apart by their first four bytes, and a
  // pcap file its nanosecond time stamps by its magic.
  uint32_t magic = 0;
  if (FILE* f = std::fopen(spec_.path.c_str(), "rb")) {
    if (std::fread(&magic, 4, 1, f) != 1) magic = 0;
    std::fclose(f);
  }
  pcapng_ = magic == 0x0A0D0D0A;
  nanosecond_magic_ = magic == 0xA1B23C4D || magic == 0x4D3CB2A1;
}

CaptureReader::~CaptureReader() = default;

void CaptureReader::open() {
  char err[PCAP_ERRBUF_SIZE] = {};
  p_.reset(pcap_open_offline_with_tstamp_precision(spec_.path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err));
  if (!p_) throw std::runtime_error("--pcap " + spec_.path + ": " + err);
  number_ = 0;
  dlt_ = pcap_datalink(p_.get());
  const char* name = pcap_datalink_val_to_name(dlt_);
  link_ = name ? name : ("DLT " + std::to_string(dlt_));
  if (FILE* f = pcap_file(p_.get())) posix_fadvise(fileno(f), 0, 0, POSIX_FADV_SEQUENTIAL);
  if (spec_.filter.empty()) return;
  bpf_program prog{};
  if (pcap_compile(p_.get(), &prog, spec_.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
    throw std::runtime_error("--filter '" + spec_.filter + "': " + pcap_geterr(p_.get()));
  const int rc = pcap_setfilter(p_.get(), &prog);
  pcap_freecode(&prog);
  if (rc != 0) throw std::runtime_error("--filter '" + spec_.filter + "': " + pcap_geterr(p_.get()));
}

void CaptureReader::rewind() { open(); }

bool CaptureReader::next(CaptureMessage& out) {
  pcap_pkthdr* h;
  const u_char* data;
  int rc;
  while ((rc = pcap_next_ex(p_.get(), &h, &data)) == 1) {
    ++number_;
    ++counts_.read;
    const std::span<const std::byte> frame(reinterpret_cast<const std::byte*>(data), h->caplen);
    std::span<const std::byte> msg;
    if (spec_.whole_frame) {
      if (h->caplen < h->len) {
        ++counts_.truncated;
        continue;
      }
      msg = frame;
    } else {
      const char* why = nullptr;
      msg = udp_payload(dlt_, frame, h->len, &why);
      if (msg.data() == nullptr) {
        if (why != nullptr && std::strcmp(why, "fragment") == 0) ++counts_.fragments;
        else if (why != nullptr && std::strcmp(why, "truncated") == 0) ++counts_.truncated;
        else ++counts_.not_udp;
        continue;
      }
    }
    if (msg.size() > spec_.max_message)
      throw std::runtime_error("--pcap " + spec_.path + ": packet " + std::to_string(number_) + " carries " +
                               std::to_string(msg.size()) + " bytes, more than the stream takes (" +
                               std::to_string(spec_.max_message) + ")");
    // With PCAP_TSTAMP_PRECISION_NANO, tv_usec holds nanoseconds.
    out.ts_ns = static_cast<uint64_t>(h->ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(h->ts.tv_usec);
    out.data = msg;
    return true;
  }
  if (rc == PCAP_ERROR)
    throw std::runtime_error("--pcap " + spec_.path + ": after packet " + std::to_string(number_) + ": " +
                             pcap_geterr(p_.get()));
  return false;
}

CaptureSummary scan_capture(const CaptureSpec& spec, const Timing& timing) {
  CaptureReader r(spec);
  CaptureSummary s;
  s.link = r.link();
  s.pcapng = r.pcapng();
  s.nanosecond = r.nanosecond_magic();
  Schedule schedule(timing);
  CaptureMessage m;
  while (r.next(m)) {
    ++s.messages;
    s.bytes += m.data.size();
    s.largest = std::max<uint64_t>(s.largest, m.data.size());
    if (m.ts_ns % 1000 != 0) s.nanosecond = true;  // pcapng: finer than microseconds in use
    s.schedule_ns = schedule.next(m.ts_ns, static_cast<uint32_t>(m.data.size()));
  }
  s.counts = r.counts();
  if (!spec.filter.empty()) {
    // Offline, libpcap counts nothing the filter took out: count the file.
    char err[PCAP_ERRBUF_SIZE] = {};
    std::unique_ptr<pcap_t, void (*)(pcap_t*)> all(pcap_open_offline(spec.path.c_str(), err), pcap_close);
    pcap_pkthdr* h;
    const u_char* data;
    uint64_t total = 0;
    while (all && pcap_next_ex(all.get(), &h, &data) == 1) ++total;
    s.filtered_out = total > s.counts.read ? total - s.counts.read : 0;
  }
  return s;
}

}  // namespace lanecast::replay
