#include "engine/bootstrap/pmix_session.h"

#include <pmix.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <utility>

namespace lanecast::engine::bootstrap {
namespace {

std::string why(pmix_status_t rc) { return std::string(PMIx_Error_string(rc)) + " (" + std::to_string(rc) + ")"; }

// The first PMIx_Init that failed, said again to every later session. A
// failed PMIx_Init still counts the library as initialised, so a second one
// would "succeed" without a server; and PMIx_Finalize after it crashes
// libpmix 4.2.2 when the environment named a server that could not be
// reached. So a failed init is neither finalised nor tried again.
std::string& failed_init() {
  static std::string message;
  return message;
}

pmix_proc_t proc_of(const std::string& nspace, pmix_rank_t rank) {
  pmix_proc_t p;
  PMIX_PROC_CONSTRUCT(&p);
  PMIX_LOAD_PROCID(&p, nspace.c_str(), rank);
  return p;
}

}  // namespace

PmixSession::PmixSession(std::string context) : context_(std::move(context)) {
  if (!failed_init().empty()) throw std::runtime_error(context_ + ": " + failed_init());
  // A launcher's PMIx server puts these in every process it starts; without
  // them PMIx_Init would make this process a job of its own (a singleton).
  if (std::getenv("PMIX_NAMESPACE") == nullptr || std::getenv("PMIX_RANK") == nullptr)
    throw std::runtime_error(context_ +
                             ": not started by a PMIx launcher (mpirun/prterun/srun): no PMIX_NAMESPACE or "
                             "PMIX_RANK in the environment");
  pmix_proc_t me;
  PMIX_PROC_CONSTRUCT(&me);
  const pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
  if (rc != PMIX_SUCCESS) {
    failed_init() = "PMIx_Init failed: " + why(rc);
    if (rc == PMIX_ERR_UNREACH)
      failed_init() += ": the launcher's PMIx server cannot be reached (a process in another network namespace "
                       "than mpirun needs PMIX_MCA_ptl_tcp_remote_connections=1 and PMIX_MCA_ptl_tcp_if_include "
                       "exported with -x; docs/groups.md)";
    throw std::runtime_error(context_ + ": " + failed_init());
  }
  nspace_ = me.nspace;
  rank_ = me.rank;
}

PmixSession::~PmixSession() { PMIx_Finalize(nullptr, 0); }

uint32_t PmixSession::job_size() const {
  const pmix_proc_t job = proc_of(nspace_, PMIX_RANK_WILDCARD);
  pmix_value_t* v = nullptr;
  const pmix_status_t rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &v);
  if (rc != PMIX_SUCCESS || v == nullptr)
    throw std::runtime_error(context_ + ": the launcher gives no job size (PMIX_JOB_SIZE): " + why(rc));
  uint64_t size = 0;
  bool known = true;
  switch (v->type) {
    case PMIX_UINT32: size = v->data.uint32; break;
    case PMIX_UINT64: size = v->data.uint64; break;
    case PMIX_SIZE: size = v->data.size; break;
    default: known = false;
  }
  const pmix_data_type_t type = v->type;
  PMIX_VALUE_RELEASE(v);
  if (!known || size > UINT32_MAX)
    throw std::runtime_error(context_ + ": PMIX_JOB_SIZE is not a count (PMIx type " + std::to_string(type) + ")");
  return static_cast<uint32_t>(size);
}

void PmixSession::publish(const std::string& key, std::span<const uint8_t> bytes) {
  if (key.size() > PMIX_MAX_KEYLEN)
    throw std::runtime_error(context_ + ": key '" + key + "' is longer than PMIx allows");
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  // PMIx_Put copies the value; the cast only satisfies its C signature.
  v.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(bytes.data()));
  v.data.bo.size = bytes.size();
  pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &v);
  if (rc != PMIX_SUCCESS) throw std::runtime_error(context_ + ": PMIx_Put of '" + key + "' failed: " + why(rc));
  rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) throw std::runtime_error(context_ + ": PMIx_Commit failed: " + why(rc));
}

void PmixSession::fence_collect(double timeout_ms) {
  const pmix_proc_t job = proc_of(nspace_, PMIX_RANK_WILDCARD);
  // PMIx counts whole seconds. libpmix's server keeps the time (tried with
  // Open MPI 4.1's mpirun: the fence returns PMIX_ERR_TIMEOUT on time).
  const int seconds = std::max(1, static_cast<int>(std::ceil(timeout_ms / 1000.0)));
  bool collect = true;
  pmix_info_t info[2];
  PMIX_INFO_CONSTRUCT(&info[0]);
  PMIX_INFO_CONSTRUCT(&info[1]);
  PMIx_Info_load(&info[0], PMIX_COLLECT_DATA, &collect, PMIX_BOOL);
  PMIx_Info_load(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  const pmix_status_t rc = PMIx_Fence(&job, 1, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc == PMIX_ERR_TIMEOUT)
    throw std::runtime_error(context_ + ": rank " + std::to_string(rank_) + " gave up waiting in the PMIx fence after " +
                             std::to_string(seconds) + " s (bootstrap_timeout_ms " +
                             std::to_string(static_cast<long long>(timeout_ms)) +
                             "): not every process of the job reached it");
  if (rc != PMIX_SUCCESS) throw std::runtime_error(context_ + ": PMIx_Fence failed: " + why(rc));
}

std::optional<std::vector<uint8_t>> PmixSession::fetch(uint32_t rank, const std::string& key) const {
  const pmix_proc_t who = proc_of(nspace_, rank);
  bool optional = true;
  pmix_info_t info;
  PMIX_INFO_CONSTRUCT(&info);
  PMIx_Info_load(&info, PMIX_OPTIONAL, &optional, PMIX_BOOL);
  pmix_value_t* v = nullptr;
  const pmix_status_t rc = PMIx_Get(&who, key.c_str(), &info, 1, &v);
  PMIX_INFO_DESTRUCT(&info);
  if (rc == PMIX_ERR_NOT_FOUND) return std::nullopt;
  if (rc != PMIX_SUCCESS || v == nullptr)
    throw std::runtime_error(context_ + ": PMIx_Get of rank " + std::to_string(rank) + "'s '" + key +
                             "' failed: " + why(rc));
  if (v->type != PMIX_BYTE_OBJECT) {
    const pmix_data_type_t type = v->type;
    PMIX_VALUE_RELEASE(v);
    throw std::runtime_error(context_ + ": rank " + std::to_string(rank) + "'s '" + key +
                             "' is not bytes (PMIx type " + std::to_string(type) + ")");
  }
  std::vector<uint8_t> out;
  if (v->data.bo.bytes != nullptr)
    out.assign(reinterpret_cast<const uint8_t*>(v->data.bo.bytes),
               reinterpret_cast<const uint8_t*>(v->data.bo.bytes) + v->data.bo.size);
  PMIX_VALUE_RELEASE(v);
  return out;
}

}  // namespace lanecast::engine::bootstrap
