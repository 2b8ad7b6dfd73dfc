// The endpoint table from every member's record, for the bootstraps that
// carry records through someone else's hands (pmix: the launcher's store;
// exchange: the application's own allgather). Both trust nothing of what
// came back: each record must decode, name the rank it stands for, carry
// this member's group digest and lane count, and no two members may share
// an address. The epoch follows discovery's rule (epoch_of).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

// records[r]: rank r's bytes as they arrived, nullopt when it left none.
// `where` starts every message; `absent` says why a record may be missing
// ("put no endpoint under 'K' (started with another group file?)").
// Throws std::runtime_error naming the rank and what is wrong.
EndpointTable table_from_records(const GroupSpec& spec, const std::vector<std::optional<std::vector<uint8_t>>>& records,
                                 const std::string& where, const std::string& absent);

}  // namespace lanecast::engine::bootstrap
