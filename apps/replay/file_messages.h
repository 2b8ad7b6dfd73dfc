// The file's messages in the order a member process must deliver them, one
// at a time, for --verify without holding the file: the publisher's process
// reads them from its read-ahead ring (its own slot keeps each until it has
// been compared), every other process reads the file again, loop after loop.
#pragma once

#include <span>

#include "apps/replay/pcap_source.h"
#include "apps/replay/read_ahead.h"

namespace lanecast::replay {

class FileMessages {
 public:
  virtual ~FileMessages() = default;
  // The next message, valid until the next call; false past the last loop.
  virtual bool next(std::span<const std::byte>& out) = 0;
  // No more will be asked for (the member failed).
  virtual void stop() {}
};

// From the read-ahead ring, through slot `slot`: a message a member
// delivered was published, so the reader has written it and the slot keeps it.
class RingMessages final : public FileMessages {
 public:
  RingMessages(ReadAhead& ra, uint32_t slot) : ra_(ra), slot_(slot), walk_(&ra) {}
  bool next(std::span<const std::byte>& out) override {
    if (held_) {
      walk_.advance();
      ra_.release(slot_, walk_);
      held_ = false;
    }
    RingEntry e;
    if (!walk_.peek(e)) return false;
    out = e.data;
    held_ = true;
    return true;
  }
  void stop() override { ra_.detach(slot_); }

 private:
  ReadAhead& ra_;
  uint32_t slot_;
  ReadAhead::Walk walk_;
  bool held_ = false;
};

// The file read again, `loops` times over.
class ReaderMessages final : public FileMessages {
 public:
  ReaderMessages(const CaptureSpec& spec, uint64_t loops) : reader_(spec), loops_left_(loops) {}
  bool next(std::span<const std::byte>& out) override {
    CaptureMessage m;
    while (loops_left_ > 0) {
      if (reader_.next(m)) {
        out = m.data;
        return true;
      }
      if (--loops_left_ > 0) reader_.rewind();
    }
    return false;
  }

 private:
  CaptureReader reader_;
  uint64_t loops_left_;
};

}  // namespace lanecast::replay
