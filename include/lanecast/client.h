// The client library of `lanecast daemon`: an application publishes to and
// subscribes from the group its host's daemon is a member of, through shared
// memory, without linking DPDK or the engine (pkg-config lanecast-client,
// or liblanecast_client in this tree; apps/examples/stream_publisher.cc and
// stream_subscriber.cc). This header names nothing of the library's
// insides: the shared-memory format (ipc/) stays behind Client::Impl.
//
//   auto c = lanecast::daemon::Client::connect({"/run/lanecast/feed-r0", Role::Both});
//   c->publish(bytes);                       // Ok, or WouldBlock: try again
//   lanecast::daemon::Message m;
//   while (c->next_for(m, 10ms)) use(m.data);
//   if (c->closed() != Closed::No) puts(describe(c->closed()));
//
// One thread at a time per Client. Every message published by any client of
// any member's daemon reaches every subscriber of every member, in each
// daemon's order, exactly once - unless the subscriber falls so far behind
// that its daemon evicts it (evicted(); the daemon's --evict-after).
//
// The library checks who answers before it says anything: the daemon must
// run as root, as this process's user or as ClientOptions::daemon_user.
// It checks what the daemon sends as the daemon checks what it gets (ipc/): the memory it is handed must be a sealed memfd laid out as
// its header's sizes say, and a ring that stops making sense closes the
// client instead of sending it astray. The waits (next_for, publish_for)
// watch the daemon: its socket hanging up (it died, even by SIGKILL) or its
// heartbeat standing still (it hangs) ends them with the reason.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace lanecast::daemon {

enum class Role : uint8_t { Publisher = 1, Subscriber = 2, Both = 3 };

// What the daemon tells a client besides messages.
struct Notice {
  enum Kind : uint32_t { None = 0, StreamFailed = 1, Evicted = 2, ShuttingDown = 3 } kind = None;
  uint32_t peer = UINT32_MAX;  // StreamFailed: the member it names
  uint64_t at_ns = 0;          // CLOCK_MONOTONIC
};

struct ClientOptions {
  std::string dir;             // the daemon's directory (its --dir)
  Role role = Role::Both;
  uint64_t publish_bytes = 0;  // ring sizes; 0: the daemon's defaults
  uint64_t delivery_bytes = 0;
  std::string name;            // shown by `lanecast stat`: at most 31 printable ASCII bytes
  // Who may answer at dir/control.sock besides root and this process's own
  // user: a user name or uid the daemon runs as (the systemd unit's
  // `lanecast`). Empty: LANECAST_DAEMON_USER if set, else nobody more. The
  // daemon's uid is taken from the socket (SO_PEERCRED) before anything is
  // sent; whoever owns the directory counts for nothing, since anyone may
  // have made it.
  std::string daemon_user;
  // A daemon whose heartbeat is older than this is taken for hung (Closed::
  // DaemonSilent) while it stays so; 0: never. It beats every millisecond.
  std::chrono::nanoseconds daemon_silent_after = std::chrono::seconds(10);
};

struct Message {
  uint32_t publisher = 0;      // the member whose daemon published it
  uint16_t stream = 0;
  uint64_t seq = 0;            // that daemon's stream sequence number
  uint64_t timestamp_ns = 0;   // CLOCK_MONOTONIC when that daemon published it
  std::span<const std::byte> data;  // valid until the next next()
};

enum class Publish : uint8_t { Ok, WouldBlock, TooLarge, Closed };

// Why a client can go on no longer (No: it can).
enum class Closed : uint8_t {
  No,
  Evicted,         // the daemon dropped it: too slow, or its memory made no sense
  DaemonStopping,  // the daemon is shutting down
  DaemonGone,      // the daemon's socket hung up: it exited or was killed
  DaemonSilent,    // the daemon's heartbeat stands still (for daemon_silent_after)
  Corrupt,         // a ring the daemon writes makes no sense
};
const char* describe(Closed c);

class Client {
 public:
  // Throws std::runtime_error saying why (no daemon there, a daemon of a
  // user this client does not trust, refused and why, a file that does not
  // check out, ...).
  static std::unique_ptr<Client> connect(const ClientOptions& o);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Never waits, no system call. Closed: closed() says why.
  Publish publish(std::span<const std::byte> message);
  // Waits up to `timeout` for room, watching the daemon as it waits.
  Publish publish_for(std::span<const std::byte> message, std::chrono::nanoseconds timeout);
  // The next message, if one is there; no system call.
  bool next(Message& out);
  // Waits up to `timeout`; false at the timeout or when the client is
  // closed (closed() != No says why).
  bool next_for(Message& out, std::chrono::nanoseconds timeout);
  // The daemon's notices (a failed stream, eviction, shutdown), oldest first.
  std::optional<Notice> notice();
  // Why the client can go on no longer, looking now: its own state, the
  // daemon's flags, its socket (one poll), its heartbeat.
  Closed closed();

  bool evicted() const;
  bool daemon_stopping() const;
  uint32_t rank() const;        // the daemon's member
  uint32_t client_id() const;
  uint64_t max_message() const;
  uint64_t published() const;   // messages this client's daemon took from it
  uint64_t skipped() const;     // delivery records too short for a message

  struct Impl;  // the socket and the shared memory (ipc/)

 private:
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lanecast::daemon
