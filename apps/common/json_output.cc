#include "apps/common/json_output.h"

#include <cmath>

namespace lanecast::apps {

std::string json_text(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

void print_json(const Json& j, std::FILE* to, int indent) {
  const std::string text = json_text(j, indent);
  std::fwrite(text.data(), 1, text.size(), to);
  std::fputc('\n', to);
}

double rounded(double v, int decimals) {
  if (!std::isfinite(v)) return v;  // nlohmann prints null for these
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

}  // namespace lanecast::apps
