#include "apps/common/file_tail.h"

#include <fcntl.h>
#include <unistd.h>

namespace lanecast::apps {

void FileTail::pump(const std::function<void()>& before) {
  if (to_ == nullptr) return;  // nowhere to copy to: the file is read whole later
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // not created yet
  char buf[8192];
  ssize_t n;
  while ((n = ::pread(fd, buf, sizeof buf, offset_)) > 0) {
    offset_ += n;
    partial_.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  const size_t end = partial_.rfind('\n');
  if (end == std::string::npos) return;
  if (before) before();
  std::fwrite(partial_.data(), 1, end + 1, to_);
  std::fflush(to_);
  partial_.erase(0, end + 1);
}

void FileTail::finish() {
  if (to_ == nullptr) return;
  pump();
  if (partial_.empty()) return;
  std::fprintf(to_, "%s\n", partial_.c_str());
  std::fflush(to_);
  partial_.clear();
}

}  // namespace lanecast::apps
