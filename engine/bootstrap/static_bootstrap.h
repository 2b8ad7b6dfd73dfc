// The static bootstrap: every address and the epoch come from the group
// file; nothing is exchanged. For fixed appliances and for testing the
// others against.
#pragma once

#include <memory>

#include "engine/bootstrap/endpoints.h"

namespace lanecast::engine::bootstrap {

std::unique_ptr<Bootstrap> make_static_bootstrap(const GroupSpec& spec);

}  // namespace lanecast::engine::bootstrap
