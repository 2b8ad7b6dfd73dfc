// locked_calls(): each entry of the table is Locked<member>::call, which
// takes the lock and calls the same member of the inner table.
#include "tests/verbs/locked_calls.h"

#include <mutex>
#include <type_traits>
#include <utility>

namespace lanecast::drivers::verbs::model {
namespace {

const VerbsCalls* g_inner = nullptr;
std::recursive_mutex g_lock;

template <auto Member, class Fn>
struct Locked;
template <auto Member, class R, class... A>
struct Locked<Member, R (*)(A...)> {
  static R call(A... a) {
    std::lock_guard<std::recursive_mutex> hold(g_lock);
    return (g_inner->*Member)(a...);
  }
};
template <auto Member>
constexpr auto locked =
    &Locked<Member, std::remove_cvref_t<decltype(std::declval<const VerbsCalls&>().*Member)>>::call;

}  // namespace

const VerbsCalls& locked_calls(const VerbsCalls& inner) {
  g_inner = &inner;
  using V = VerbsCalls;
  static const VerbsCalls table{
      "ud-model, locked",
      locked<&V::get_device_list>, locked<&V::free_device_list>, locked<&V::get_device_name>,
      locked<&V::open_device>, locked<&V::close_device>, locked<&V::query_device>, locked<&V::query_port>,
      locked<&V::query_gid_ex>, locked<&V::alloc_pd>, locked<&V::dealloc_pd>, locked<&V::reg_mr>,
      locked<&V::dereg_mr>, locked<&V::create_cq>, locked<&V::destroy_cq>, locked<&V::create_qp>,
      locked<&V::modify_qp>, locked<&V::destroy_qp>, locked<&V::create_ah>, locked<&V::destroy_ah>,
      locked<&V::attach_mcast>, locked<&V::detach_mcast>, locked<&V::create_comp_channel>,
      locked<&V::destroy_comp_channel>, locked<&V::req_notify_cq>, locked<&V::get_cq_event>,
      locked<&V::ack_cq_events>, locked<&V::post_send>, locked<&V::post_recv>, locked<&V::poll_cq>,
      locked<&V::create_event_channel>, locked<&V::destroy_event_channel>, locked<&V::create_id>,
      locked<&V::destroy_id>, locked<&V::bind_addr>, locked<&V::join_multicast>, locked<&V::leave_multicast>,
      locked<&V::wait_cm_event>, locked<&V::get_cm_event>, locked<&V::ack_cm_event>,
  };
  return table;
}

}  // namespace lanecast::drivers::verbs::model
