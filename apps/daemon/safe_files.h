// Files the daemon writes at paths someone else may have prepared: it may
// run as root, next to users who can create entries in /dev/shm, /tmp or a
// collector's directory before it starts. Nothing found at a path is ever
// followed or written through: a new file is created exclusively
// (O_CREAT|O_EXCL|O_NOFOLLOW), a file replaced at intervals is written to
// a temporary made exclusively in the same directory and renamed over it.
// What may already be at such a path is only a regular file of the
// daemon's own user with no other link (its own leftover); a symbolic
// link, a hard link, a FIFO, a socket, a directory or another user's file
// is refused, named, and left as it is.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

namespace lanecast::daemon {

// "a symbolic link", "a FIFO", "a file with 2 links", "a file of uid 65534", ...
std::string describe_entry(const struct stat& st);
// True for a regular file of this process's user with one link.
bool is_own_file(const struct stat& st);

// Creates `name` in directory `dirfd` (`shown`: its path, for messages) for
// reading and writing with `mode`. With `replace_own`, a leftover of the
// daemon's own (is_own_file) is removed first; anything else there is
// refused. Throws std::runtime_error naming `what` (an option) and the path.
int create_new_file_at(int dirfd, const std::string& name, const std::string& shown, mode_t mode, bool replace_own,
                       const std::string& what);
// The same for a path given by the user (no leftover is replaced: a file
// that exists is refused).
int create_new_file(const std::string& path, mode_t mode, const std::string& what);

// Throws unless `path` is absent or is_own_file, and its directory exists.
void check_replaceable(const std::string& path, const std::string& what);
// Writes `text` to `path` (mode `mode`) atomically: a temporary made with
// mkostemp in the same directory, then renamed over it. False and `why`
// when something other than an own file sits at `path` (left as it is) or
// the directory refuses the temporary.
bool replace_file(const std::string& path, const std::string& text, mode_t mode, std::string* why);

}  // namespace lanecast::daemon
