// An in-process MODEL of InfiniBand / RoCE unreliable-datagram (UD) queue
// pairs behind the verbs seam (drivers/verbs/verbs_calls.h): a test double on
// which the verbs port's logic is unit-tested without an adapter. It plays the
// adapters, the wire and the subnet administrator in one process, and copies
// bytes as the DMA engines would. It is NOT evidence that anything works on
// hardware: it is what the rdma-core documentation and the IB specification
// say, as understood by whoever wrote it, and a driver that passes here may
// still fail on a real HCA (timing, resource limits, firmware, the SM).
//
// Single-threaded use only: no locks. Only one UdModel may exist at a time
// (the table's plain functions find it through a static pointer).
//
// What the model does (as hardware does):
//  1. Devices. add_device() adds an adapter "model_N" with one port (1).
//     get_device_list(&n) returns a nullptr-terminated array that
//     free_device_list frees. IB ports get LIDs 1, 2, 3... in the order they
//     are added and one GID (index 0, IBV_GID_TYPE_IB): fe80::0002:c903:00NN:NNNN,
//     the subnet prefix and the port's GUID. RoCE ports have LID 0, link
//     layer Ethernet and two GIDs: 0 = fe80::<GUID> (RoCE v1), 1 = the RoCE v2
//     IPv4-mapped ::ffff:10.77.0.(N+1). query_port says ACTIVE, the spec's MTU
//     as max and active MTU, port_cap_flags 0. query_device gives the
//     Options' limits (max_mcast_grp 1024, max_total_mcast_qp_attach 8192,
//     one physical port, max_qp 1 << 16). A port other than 1, or a GID index
//     outside the table: EINVAL. Ports of different link layers are on
//     different wires: IB never reaches RoCE.
//  2. Memory. reg_mr records [addr, addr + length), its access flags and a
//     unique lkey (rkey = lkey); dereg_mr forgets it. Buffers are checked
//     when the adapter touches them (a send's gather, a receive's scatter),
//     not when a request is posted.
//  3. CQs hold at most `entries` completions (> max_cqe: nullptr, EINVAL);
//     poll_cq returns up to n, oldest first. A completion that would exceed
//     the capacity overruns the CQ (counters().cq_overruns): it is lost and
//     poll_cq returns -1 from then on, as an adapter raising
//     IBV_EVENT_CQ_ERR does.
//  4. QPs are UD only, with caps inside the device's limits (written back:
//     max_inline_data becomes the model's max_inline); numbers are unique,
//     24-bit and not consecutive. States: RESET -INIT(pkey_index 0, port 1,
//     qkey)- INIT -RTR- RTR -RTS(sq_psn)- RTS; the optional UD attributes
//     (INIT->RTR: pkey_index, qkey; RTR->RTS: qkey) are accepted, RTS->RTS
//     needs qkey and changes it; any state may go to RESET or ERR (mask
//     IBV_QP_STATE alone); anything else is EINVAL. ERR flushes every posted
//     receive, and every send WR posted since the last one that produced a
//     completion, with IBV_WC_WR_FLUSH_ERR completions; RESET discards them
//     without completions. destroy_qp of a QP still attached to a multicast
//     group: EBUSY (as the kernel refuses it).
//  5. post_recv in INIT, RTR or RTS (else EINVAL, *bad = the first WR);
//     num_sge <= max_recv_sge (EINVAL); a full receive queue (max_recv_wr
//     outstanding): ENOMEM with *bad at the first WR not posted, the earlier
//     ones staying posted.
//  6. post_send in RTS only (EINVAL), IBV_WR_SEND or IBV_WR_SEND_WITH_IMM,
//     num_sge <= max_send_sge, wr.ud.ah an AH of the QP's PD; IBV_SEND_INLINE
//     only up to max_inline_data (then lkeys are not checked). A WR holds a
//     send-queue slot until a completion of it or of a LATER WR has been
//     POLLED (selective signalling): a QP that never signals fills its
//     max_send_wr slots and gets ENOMEM (*bad). Each WR runs at once, inside
//     post_send:
//     a. gather: each sge inside an MR of the QP's PD with that lkey, else a
//        IBV_WC_LOC_PROT_ERR completion and the QP goes to ERR (the rest of
//        the list is flushed);
//     b. a message longer than the port's active MTU (256 << (mtu - 1)
//        bytes): IBV_WC_LOC_LEN_ERR, nothing sent, the QP stays in RTS;
//     c. destinations. Multicast: an AH is_global with a multicast dgid
//        (ff..., or ::ffff:224.0.0.0/4 as RoCE v2 maps IPv4 groups: the
//        kernel's rdma_is_multicast_addr()), on IB also a dlid >= 0xC000
//        that is the group's MLID, and remote_qpn 0xFFFFFF as the IB spec
//        requires. It reaches every QP attached to the MGID on every port the
//        SA has as a member (join_multicast), the sender's own QP only with
//        Options::multicast_loopback. Unicast: the port with the AH's dlid
//        (IB) or dgid (RoCE, or IB with is_global), the QP with remote_qpn
//        there. No destination at all: counters().no_such_qp, dropped as a
//        wire drops it;
//     d. per copy, in order: random loss (unicast_loss / multicast_loss, a
//        seeded std::mt19937_64) -> loss_drops; receiving QP not in RTR/RTS
//        -> state_drops; remote_qkey != its qkey -> qkey_drops; no posted
//        receive -> rnr_drops; receive sges shorter than 40 + length -> a
//        IBV_WC_LOC_LEN_ERR receive completion consuming it (len_errors);
//        a receive sge outside an MR with IBV_ACCESS_LOCAL_WRITE of that lkey
//        and PD -> IBV_WC_LOC_PROT_ERR and that QP goes to ERR. Else the
//        bytes are scattered: the first 40 are the GRH area. A global
//        sender writes a GRH there (IPv6 layout: 0x6 version, payload length
//        big-endian at 4, next header at 6 - 0x1B on IB and RoCE v1, 17 (UDP)
//        on RoCE v2 -, hop limit at 7, SGID = the sender port's GID at the
//        AH's sgid_index at 8..23, DGID at 24..39); a RoCE v2 sender with an
//        IPv4-mapped SGID writes an IPv4 header at 20..39 instead (0x45,
//        total length, protocol 17, source at 32..35, destination at 36..39)
//        and leaves 0..19 as they were, as rdma-core documents; a non-global
//        sender leaves all 40 as they were. The payload follows at 40. The
//        receive completion: SUCCESS, IBV_WC_RECV, byte_len 40 + length,
//        src_qp, slid (0 on RoCE), sl, IBV_WC_GRH if global, imm_data with
//        IBV_WC_WITH_IMM, pkey_index 0. Completions keep each QP's order;
//     e. a send completion (IBV_WC_SEND, SUCCESS) only when signaled
//        (IBV_SEND_SIGNALED or sq_sig_all); error completions always.
//  7. AHs: port 1; is_global required on RoCE; sgid_index inside the GID
//     table; IB without GRH needs a dlid. Else nullptr, errno EINVAL.
//  8. Multicast. attach_mcast: a multicast GID (as in 6c) on a UD QP (else
//     EINVAL), at most max_mcast_qp_attach QPs per MGID per device (ENOMEM),
//     attaching twice is a no-op; detach of what is not attached: EINVAL;
//     the lid is not checked (RoCE has none). The subnet
//     administrator, through librdmacm: event channels (fd -1), ids of
//     RDMA_PS_UDP only, bind_addr to a port's GID (AF_IB, or AF_INET6 on
//     RoCE) or RoCE v2 IPv4 (AF_INET) - the id's verbs is the device's most
//     recently opened context, and a device never opened is EADDRNOTAVAIL.
//     join_multicast (AF_IB / AF_INET6 MGID, or an AF_INET 224.0.0.0/4 group
//     on RoCE as ::ffff:a.b.c.d) makes the group on first join (MLIDs from
//     0xC001, never reused), records the port as a member and queues
//     RDMA_CM_EVENT_MULTICAST_JOIN: param.ud = {ah_attr for the group,
//     qp_num 0xFFFFFF, qkey RDMA_UDP_QKEY, private_data = the join's
//     context}. Options::fail_joins: RDMA_CM_EVENT_MULTICAST_ERROR, status
//     -ENETUNREACH, no membership. leave_multicast / destroy_id end
//     memberships. wait_cm_event: 1 if an event is queued, else 0 at once
//     (nothing arrives later). get_cm_event: the oldest event, or -1 EAGAIN.
//     destroy_id with an event got and not acked: -1 EBUSY (rdma-core would
//     block forever).
//  9. Trace (Options::trace): one line per call through the table, named as
//     rdma-core names it, with its arguments and result (wait_cm_event,
//     which has no rdma-core name, as "poll(channel N fd, T ms)"). Calls that
//     find nothing - poll_cq -> 0, wait_cm_event -> 0, get_cm_event EAGAIN -
//     and the same poll_cq failure repeated are held and written once as
//     "... (x N)" when a different line comes. Deliveries and drops are
//     "  wire: ..." lines after their post_send's line.
// 10. Counts per QP (kept after the QP is destroyed) and for the whole model.
// 11. Completion events (ud_model_events.cc). A CQ made with a completion
//     channel and armed by req_notify_cq raises one event for the next
//     completion queued after the arm, then is disarmed; the channel's
//     descriptor (an eventfd) is readable while events wait; get_cq_event
//     takes the oldest (EAGAIN when none); a CQ whose events were not all
//     acknowledged, or a channel CQs still use, cannot be destroyed (EBUSY).
// Teardown order is checked: dealloc_pd with MRs, QPs or AHs on it and
// destroy_cq under a QP are EBUSY, as the kernel answers; stricter than
// hardware, close_device with PDs, CQs or bound ids on it is EBUSY too, and
// destroy_event_channel with ids on it is refused (the channel stays, and
// live_objects() says so).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "drivers/verbs/verbs_calls.h"

namespace lanecast::drivers::verbs::model {

struct PortSpec {
  bool roce = false;
  ibv_mtu mtu = IBV_MTU_4096;
};

struct Options {
  double unicast_loss = 0, multicast_loss = 0;  // per delivered copy, seeded std::mt19937_64
  uint64_t seed = 1;
  bool multicast_loopback = false;  // a sender's own QP, if attached to the group, gets its multicast only when true
  uint32_t max_inline = 64, max_qp_wr = 4096, max_sge = 8, max_cqe = 65536, max_mcast_qp_attach = 8;
  bool trace = false;       // record every call made through the table (trace())
  bool fail_joins = false;  // the SA refuses joins: RDMA_CM_EVENT_MULTICAST_ERROR
};

struct QpCounts {
  uint64_t posted_recvs = 0, completed_recvs = 0;  // receive completions of any status
  uint64_t posted_sends = 0, completed_sends = 0;  // send completions of any status
  uint64_t rnr_drops = 0;                          // a datagram arrived with no receive posted
  uint64_t qkey_drops = 0, loss_drops = 0, len_errors = 0;
  uint64_t state_drops = 0;  // a datagram arrived while this QP was not in RTR / RTS
};

struct Counters {
  uint64_t datagrams_sent = 0, copies_delivered = 0;
  uint64_t rnr_drops = 0, qkey_drops = 0, loss_drops = 0;
  uint64_t no_such_qp = 0;  // a datagram with no destination at all
  uint64_t mtu_errors = 0, prot_errors = 0, cq_overruns = 0;
  uint64_t state_drops = 0;  // copies that found their QP outside RTR / RTS
};

namespace detail {
struct Fabric;
}

class UdModel {
 public:
  using PortSpec = model::PortSpec;
  using Options = model::Options;
  using QpCounts = model::QpCounts;
  using Counters = model::Counters;

  // Throws std::logic_error while another UdModel lives.
  explicit UdModel(const Options& options);
  ~UdModel();  // frees whatever the driver left
  UdModel(const UdModel&) = delete;
  UdModel& operator=(const UdModel&) = delete;

  // A device with one port (1), named "model_N", N from 0.
  std::string add_device(const PortSpec& spec = {});
  // The table bound to this model; its name is "ud-model".
  const VerbsCalls& calls() const;

  QpCounts qp_counts(uint32_t qp_num) const;  // zeros for a qpn never created
  Counters counters() const;
  const std::vector<std::string>& trace() const;
  void clear_trace();

  // For tests. Throw std::invalid_argument for an unknown device or index.
  uint16_t lid_of(const std::string& device) const;
  ibv_gid gid_of(const std::string& device, uint32_t index = 0) const;

  // Device lists, contexts, PDs, MRs, CQs, QPs, AHs, event channels, cm ids
  // and cm events not yet freed: 0 after a clean teardown.
  size_t live_objects() const;

 private:
  std::unique_ptr<detail::Fabric> fabric_;
};

// Internals, shared by ud_model.cc, ud_model_wire.cc and ud_model_addresses.cc:
// tests use UdModel only.
namespace detail {

using Gid = std::array<uint8_t, 16>;
Gid gid_key(const ibv_gid& gid);
std::string gid_text(const uint8_t* raw16);
// ff00::/8, or IPv4 multicast as RoCE v2 maps it (::ffff:224.0.0.0/100): the
// kernel's rdma_is_multicast_addr().
bool is_multicast(const uint8_t* raw16);

struct Device;
// Each object starts with the rdma-core struct it is handed out as.
struct Context {
  ibv_context verbs;
  Device* device;
  int index;
};
struct Pd {
  ibv_pd verbs;
  Context* ctx;
  int index;
  int users = 0;  // MRs, QPs, AHs
};
struct Mr {
  ibv_mr verbs;
  Pd* pd;
  int access;
};
struct Completion {
  ibv_wc wc;
  bool send;     // releases send-queue slots when polled
  uint64_t seq;  // the send WR's number on its QP
};
struct CompChannel;
struct Cq {
  ibv_cq verbs;
  Context* ctx;
  int index;
  size_t capacity;
  std::deque<Completion> entries{};
  bool overrun = false;
  int users = 0;  // QPs
  CompChannel* channel = nullptr;  // where its completion events go, if anywhere
  bool armed = false;              // req_notify_cq: the next completion makes an event
  unsigned events_got = 0, events_acked = 0;
};
// A completion channel: an eventfd (non-blocking, one count per event)
// stands for rdma-core's descriptor, so a core can poll()/ppoll() it.
struct CompChannel {
  ibv_comp_channel verbs;
  Context* ctx;
  int index;
  std::deque<Cq*> events{};
  int cqs = 0;  // CQs created on it
};
struct RecvWr {
  uint64_t wr_id;
  std::vector<ibv_sge> sges{};
};
struct Qp {
  ibv_qp verbs;
  Pd* pd;
  Cq* send_cq;
  Cq* recv_cq;
  Device* device;
  ibv_qp_cap cap;
  bool sig_all;
  uint32_t qkey = 0;
  std::deque<RecvWr> recvs{};
  // Send WRs are numbered from 0: [released, posted) hold slots;
  // [completed, posted) produced no completion yet (their wr_ids in
  // unretired), and an ERR flushes them.
  uint64_t sq_posted = 0, sq_released = 0, sq_completed = 0;
  std::deque<uint64_t> unretired{};
  std::vector<Gid> attached{};
};
struct Ah {
  ibv_ah verbs;
  Pd* pd;
  ibv_ah_attr attr;
  int index;
};
struct Device {
  ibv_device verbs;
  int index;
  PortSpec spec;
  uint16_t lid;
  std::array<ibv_gid, 2> gids;
  std::array<ibv_gid_type, 2> gid_types;
  uint32_t gid_count;
  std::vector<Context*> open{};                // open contexts, oldest first
  std::map<Gid, std::vector<Qp*>> attached{};  // attach_mcast, per MGID
};
struct Event;
struct Channel {
  rdma_event_channel verbs;
  int index;
  std::deque<Event*> queued{};
  int ids = 0;
};
struct Id {
  rdma_cm_id verbs;
  Channel* channel;
  int index;
  Device* device = nullptr;  // bound to
  std::vector<Gid> joined{};
  int unacked = 0;  // events got and not acked
};
struct Event {
  rdma_cm_event verbs;
  Id* id;
  bool got = false;
};
struct Group {
  uint16_t mlid;
  std::map<int, int> members{};  // device index -> ids joined through it
};

template <class T>
using Registry = std::unordered_map<const void*, std::unique_ptr<T>>;

template <class T>
T* find(const Registry<T>& registry, const void* p) {
  auto it = registry.find(p);
  return it == registry.end() ? nullptr : it->second.get();
}

struct Fabric {
  explicit Fabric(const Options& o) : opts(o), rng(o.seed) {}

  Options opts;
  std::mt19937_64 rng;
  std::vector<std::unique_ptr<Device>> devices{};
  Registry<std::vector<ibv_device*>> device_lists;
  Registry<Context> contexts;
  Registry<Pd> pds;
  Registry<Mr> mrs;
  Registry<Cq> cqs;
  Registry<Qp> qps;
  Registry<Ah> ahs;
  Registry<Channel> channels;
  Registry<CompChannel> comp_channels;
  Registry<Id> ids;
  Registry<Event> events;
  std::unordered_map<uint32_t, Mr*> mr_by_lkey;
  std::unordered_map<uint32_t, Qp*> qp_by_num;
  std::unordered_map<uint32_t, QpCounts> qp_counts;
  std::map<Gid, Group> groups{};
  Counters counters;
  uint32_t next_qpn = 0x1a2, next_lkey = 0x2f01;
  uint16_t next_mlid = 0xC001;
  // Numbers for the trace ("cq 1", "id 2"), one sequence per kind.
  int next_context = 1, next_pd = 1, next_cq = 1, next_ah = 1, next_channel = 1, next_id = 1, next_comp_channel = 1;
  std::vector<uint8_t> gathered{};  // the message being sent

  // The trace. Calls that find nothing are held as `idle` and written once,
  // with their count, when a different line comes.
  std::vector<std::string> lines{};
  std::string idle;
  uint64_t idle_count = 0;
  bool tracing() const { return opts.trace; }
  void trace(std::string line);
  void trace_idle(std::string line);
  size_t trace_slot();  // a line written later (a post_send's, after its wire lines)
  void flush_idle();

  Device* device_of(const ibv_device* d) const;
  Device* device_named(const std::string& name) const;
  bool unreferenced(const Context& ctx) const;
  size_t live() const;
  void free_all();
};

extern Fabric* current;  // the living model's state, or nullptr
// `current`; with errno ENODEV when no model lives (a driver calling after
// the test ended gets an error, not a crash).
Fabric* model();

std::string strf(const char* format, ...) __attribute__((format(printf, 1, 2)));
const char* state_name(ibv_qp_state state);
const char* status_name(ibv_wc_status status);
const char* rc_text(int rc);  // "0", or the errno's name

// The table's entries defined outside ud_model.cc.
ibv_comp_channel* create_comp_channel(ibv_context* context);
int destroy_comp_channel(ibv_comp_channel* channel);
int req_notify_cq(ibv_cq* cq, int solicited_only);
int get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context);
void ack_cq_events(ibv_cq* cq, unsigned int events);
// A completion was queued on `cq`: an armed CQ raises its event.
void completion_event(Fabric& f, Cq& cq);
int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask);
int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);
int poll_cq(ibv_cq* cq, int entries, ibv_wc* wc);
ibv_ah* create_ah(ibv_pd* pd, ibv_ah_attr* attr);
int destroy_ah(ibv_ah* ah);
int attach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
int detach_mcast(ibv_qp* qp, const ibv_gid* gid, uint16_t lid);
rdma_event_channel* create_event_channel();
void destroy_event_channel(rdma_event_channel* channel);
int create_id(rdma_event_channel* channel, rdma_cm_id** id, void* context, rdma_port_space ps);
int destroy_id(rdma_cm_id* id);
int bind_addr(rdma_cm_id* id, sockaddr* addr);
int join_multicast(rdma_cm_id* id, sockaddr* addr, void* context);
int leave_multicast(rdma_cm_id* id, sockaddr* addr);
int wait_cm_event(rdma_event_channel* channel, int timeout_ms);
int get_cm_event(rdma_event_channel* channel, rdma_cm_event** event);
int ack_cm_event(rdma_cm_event* event);
// Shared by the QP code and the subnet administrator.
void drop_membership(Fabric& f, Id& id, const Gid& mgid);

}  // namespace detail
}  // namespace lanecast::drivers::verbs::model
