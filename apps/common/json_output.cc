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

void print_json_rows(const std::vector<Json>& rows, std::FILE* to) {
  std::fprintf(to, "[\n");
  for (size_t i = 0; i < rows.size(); ++i)
    std::fprintf(to, "  %s%s\n", json_text(rows[i]).c_str(), i + 1 < rows.size() ? "," : "");
  std::fprintf(to, "]\n");
}

double rounded(double v, int decimals) {
  if (!std::isfinite(v)) return v;  // nlohmann prints null for these
  const double scale = std::pow(10.0, decimals);
  return std::round(v * scale) / scale;
}

}  // namespace lanecast::apps
