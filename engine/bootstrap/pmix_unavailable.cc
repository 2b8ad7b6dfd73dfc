// make_pmix_bootstrap in a build without PMIx (meson -Dpmix=disabled, or no
// libpmix-dev when the build was configured): a pmix group cannot be joined,
// and says how to fix it.
#include <stdexcept>

#include "engine/bootstrap/pmix_bootstrap.h"

namespace lanecast::engine::bootstrap {

std::unique_ptr<Bootstrap> make_pmix_bootstrap(const GroupSpec& spec) {
  throw std::runtime_error((spec.source.empty() ? spec.name : spec.source) +
                           ": the group's bootstrap is pmix, but lanecast was built without PMIx "
                           "(apt-get install libpmix-dev, rebuild)");
}

}  // namespace lanecast::engine::bootstrap
