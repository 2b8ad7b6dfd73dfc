// The exchange bootstrap: the application carries the endpoint records
// itself (GroupSpec::exchange, lanecast/group_spec.h) - liblanecast-mpi
// passes one built on MPI's allgather over the communicator - so the group
// needs no file of addresses, no hellos on the wire and no PMIx server.
// This member's record (endpoint_record.h) goes in; every member's comes
// back, checked as the PMIx bootstrap checks what its launcher's store held
// (record_table.h). The epoch follows the discovery rule, so every join
// forms a new incarnation.
#pragma once

#include <memory>

#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

// Throws std::invalid_argument when the spec has no exchange function.
std::unique_ptr<Bootstrap> make_exchange_bootstrap(const GroupSpec& spec);

}  // namespace lanecast::engine::bootstrap
