// The PMIx bootstrap: members started by a job launcher (Open MPI's mpirun,
// prterun, srun) find each other through the launcher's key-value store
// instead of the wire. This process's rank is its PMIx rank and the group is
// the whole job. Each member puts its endpoint record (endpoint_record.h)
// under a key naming the group, one fence over the job collects every
// record, and each member reads every rank's. The epoch follows the
// discovery rule (epoch_of: the group id and every member's incarnation), so
// a job launched again forms a new epoch.
//
// Refused, naming the numbers: a rank other than the PMIx rank, a job of
// another size than the group, a member with another group file (its
// record's digest), a record that is missing, malformed or of another
// version, two ranks at one address. A fence that does not complete within
// the spec's bootstrap timeout fails naming it.
//
// When lanecast is built without PMIx (meson -Dpmix=disabled, or no
// libpmix-dev), make_pmix_bootstrap throws saying so.
#pragma once

#include <memory>

#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

std::unique_ptr<Bootstrap> make_pmix_bootstrap(const GroupSpec& spec);

}  // namespace lanecast::engine::bootstrap
