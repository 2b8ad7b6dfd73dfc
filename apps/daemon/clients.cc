#include "apps/daemon/clients.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "ipc/delivered_head.h"
#include "ipc/fd_passing.h"
#include "ipc/shared_memory.h"

namespace lanecast::daemon {

using ipc::Refusal;

struct ClientTable::Local {
  uint32_t id = 0;
  int fd = -1;
  uint64_t accepted_ns = 0;
  PeerCredentials cred;
  bool ready = false;    // welcomed: it has its memory
  bool gone = false;     // refused, cut off or hung up with nothing left: dropped at the next poll
  bool closing = false;  // hung up: what it committed is still published, then it goes
  bool evicted = false;
  std::string name;
  ipc::Role role = ipc::Role::Both;
  std::optional<ipc::SharedMemory> mem;
  ipc::DaemonView view;  // made from the daemon's layout; the daemon's positions live here
  uint64_t last_offer = 0;     // the last delivery it took
  uint64_t blocked_since = 0;  // its ring has been full since (0: not full)
  uint64_t seen_claim = 0;     // the last consumer position it wrote, and when that last moved
  uint64_t reading_ns = 0;
  uint64_t messages_in = 0, bytes_in = 0, messages_out = 0, bytes_out = 0;
  uint64_t too_large = 0, publish_failed = 0;
  bool publishes() const { return ready && ipc::publishes(role); }
  bool subscribes() const { return ready && ipc::subscribes(role); }
  bool active() const { return ready && !gone && !evicted; }
};

uint64_t ClientTableCounters::refused_total() const {
  uint64_t n = 0;
  for (const uint64_t r : refused) n += r;
  return n;
}

ClientTable::ClientTable(int listen_fd, const AccessPolicy& access, const ClientLimits& limits, uint32_t rank,
                         uint32_t group_size, uint64_t max_message)
    : listen_fd_(listen_fd), access_(access), limits_(limits), rank_(rank), group_size_(group_size),
      max_message_(max_message) {}

ClientTable::~ClientTable() {
  stopping();
  while (!clients_.empty()) drop(clients_.size() - 1);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

size_t ClientTable::size() const {
  return static_cast<size_t>(
      std::count_if(clients_.begin(), clients_.end(), [](const auto& c) { return c->ready && !c->gone; }));
}

void ClientTable::accept_new(uint64_t now_ns) {
  // Bounded: a flood of connections is taken a batch per poll.
  for (int k = 0; k < 64; ++k) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    auto c = std::make_unique<Local>();
    c->fd = fd;
    c->id = next_id_++;
    c->accepted_ns = now_ns;
    ucred cred{};
    socklen_t len = sizeof cred;
    const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && len == sizeof cred;
    c->cred = PeerCredentials{cred.pid, cred.uid, cred.gid};
    Local& l = *c;
    clients_.push_back(std::move(c));
    ++unanswered_;
    if (!known || !access_.allows(l.cred)) {
      refuse(l, Refusal::Credentials,
             "uid " + std::to_string(l.cred.uid) + " may not use this daemon (it serves " + access_.describe() + ")");
    } else if (static_cast<size_t>(std::count_if(clients_.begin(), clients_.end(),
                                                 [](const auto& x) { return !x->gone; })) > limits_.max_clients) {
      refuse(l, Refusal::TooManyClients,
             "the daemon serves " + std::to_string(limits_.max_clients) + " connections already (--max-clients)");
    } else if (static_cast<size_t>(std::count_if(clients_.begin(), clients_.end(), [&](const auto& x) {
                 return !x->gone && x->cred.uid == l.cred.uid;
               })) > limits_.max_clients_per_user) {
      refuse(l, Refusal::TooManyForUser,
             "uid " + std::to_string(l.cred.uid) + " holds " + std::to_string(limits_.max_clients_per_user) +
                 " connections already (--max-clients-per-user)");
    }
  }
}

void ClientTable::refuse(Local& c, Refusal why, const std::string& text) {
  ipc::Welcome w;
  w.status = static_cast<int32_t>(why);
  std::snprintf(w.reason, sizeof w.reason, "%s", text.c_str());
  ipc::send_with_fd(c.fd, &w, sizeof w, -1);
  ++counters_.refused[static_cast<size_t>(why)];
  // Only this side's writing ends: a client whose hello is still on its way
  // can send it and then read the answer (drop() reads what came).
  ::shutdown(c.fd, SHUT_WR);
  if (!c.ready) --unanswered_;
  c.ready = false;
  c.gone = true;
}

// The hello of a new client: its memory, laid out and mapped, and the answer.
void ClientTable::answer(Local& c) {
  // One byte more than a hello: a longer message is no hello either. Any
  // descriptor a client attaches is not taken (no control buffer: the
  // kernel closes it).
  uint8_t buf[sizeof(ipc::Hello) + 1];
  const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n != static_cast<ssize_t>(sizeof(ipc::Hello))) return refuse(c, Refusal::BadHello, "malformed hello");
  ipc::Hello h;
  std::memcpy(&h, buf, sizeof h);
  if (h.version != ipc::kFormatVersion)
    return refuse(c, Refusal::Version,
                  "client library of format " + std::to_string(h.version) + ", the daemon speaks " +
                      std::to_string(ipc::kFormatVersion));
  if (!ipc::valid_role(h.role)) return refuse(c, Refusal::BadRole, "unknown role");
  const size_t name_len = strnlen(h.name, sizeof h.name);
  if (name_len == sizeof h.name || !ipc::valid_client_name(std::string_view(h.name, name_len)))
    return refuse(c, Refusal::BadName, "a client's name is at most 31 bytes of printable ASCII");
  c.name.assign(h.name, name_len);
  c.role = static_cast<ipc::Role>(h.role);
  const uint64_t pub = ipc::publishes(c.role) ? (h.publish_bytes ? h.publish_bytes : limits_.publish_bytes) : 0;
  const uint64_t del = ipc::subscribes(c.role) ? (h.delivery_bytes ? h.delivery_bytes : limits_.delivery_bytes) : 0;
  // A delivery ring must hold the stream's largest message, or that
  // message could never be handed over.
  const uint64_t min_delivery = min_delivery_ring(max_message_);
  if ((pub != 0 && (pub < ipc::kMinRing || pub > limits_.max_ring)) ||
      (del != 0 && (del < min_delivery || del > limits_.max_ring)))
    return refuse(c, Refusal::RingSize,
                  "ring sizes: publish " + std::to_string(ipc::kMinRing) + ".." + std::to_string(limits_.max_ring) +
                      ", delivery " + std::to_string(min_delivery) + ".." + std::to_string(limits_.max_ring) +
                      " bytes (--max-ring; a delivery ring holds the largest message twice)");
  const auto lay = ipc::client_layout(c.role, pub, del);
  if (!lay) return refuse(c, Refusal::RingSize, "ring sizes out of range");
  if (memory_ + lay->bytes > limits_.max_memory)
    return refuse(c, Refusal::MemoryTotal,
                  "the daemon's clients hold " + std::to_string(memory_) + " of " + std::to_string(limits_.max_memory) +
                      " bytes (--max-client-memory); this one asks " + std::to_string(lay->bytes));
  std::string why;
  const std::string label = "lanecast-client-" + std::to_string(c.id);
  auto mem = ipc::SharedMemory::create(label.c_str(), lay->bytes, &why);
  if (!mem) return refuse(c, Refusal::NoMemory, "no memory for its rings: " + why);
  c.view = ipc::make_client_file(mem->data(), *lay, {c.id, rank_, group_size_, max_message_});
  ipc::Welcome w;
  w.client_id = c.id;
  w.file_bytes = lay->bytes;
  const bool sent = ipc::send_with_fd(c.fd, &w, sizeof w, mem->fd());
  mem->close_fd();  // the mapping is all the daemon keeps
  --unanswered_;
  c.mem = std::move(mem);
  c.ready = true;
  c.last_offer = offers_;  // it takes messages from the next one on
  c.reading_ns = clock_ns();
  memory_ += lay->bytes;
  ++counters_.connected;
  if (!sent) hung_up(c);
}

void ClientTable::hung_up(Local& c) {
  if (c.publishes() && !c.gone && !c.evicted) {
    c.view.publish.producer_gone();
    if (!c.view.publish.empty()) {
      c.closing = true;
      return;
    }
  }
  c.gone = true;
}

void ClientTable::cut_off(Local& c, CutOff why) {
  ++counters_.cut_off[static_cast<size_t>(why)];
  c.view.header->evicted.store(1, std::memory_order_release);
  c.evicted = true;
  c.gone = true;
  ::shutdown(c.fd, SHUT_RDWR);  // it sees its socket hang up
}

void ClientTable::drop(size_t i) {
  Local& c = *clients_[i];
  if (c.ready) {
    memory_ -= c.mem->size();
    ++counters_.disconnected;
  } else if (!c.gone) {
    --unanswered_;
  }
  if (c.fd >= 0) {
    // Closing a socket with unread bytes resets the peer's end, and the peer
    // would lose the answer it was sent (a refusal): read them first.
    char b[256];
    for (int k = 0; k < 16 && ::recv(c.fd, b, sizeof b, MSG_DONTWAIT) > 0; ++k) {
    }
    ::close(c.fd);
  }
  clients_.erase(clients_.begin() + static_cast<std::ptrdiff_t>(i));  // unmaps its memory
  if (next_publisher_ >= clients_.size()) next_publisher_ = 0;
}

uint32_t ClientTable::poll_control(uint64_t now_ns) {
  uint32_t work = 0;
  for (size_t k = clients_.size(); k-- > 0;) {
    Local& c = *clients_[k];
    if (c.closing && (c.evicted || c.view.publish.empty() || c.view.publish.corrupt())) c.gone = true;
    if (c.gone) {
      drop(k);
      ++work;
      continue;
    }
    if (!c.ready && now_ns - c.accepted_ns > limits_.hello_timeout_ns) {
      refuse(c, Refusal::HelloTimeout, "no hello within --hello-timeout");
      drop(k);
      ++work;
      continue;
    }
    if (c.ready) c.view.header->heartbeat_ns.store(now_ns, std::memory_order_relaxed);
    if (c.subscribes() && !c.evicted) watch_reading(c, now_ns);
  }
  std::vector<pollfd>& fds = pollfds_;  // kept: no allocation per poll once it has grown
  fds.clear();
  for (const auto& c : clients_) fds.push_back(pollfd{c->closing ? -1 : c->fd, POLLIN, 0});
  fds.push_back(pollfd{listen_fd_, POLLIN, 0});
  if (::poll(fds.data(), fds.size(), 0) <= 0) return work;
  for (size_t k = 0; k < clients_.size(); ++k) {
    const short ev = fds[k].revents;
    if (ev == 0) continue;
    ++work;
    Local& c = *clients_[k];
    if (!c.ready) {
      answer(c);
      continue;
    }
    // A welcomed client has nothing more to say; whatever it sends is
    // read and dropped (one message per poll), its hang-up ends it.
    char b[64];
    const ssize_t n = ::recv(c.fd, b, sizeof b, MSG_DONTWAIT);
    if (n == 0 || (ev & (POLLHUP | POLLERR)) || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      hung_up(c);
  }
  if (fds.back().revents & POLLIN) {
    accept_new(now_ns);
    ++work;
  }
  return work;
}

uint32_t ClientTable::drain_publishers(Publisher& pub, uint32_t budget) {
  uint32_t done = 0;
  const size_t n = clients_.size();
  for (size_t step = 0; step < n && done < budget; ++step) {
    const size_t i = (next_publisher_ + step) % n;
    Local& c = *clients_[i];
    if (!c.publishes() || c.gone || c.evicted) continue;
    uint32_t mine = 0;
    while (done < budget && mine < 64) {
      const ipc::RecordView r = c.view.publish.peek();
      if (r.data == nullptr) {
        if (c.view.publish.corrupt()) cut_off(c, CutOff::PublishRing);
        break;
      }
      const PublishResult res = pub.publish(std::span(reinterpret_cast<const std::byte*>(r.data), r.len));
      if (res == PublishResult::WouldBlock) {
        next_publisher_ = i;  // it goes first next time
        return done;
      }
      c.view.publish.pop();
      ++done;
      ++mine;
      if (res == PublishResult::Ok) {
        ++c.messages_in;
        c.bytes_in += r.len;
        c.view.header->published.store(c.messages_in, std::memory_order_release);
      } else if (res == PublishResult::TooLarge) {
        ++c.too_large;
        ++counters_.publish_too_large;
      } else {
        ++c.publish_failed;
        ++counters_.publish_failed;
        return done;  // the stream failed: the daemon's loop sees it
      }
    }
  }
  if (n > 0) next_publisher_ = (next_publisher_ + 1) % n;
  return done;
}

void ClientTable::notify(Local& c, const ipc::Notice& n) {
  if (!c.ready || c.gone) return;
  if (c.view.notices.push(n)) return;
  if (c.view.notices.corrupt()) cut_off(c, CutOff::NoticeRing);
  else ++counters_.notices_lost;
}

// A subscriber that leaves what waits in its ring untaken for evict_after
// has stopped (a stopped process, a hung thread, a client that never
// reads): it goes, whether or not its ring is full yet.
void ClientTable::watch_reading(Local& c, uint64_t now_ns) {
  const uint64_t claim = c.view.delivery.consumer_claim();
  if (claim != c.seen_claim || claim == c.view.delivery.produced()) {
    c.seen_claim = claim;
    c.reading_ns = now_ns;
  } else if (now_ns - c.reading_ns > limits_.evict_after_ns) {
    evict(c, now_ns, Eviction::NotReading);
  }
}

// The client learns it from its header and notice ring, which stay in its
// own mapping, and from its socket's hang-up; its slot and memory are free
// at the next poll.
void ClientTable::evict(Local& c, uint64_t now_ns, Eviction why) {
  c.evicted = true;
  c.view.header->evicted.store(1, std::memory_order_release);
  notify(c, ipc::Notice{ipc::Notice::Evicted, UINT32_MAX, now_ns});
  ++counters_.evictions;
  ++counters_.evicted[static_cast<size_t>(why)];
  c.gone = true;
  ::shutdown(c.fd, SHUT_RDWR);
}

bool ClientTable::deliver(const StreamMessage& m, uint64_t now_ns) {
  const uint64_t offer = offers_ + 1;
  bool all = true;
  const uint64_t len = sizeof(ipc::DeliveredHead) + m.data.size();
  for (auto& cp : clients_) {
    Local& c = *cp;
    if (!c.subscribes() || c.gone || c.evicted || c.closing || c.last_offer >= offer) continue;
    uint8_t* at = c.view.delivery.reserve(len, 0);
    if (at == nullptr) {
      if (c.view.delivery.corrupt()) {
        cut_off(c, CutOff::DeliveryRing);
        continue;
      }
      if (c.blocked_since == 0) {
        c.blocked_since = now_ns;
        ++counters_.full_waits;
      } else if (now_ns - c.blocked_since > limits_.evict_after_ns) {
        evict(c, now_ns, Eviction::RingFull);
        continue;
      }
      all = false;
      continue;
    }
    const ipc::DeliveredHead dh{m.seq, m.timestamp_ns, m.publisher, m.stream, 0};
    std::memcpy(at, &dh, sizeof dh);
    if (!m.data.empty()) std::memcpy(at + sizeof dh, m.data.data(), m.data.size());
    c.view.delivery.commit();
    c.blocked_since = 0;
    c.last_offer = offer;
    ++c.messages_out;
    c.bytes_out += m.data.size();
    c.view.header->delivered.store(c.messages_out, std::memory_order_release);
  }
  if (all) offers_ = offer;
  return all;
}

void ClientTable::notify_all(const ipc::Notice& n) {
  for (auto& c : clients_) notify(*c, n);
}

void ClientTable::stopping() {
  if (stopping_) return;
  stopping_ = true;
  const uint64_t now = clock_ns();
  for (auto& c : clients_) {
    if (!c->ready || c->gone) continue;
    c->view.header->daemon_stopping.store(1, std::memory_order_release);
    notify(*c, ipc::Notice{ipc::Notice::ShuttingDown, UINT32_MAX, now});
  }
}

std::vector<ClientInfo> ClientTable::clients() const {
  std::vector<ClientInfo> out;
  for (const auto& c : clients_)
    if (c->ready && !c->gone)
      out.push_back(ClientInfo{c->id, c->name, c->role, c->cred.pid, c->cred.uid, c->messages_in, c->bytes_in,
                               c->messages_out, c->bytes_out, c->too_large, c->publish_failed, c->evicted});
  return out;
}

}  // namespace lanecast::daemon
