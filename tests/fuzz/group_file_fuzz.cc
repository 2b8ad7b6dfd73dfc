// libFuzzer target: the group-file reader (engine/group/group_file.cc,
// parse_group_file) on any text. A group file is written by hand and read by
// every member at start-up, so every input must end one of two ways:
//  - it parses, and the spec passes what Engine::join checks before it starts
//    anything (Group::memory_bytes runs the same checks), for the first and
//    the last rank: a file the reader accepts is never refused later without
//    its line;
//  - std::invalid_argument "fuzz.toml:LINE: ..." with LINE a line of the input.
// Any other exception, a crash, a sanitizer report, a leak or an input slower
// than libFuzzer's -timeout is a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>

#include "lanecast/lanecast.h"

namespace {

constexpr const char* kName = "fuzz.toml";

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "group_file_fuzz: %s\n", what.c_str());
  std::abort();
}

// "fuzz.toml:LINE: " with 1 <= LINE <= the input's lines.
bool names_a_line(const std::string& message, const std::string& text) {
  const std::string prefix = std::string(kName) + ":";
  if (message.rfind(prefix, 0) != 0) return false;
  size_t at = prefix.size(), line = 0, digits = 0;
  while (at < message.size() && message[at] >= '0' && message[at] <= '9' && digits < 12) {
    line = line * 10 + static_cast<size_t>(message[at++] - '0');
    ++digits;
  }
  if (digits == 0 || message.compare(at, 2, ": ") != 0) return false;
  size_t lines = 1;
  for (const char c : text) lines += c == '\n';
  return line >= 1 && line <= lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  lanecast::GroupSpec spec;
  try {
    spec = lanecast::parse_group_file(text, kName);
  } catch (const std::invalid_argument& e) {
    if (!names_a_line(e.what(), text)) fail(std::string("an error that names no line of the file: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    fail(std::string("parse_group_file let another exception than std::invalid_argument escape: ") + e.what());
  } catch (...) {
    fail("parse_group_file let a non-exception escape");
  }
  const auto last = static_cast<lanecast::Rank>(spec.members.size() - 1);
  for (const lanecast::Rank r : {lanecast::Rank{0}, last}) {
    try {
      (void)lanecast::Group::memory_bytes(spec, r);
    } catch (const std::invalid_argument& e) {
      // A port's own properties (its interface's MTU, an af_packet ring's
      // frame size, an adapter a verbs lane names that this host lacks) are
      // the host's, not the file's: refused at join, by name.
      if (std::string(e.what()).rfind("group: port '", 0) == 0) continue;
      fail("a group file the reader accepted, refused by the engine for rank " + std::to_string(r) + ": " + e.what());
    } catch (const std::exception& e) {
      fail("a group file the reader accepted threw for rank " + std::to_string(r) + ": " + e.what());
    }
  }
  return 0;
}
