#include "ipc/client_file.h"

#include <algorithm>
#include <new>

namespace lanecast::ipc {
namespace {

uint64_t align64(uint64_t n) { return (n + 63) & ~uint64_t{63}; }
uint64_t round8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
bool ring_size_ok(uint64_t n) { return n >= kMinRing && n <= kMaxRing; }

}  // namespace

std::optional<ClientLayout> client_layout(Role role, uint64_t publish_bytes, uint64_t delivery_bytes) {
  if (!valid_role(static_cast<uint8_t>(role))) return std::nullopt;
  ClientLayout l;
  l.role = role;
  uint64_t at = align64(sizeof(ClientHeader));
  l.notice = at;
  at = align64(at + RecordRing::bytes_for(NoticeRing::capacity()));
  if (publishes(role)) {
    if (!ring_size_ok(publish_bytes)) return std::nullopt;
    l.publish_capacity = round8(publish_bytes);
    l.publish = at;
    at = align64(at + RecordRing::bytes_for(l.publish_capacity));
  }
  if (subscribes(role)) {
    if (!ring_size_ok(delivery_bytes)) return std::nullopt;
    l.delivery_capacity = round8(delivery_bytes);
    l.delivery = at;
    at = align64(at + RecordRing::bytes_for(l.delivery_capacity));
  }
  l.bytes = at;
  return l;
}

DaemonView make_client_file(void* map, const ClientLayout& l, const ClientIdentity& id) {
  auto* base = static_cast<uint8_t*>(map);
  DaemonView v;
  v.header = new (base) ClientHeader{};
  ClientHeader& h = *v.header;
  h.version = kFormatVersion;
  h.client_id = id.client_id;
  h.rank = id.rank;
  h.group_size = id.group_size;
  h.role = static_cast<uint8_t>(l.role);
  h.file_bytes = l.bytes;
  h.notice_offset = l.notice;
  h.publish_offset = l.publish;
  h.delivery_offset = l.delivery;
  h.publish_capacity = l.publish_capacity;
  h.delivery_capacity = l.delivery_capacity;
  h.max_message = id.max_message;
  v.notices = NoticeRing(RecordRing::fresh(base + l.notice, NoticeRing::capacity()));
  if (l.publish != 0) {
    v.publish = RecordRing::fresh(base + l.publish, l.publish_capacity);
    h.max_message = std::min<uint64_t>(h.max_message, v.publish.max_record());
  }
  if (l.delivery != 0) v.delivery = RecordRing::fresh(base + l.delivery, l.delivery_capacity);
  std::atomic_thread_fence(std::memory_order_release);
  h.magic = kClientMagic;
  return v;
}

std::optional<ClientView> open_client_file(void* map, size_t bytes, std::string* why) {
  auto refuse = [&](const char* what) -> std::optional<ClientView> {
    if (why != nullptr) *why = what;
    return std::nullopt;
  };
  if (map == nullptr || bytes < sizeof(ClientHeader)) return refuse("smaller than its header");
  auto* base = static_cast<uint8_t*>(map);
  auto* h = reinterpret_cast<ClientHeader*>(base);
  // Every word read once, into this side's memory, then checked there.
  const uint64_t magic = h->magic;
  const uint32_t version = h->version;
  const uint8_t role = h->role;
  ClientLayout claimed;
  claimed.publish_capacity = h->publish_capacity;
  claimed.delivery_capacity = h->delivery_capacity;
  claimed.notice = h->notice_offset;
  claimed.publish = h->publish_offset;
  claimed.delivery = h->delivery_offset;
  claimed.bytes = h->file_bytes;
  ClientIdentity id{h->client_id, h->rank, h->group_size, h->max_message};
  if (magic != kClientMagic) return refuse("not a lanecast client file (magic)");
  if (version != kFormatVersion) return refuse("a client file of another version");
  if (!valid_role(role)) return refuse("no role");
  const auto lay = client_layout(static_cast<Role>(role), claimed.publish_capacity, claimed.delivery_capacity);
  if (!lay) return refuse("ring sizes out of range");
  if (lay->publish_capacity != claimed.publish_capacity || lay->delivery_capacity != claimed.delivery_capacity ||
      lay->notice != claimed.notice || lay->publish != claimed.publish || lay->delivery != claimed.delivery ||
      lay->bytes != claimed.bytes)
    return refuse("its header's offsets are not the layout its sizes make");
  if (lay->bytes != bytes) return refuse("not the size its header says");
  ClientView v;
  v.header = h;
  v.layout = *lay;
  v.id = id;
  v.notices = NoticeRing(RecordRing::shared(reinterpret_cast<RecordRingHeader*>(base + lay->notice), NoticeRing::capacity()));
  if (!v.notices.valid()) return refuse("its notice ring is not laid out");
  if (lay->publish != 0) {
    v.publish = RecordRing::shared(reinterpret_cast<RecordRingHeader*>(base + lay->publish), lay->publish_capacity);
    if (!v.publish.valid()) return refuse("its publish ring is not laid out");
    v.id.max_message = std::min<uint64_t>(v.id.max_message, v.publish.max_record());
  }
  if (lay->delivery != 0) {
    RecordRing d = RecordRing::shared(reinterpret_cast<RecordRingHeader*>(base + lay->delivery), lay->delivery_capacity);
    if (!d.valid()) return refuse("its delivery ring is not laid out");
    v.delivery = DeliveryReader(d);
  }
  return v;
}

}  // namespace lanecast::ipc
