#include "engine/bootstrap/record_table.h"

#include <stdexcept>
#include <variant>

#include "engine/bootstrap/endpoint_record.h"

namespace lanecast::engine::bootstrap {
namespace {

Endpoint checked(const GroupSpec& spec, uint64_t digest, const std::optional<std::vector<uint8_t>>& bytes, uint32_t r,
                 const std::string& where, const std::string& absent) {
  const std::string rank = "rank " + std::to_string(r);
  if (!bytes) throw std::runtime_error(where + ": " + rank + " " + absent);
  auto decoded = decode_record(*bytes);
  if (const std::string* bad = std::get_if<std::string>(&decoded))
    throw std::runtime_error(where + ": " + rank + "'s endpoint record is unusable: " + *bad);
  const EndpointRecord& rec = std::get<EndpointRecord>(decoded);
  if (rec.endpoint.rank != r)
    throw std::runtime_error(where + ": " + rank + "'s endpoint record says rank " + std::to_string(rec.endpoint.rank));
  if (rec.spec_digest != digest || rec.endpoint.lanes.size() != spec.lanes)
    throw std::runtime_error(where + ": " + rank +
                             " was started with other group settings (name, size, lanes, algorithm, segment, "
                             "message limit, window or timeout differ)");
  return rec.endpoint;
}

// Two members behind one port (two ranks started on one interface) would
// take each other's frames.
void refuse_shared_addresses(const EndpointTable& t, const std::string& where) {
  for (size_t a = 0; a < t.members.size(); ++a)
    for (size_t b = a + 1; b < t.members.size(); ++b)
      for (size_t l = 0; l < t.members[a].lanes.size(); ++l)
        if (t.members[a].lanes[l] == t.members[b].lanes[l])
          throw std::runtime_error(where + ": ranks " + std::to_string(a) + " and " + std::to_string(b) +
                                   " have the same address " + format_address(t.members[a].lanes[l]) + " on lane " +
                                   std::to_string(l) + " (one port for two members?)");
}

}  // namespace

EndpointTable table_from_records(const GroupSpec& spec, const std::vector<std::optional<std::vector<uint8_t>>>& records,
                                 const std::string& where, const std::string& absent) {
  const uint64_t digest = spec_digest(spec);
  if (records.size() != spec.members.size())
    throw std::runtime_error(where + ": " + std::to_string(records.size()) + " endpoint records for a group of " +
                             std::to_string(spec.members.size()));
  EndpointTable table;
  for (uint32_t r = 0; r < records.size(); ++r) table.members.push_back(checked(spec, digest, records[r], r, where, absent));
  refuse_shared_addresses(table, where);
  table.epoch = epoch_of(spec.id, table.members);
  return table;
}

}  // namespace lanecast::engine::bootstrap
