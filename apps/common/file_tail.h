// Follows a file another process writes: each pump() copies the whole lines
// it gained since the last one to a stream (rank 0's table, row by row, while
// the member process runs).
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <functional>
#include <string>
#include <utility>

namespace lanecast::apps {

class FileTail {
 public:
  // `to` null: it copies nothing (a caller that reads the file whole later).
  FileTail(std::string path, std::FILE* to) : path_(std::move(path)), to_(to) {}
  // The new whole lines; `before` runs first when there are any (a progress
  // line on the same screen comes off).
  void pump(const std::function<void()>& before = {});
  void finish();  // the rest, a last line without its newline too

 private:
  std::string path_;
  std::FILE* to_;
  off_t offset_ = 0;
  std::string partial_;  // the start of a line not yet ended
};

}  // namespace lanecast::apps
