// A capture file read for replay one packet at a time (libpcap: pcap and
// pcapng, microsecond and nanosecond time stamps, an optional BPF filter):
// every packet's UDP payload - or, with whole_frame, the packet as captured -
// and its time stamp, in file order. Nothing of the file is held beyond the
// packet in hand, so a capture of any size replays in the same memory.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "apps/replay/replay_schedule.h"

struct pcap;

namespace lanecast::replay {

struct CaptureSpec {
  std::string path;
  bool whole_frame = false;
  std::string filter;
  uint64_t max_message = UINT64_MAX;  // larger payloads are refused with the packet's number
};

// Packets of the file, and those that are not messages, by reason.
struct CaptureCounts {
  uint64_t read = 0, not_udp = 0, fragments = 0, truncated = 0;
};

struct CaptureMessage {
  uint64_t ts_ns = 0;               // the capture's time stamp
  std::span<const std::byte> data;  // valid until the next call to next() or rewind()
};

class CaptureReader {
 public:
  // Throws std::runtime_error naming the file and what is wrong (cannot open,
  // not a capture, a link type it cannot take apart, a filter that does not
  // compile).
  explicit CaptureReader(const CaptureSpec& spec);
  ~CaptureReader();
  CaptureReader(const CaptureReader&) = delete;
  CaptureReader& operator=(const CaptureReader&) = delete;
  // The next message; false at the end of the file. Throws on a read error
  // or a message over max_message.
  bool next(CaptureMessage& out);
  // Back to the first packet (the file opened again: it is read, never held).
  void rewind();
  const CaptureCounts& counts() const { return counts_; }
  const std::string& link() const { return link_; }
  bool pcapng() const { return pcapng_; }
  bool nanosecond_magic() const { return nanosecond_magic_; }

 private:
  void open();
  CaptureSpec spec_;
  std::unique_ptr<pcap, void (*)(pcap*)> p_;
  int dlt_ = 0;
  std::string link_;
  bool pcapng_ = false, nanosecond_magic_ = false;
  uint64_t number_ = 0;  // packets read since the file was opened, for errors
  CaptureCounts counts_;
};

// What a first pass over the file finds: enough to size the run, check the
// file before the clock starts, and say what will be replayed.
struct CaptureSummary {
  std::string link;
  bool pcapng = false;
  bool nanosecond = false;  // the file's time stamps are nanoseconds (magic, or finer than us in use)
  CaptureCounts counts;
  uint64_t filtered_out = 0;
  uint64_t messages = 0, bytes = 0, largest = 0;
  uint64_t schedule_ns = 0;  // the last message's offset from the loop's start under the timing
};

// Reads the whole file once (in constant memory). Throws as CaptureReader.
CaptureSummary scan_capture(const CaptureSpec& spec, const Timing& timing);

// The UDP payload of a frame of link type `dlt` (DLT_* numbers), or an
// empty span with *why set: "not udp", "fragment", "truncated".
std::span<const std::byte> udp_payload(int dlt, std::span<const std::byte> frame, uint32_t wire_len, const char** why);

}  // namespace lanecast::replay
