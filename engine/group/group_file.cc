// Group files (format: config/groups/README.md) read into a GroupSpec.
//
// They are written by hand for a testbed, so every mistake is an error that
// names the file, the line and what is allowed: std::invalid_argument
// "FILE:LINE: ...". Unknown keys are errors too, since a misspelt key would
// otherwise leave its default silently in force.
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "algos/registry.h"
#include "drivers/ethernet.h"
#include "engine/group/group_file_faults.h"
#include "engine/group/lane_port.h"
#include "engine/group/toml_fields.h"
#include "lanecast/group_spec.h"

namespace lanecast {
namespace {

constexpr int64_t kMaxU32 = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxMembers = 1024;
constexpr int64_t kMaxLanes = 4;
constexpr int64_t kMaxWindow = 4096;
constexpr int64_t kMinSegment = 64;
constexpr int64_t kMaxSegment = 9000;  // a jumbo frame's payload
constexpr int64_t kMaxOverhead = 1024;
constexpr uint64_t kMaxMessage = uint64_t{4} << 30;

constexpr std::array<std::string_view, 2> kTopKeys = {"group", "member"};
constexpr std::array<std::string_view, 36> kGroupKeys = {
    "name", "id", "epoch", "bootstrap", "bootstrap_timeout_ms", "lanes", "algo", "segment",
    "max_message", "window", "peer_timeout_ms", "port_rate_mbit", "port_overhead",
    "site_latency_us", "use_sites", "emulate_latency", "multicast", "mcast_root_delay_us",
    "mcast_sync_seed", "mcast_loss", "mcast_loss_seed", "mcast_repair", "stream_fanout", "stream_window",
    "stream_window_bytes", "stream_window_messages", "streams_per_member", "stream_delivery_bytes", "stream_report_us",
    "key_file", "stream_evict_after_ms", "faults", "rate_control", "stream_multicast", "stream_repair_us",
    "auto_rules"};
constexpr std::array<std::string_view, 4> kMemberKeys = {"rank", "site", "lanes", "macs"};
constexpr std::array<std::string_view, 3> kBootstraps = {"static", "discovery", "pmix"};

// "16M" -> 16 MiB; nullopt if malformed. Sizes past kMaxMessage come back as
// kMaxMessage + 1, so the caller's range check reports them, not an overflow.
std::optional<uint64_t> parse_size(std::string_view text) {
  size_t digits = 0;
  uint64_t value = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
    value = std::min(value * 10 + static_cast<uint64_t>(text[digits] - '0'), kMaxMessage + 1);
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  const std::string_view suffix = text.substr(digits);
  unsigned shift;
  if (suffix.empty()) shift = 0;
  else if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else return std::nullopt;
  return std::min(value << shift, kMaxMessage + 1);
}

// A member as read, with the nodes that later cross-checks point at.
struct MemberRead {
  MemberSpec spec;
  const toml::table* table;
  const toml::node* rank;
  const toml::node* site;  // nullptr: defaulted
  std::vector<const toml::node*> macs;
};

class GroupFileReader : TomlFields {
 public:
  explicit GroupFileReader(const std::string& file) : TomlFields(file) {}

  GroupSpec read(const std::string& text) {
    toml::table root;
    try {
      root = toml::parse(std::string_view(text), std::string_view(file_));
    } catch (const toml::parse_error& e) {
      fail(e.source(), "TOML syntax: " + std::string(e.description()));
    }
    reject_unknown_keys(root, "the file (top level)", kTopKeys);
    GroupSpec spec;
    const toml::node* group = root.get("group");
    if (group == nullptr) fail(root, "missing [group] table (required: it holds the group's name)");
    if (!group->is_table()) fail(*group, "group must be a table ([group]), not " + type_name(*group));
    read_group(*group->as_table(), spec);
    read_members(root, spec);
    FaultTableReader(file_, kMaxMembers).check_ranks(*group->as_table(), spec);
    return spec;
  }

 private:
  void read_group(const toml::table& g, GroupSpec& spec) const {
    if (const toml::node* old = g.get("max_streams"))
      fail(*old, "group.max_streams is gone: every member keeps a slot for each stream any member may publish; "
                 "say how many each member publishes with group.streams_per_member (1.." +
                     std::to_string(kMaxStreamsPerMember) + ", default 1)");
    reject_unknown_keys(g, "[group]", kGroupKeys);
    const std::optional<std::string> name = string(g, "name", "group.name");
    if (!name) fail(g, "[group] lacks name (required: a string naming the group in messages)");
    if (name->empty()) fail(*g.get("name"), "group.name is empty; allowed: any non-empty string");
    spec.name = *name;
    if (auto v = integer(g, "id", "group.id", 1, kMaxU32)) spec.id = static_cast<uint32_t>(*v);
    if (auto v = integer(g, "epoch", "group.epoch", 0, kMaxU32)) spec.epoch = static_cast<uint32_t>(*v);
    if (auto v = string(g, "bootstrap", "group.bootstrap")) {
      if (std::find(kBootstraps.begin(), kBootstraps.end(), *v) == kBootstraps.end())
        fail(*g.get("bootstrap"), "group.bootstrap " + in_quotes(*v) + " is not a bootstrap; allowed: " +
                                      joined(kBootstraps, " | "));
      spec.bootstrap = *v;
    }
    if (spec.bootstrap == "static" && spec.epoch == 0) {
      const toml::node* epoch = g.get("epoch");
      fail(epoch != nullptr ? *epoch : static_cast<const toml::node&>(g),
           "bootstrap \"static\" needs a nonzero group.epoch (only discovery and pmix pick one); allowed 1.." +
               std::to_string(kMaxU32));
    }
    if (auto v = timeout_ms(g, "bootstrap_timeout_ms")) spec.bootstrap_timeout_ms = *v;
    if (auto v = integer(g, "lanes", "group.lanes", 1, kMaxLanes)) spec.lanes = static_cast<uint16_t>(*v);
    if (auto v = string(g, "algo", "group.algo")) {
      if (*v != "auto" && !algos::algo_by_name(*v)) {
        std::vector<std::string_view> names = {"auto"};
        for (const algos::AlgoInfo& a : algos::algorithms()) names.push_back(a.name);
        fail(*g.get("algo"), "group.algo " + in_quotes(*v) + " is not an algorithm; allowed: " + joined(names, " | "));
      }
      spec.algo = *v;
    }
    // Rules for "auto" (config/auto.rules' format; `lanecast tune` writes
    // them), read when the group is joined. A relative path is from the
    // group file, as key_file's.
    if (auto v = string(g, "auto_rules", "group.auto_rules")) {
      if (v->empty()) fail(*g.get("auto_rules"), "group.auto_rules is empty; allowed: the path of a rules file");
      spec.auto_rules_file = *v;
    }
    const std::string segments = "0 (from the ports' MTU) or " + std::to_string(kMinSegment) + ".." +
                                 std::to_string(kMaxSegment);
    if (auto v = integer(g, "segment", "group.segment", 0, kMaxSegment, segments)) {
      if (*v != 0 && *v < kMinSegment)
        fail(*g.get("segment"), "group.segment is " + std::to_string(*v) + ", out of range; allowed " + segments);
      spec.segment_bytes = static_cast<uint32_t>(*v);
    }
    read_max_message(g, spec);
    if (auto v = integer(g, "window", "group.window", 1, kMaxWindow)) spec.window = static_cast<uint32_t>(*v);
    if (auto v = timeout_ms(g, "peer_timeout_ms")) spec.peer_timeout_ms = *v;
    if (auto v = number(g, "port_rate_mbit", "group.port_rate_mbit", true)) spec.port_rate_mbit = *v;
    if (auto v = boolean(g, "rate_control", "group.rate_control"))
      spec.rate_control = *v ? GroupSpec::RateControl::On : GroupSpec::RateControl::Off;
    if (auto v = integer(g, "port_overhead", "group.port_overhead", 0, kMaxOverhead))
      spec.port_overhead_bytes = static_cast<uint32_t>(*v);
    read_site_latency(g, spec);
    if (auto v = boolean(g, "use_sites", "group.use_sites")) spec.use_sites = *v;
    if (auto v = boolean(g, "emulate_latency", "group.emulate_latency")) spec.emulate_latency = *v;
    if (spec.emulate_latency && spec.site_latency_us.empty())
      fail(*g.get("emulate_latency"), "group.emulate_latency is true but there is no group.site_latency_us to emulate");
    read_multicast(g, spec);
    read_streams(g, spec);
    // The group's secret lives in a file of its own, which only its owner
    // reads (AuthKey::from_file checks when the group is joined): a group
    // file is shared, a key is not. A relative path is from the group file.
    if (auto v = string(g, "key_file", "group.key_file")) {
      if (v->empty()) fail(*g.get("key_file"), "group.key_file is empty; allowed: the path of a key file");
      spec.key_file = *v;
    }
    FaultTableReader(file_, kMaxMembers).read(g, spec);
  }

  // Streams (StreamOptions, lanecast/group_spec.h).
  void read_streams(const toml::table& g, GroupSpec& spec) const {
    StreamOptions& s = spec.streams;
    if (auto v = integer(g, "stream_fanout", "group.stream_fanout", 0, kMaxMembers - 1, "0 (from algo) or 1..1023"))
      s.fanout = static_cast<uint32_t>(*v);
    if (auto v = integer(g, "stream_window", "group.stream_window", 16, 65536, "16..65536 frames"))
      s.window_batches = static_cast<uint32_t>(*v);
    if (auto v = read_bytes(g, "stream_window_bytes", 4096, uint64_t{1} << 34)) s.window_bytes = *v;
    if (auto v = integer(g, "stream_window_messages", "group.stream_window_messages", 1, kMaxU32))
      s.window_messages = static_cast<uint32_t>(*v);
    if (auto v = integer(g, "streams_per_member", "group.streams_per_member", 1, kMaxStreamsPerMember))
      s.streams_per_member = static_cast<uint32_t>(*v);
    if (auto v = read_bytes(g, "stream_delivery_bytes", 4096, uint64_t{1} << 34)) s.delivery_bytes = *v;
    if (auto v = number(g, "stream_evict_after_ms", "group.stream_evict_after_ms", true)) {
      if (*v > kMaxTimeoutMs)
        fail(*g.get("stream_evict_after_ms"), "group.stream_evict_after_ms is " + number_text(*v) +
                                                  ", out of range; allowed 0 (never) .. 3600000");
      s.evict_after_ms = *v;
    }
    if (auto v = boolean(g, "stream_multicast", "group.stream_multicast")) s.multicast = *v;
    if (auto v = number(g, "stream_repair_us", "group.stream_repair_us", true)) {
      if (*v > 1e6)
        fail(*g.get("stream_repair_us"), "group.stream_repair_us is " + number_text(*v) +
                                             ", out of range; allowed 0 (ten report intervals) .. 1000000");
      s.multicast_repair_us = *v;
    }
    if (auto v = number(g, "stream_report_us", "group.stream_report_us", true)) {
      if (*v > 1e6) fail(*g.get("stream_report_us"), "group.stream_report_us is " + number_text(*v) + ", out of range; allowed 0..1000000");
      s.report_us = *v;
    }
  }

  // A byte count: an integer, or a string like "4M" (K, M, G: powers of 1024).
  std::optional<uint64_t> read_bytes(const toml::table& g, const char* key, uint64_t lo, uint64_t hi) const {
    const toml::node* n = g.get(key);
    if (n == nullptr) return std::nullopt;
    const std::string name = std::string("group.") + key;
    const std::string allowed = "bytes as an integer or a string like \"64K\", \"4M\" (K, M, G: powers of 1024), " +
                                std::to_string(lo) + " .. " + std::to_string(hi);
    std::optional<uint64_t> bytes;
    if (n->is_integer()) {
      bytes = static_cast<uint64_t>(std::max<int64_t>(n->as_integer()->get(), 0));
    } else if (n->is_string()) {
      bytes = parse_size(n->as_string()->get());
      if (!bytes) fail(*n, name + " " + in_quotes(n->as_string()->get()) + " is malformed; allowed " + allowed);
    } else {
      fail(*n, name + " must be an integer or a string, not " + type_name(*n) + "; allowed " + allowed);
    }
    if (*bytes < lo || *bytes > hi) fail(*n, name + " is out of range; allowed " + allowed);
    return bytes;
  }

  void read_multicast(const toml::table& g, GroupSpec& spec) const {
    if (auto v = boolean(g, "multicast", "group.multicast")) spec.multicast = *v;
    if (auto v = number(g, "mcast_root_delay_us", "group.mcast_root_delay_us", true)) {
      if (*v * 1e-3 >= spec.peer_timeout_ms)
        fail(*g.get("mcast_root_delay_us"), "group.mcast_root_delay_us is " + number_text(*v) +
                                                ", not below the peer timeout; allowed 0 .. group.peer_timeout_ms x 1000");
      spec.mcast_root_delay_us = *v;
    }
    constexpr int64_t kMaxSeed = std::numeric_limits<int64_t>::max();
    if (auto v = integer(g, "mcast_sync_seed", "group.mcast_sync_seed", 0, kMaxSeed, "0 (off) or a seed"))
      spec.mcast_sync_seed = static_cast<uint64_t>(*v);
    if (auto v = string(g, "mcast_repair", "group.mcast_repair")) {
      if (*v != "request" && *v != "ring")
        fail(*g.get("mcast_repair"), "group.mcast_repair " + in_quotes(*v) + " is not a repair; allowed: request | ring");
      spec.mcast_repair_on_request = *v == "request";
    }
    if (auto v = number(g, "mcast_loss", "group.mcast_loss", true)) {
      if (*v >= 1) fail(*g.get("mcast_loss"), "group.mcast_loss is " + number_text(*v) + ", out of range; allowed 0 <= x < 1");
      spec.mcast_loss = *v;
    }
    if (auto v = integer(g, "mcast_loss_seed", "group.mcast_loss_seed", 0, kMaxSeed, "a seed"))
      spec.mcast_loss_seed = static_cast<uint64_t>(*v);
  }

  void read_max_message(const toml::table& g, GroupSpec& spec) const {
    const toml::node* n = g.get("max_message");
    if (n == nullptr) return;
    const std::string allowed =
        "bytes as an integer or a string like \"8M\", \"16M\", \"1G\" (K, M, G: powers of 1024), 1 .. 4G";
    std::optional<uint64_t> bytes;
    if (n->is_integer()) {
      bytes = static_cast<uint64_t>(std::max<int64_t>(n->as_integer()->get(), 0));
    } else if (n->is_string()) {
      bytes = parse_size(n->as_string()->get());
      if (!bytes)
        fail(*n, "group.max_message " + in_quotes(n->as_string()->get()) + " is malformed; allowed " + allowed);
    } else {
      fail(*n, "group.max_message must be an integer or a string, not " + type_name(*n) + "; allowed " + allowed);
    }
    if (*bytes < 1 || *bytes > kMaxMessage) fail(*n, "group.max_message is out of range; allowed " + allowed);
    spec.max_message_bytes = *bytes;
  }

  // sites x sites, one-way microseconds: >= 0, 0 from a site to itself.
  void read_site_latency(const toml::table& g, GroupSpec& spec) const {
    const toml::array* rows = array(g, "site_latency_us", "group.site_latency_us", "arrays of numbers");
    if (rows == nullptr) return;
    const size_t sites = rows->size();
    for (size_t i = 0; i < sites; ++i) {
      const toml::node& row_node = (*rows)[i];
      const std::string row_path = "group.site_latency_us[" + std::to_string(i) + "]";
      if (!row_node.is_array())
        fail(row_node, row_path + " must be an array of numbers, not " + type_name(row_node));
      const toml::array& row = *row_node.as_array();
      if (row.size() != sites)
        fail(row_node, "group.site_latency_us is not square: row " + std::to_string(i) + " has " +
                           count_of(row.size(), "entry", "entries") + " in " + count_of(sites, "row", "rows") +
                           "; allowed: one row per site, one entry per site");
      std::vector<double> values;
      for (size_t j = 0; j < sites; ++j) {
        const toml::node& cell = row[j];
        const std::string path = row_path + "[" + std::to_string(j) + "]";
        if (!cell.is_number()) fail(cell, path + " must be a number, not " + type_name(cell));
        const double v = number_of(cell);
        if (!std::isfinite(v) || v < 0)
          fail(cell, path + " is " + number_text(v) +
                         ", a negative or non-finite latency; allowed: a finite number >= 0");
        if (i == j && v != 0)
          fail(cell, path + " is " + number_text(v) + " on the diagonal; a site's latency to itself must be 0");
        values.push_back(v);
      }
      spec.site_latency_us.push_back(std::move(values));
    }
  }

  void read_members(const toml::table& root, GroupSpec& spec) const {
    const toml::node* list = root.get("member");
    const std::string count_allowed = "1.." + std::to_string(kMaxMembers) + " [[member]] tables";
    if (list == nullptr) fail(root, "no [[member]] tables; a group has " + count_allowed);
    if (list->is_array() && list->as_array()->empty()) fail(*list, "no members; a group has " + count_allowed);
    if (!list->is_array_of_tables())
      fail(*list, "member must be an array of tables ([[member]]), not " +
                      (list->is_array() ? "an array of other values" : type_name(*list)));
    const toml::array& entries = *list->as_array();
    if (entries.size() > static_cast<size_t>(kMaxMembers))
      fail(entries[static_cast<size_t>(kMaxMembers)],
           "too many members (" + std::to_string(entries.size()) + "); a group has " + count_allowed);
    std::vector<MemberRead> members;
    for (const toml::node& entry : entries) members.push_back(read_member(*entry.as_table(), spec));
    check_ranks(members);
    check_sites(members, spec);
    check_verbs(members, spec);
    check_macs(members, spec);
    spec.members.resize(members.size());
    for (MemberRead& m : members) spec.members[m.spec.rank] = std::move(m.spec);
  }

  MemberRead read_member(const toml::table& t, const GroupSpec& spec) const {
    reject_unknown_keys(t, "[[member]]", kMemberKeys);
    MemberRead m{{}, &t, t.get("rank"), t.get("site"), {}};
    const auto rank = integer(t, "rank", "member.rank", 0, kMaxU32);
    if (!rank) fail(t, "[[member]] lacks rank (required: 0..members-1)");
    m.spec.rank = static_cast<uint32_t>(*rank);
    if (auto v = integer(t, "site", "member.site", 0, kMaxU32)) m.spec.site = static_cast<uint32_t>(*v);

    const std::string lanes_allowed = "one string of DPDK devargs, or verbs:DEVICE:PORT, per lane (group.lanes = " +
                                      std::to_string(spec.lanes) + ")";
    const toml::array* lanes = array(t, "lanes", "member.lanes", "strings");
    if (lanes == nullptr) fail(t, "[[member]] lacks lanes (required: " + lanes_allowed + ")");
    if (lanes->size() != spec.lanes)
      fail(*t.get("lanes"), "member.lanes has " + count_of(lanes->size(), "entry", "entries") +
                                " but the group has " + count_of(spec.lanes, "lane", "lanes") + "; allowed " +
                                lanes_allowed);
    for (size_t i = 0; i < lanes->size(); ++i) {
      const toml::node& n = (*lanes)[i];
      const std::string path = "member.lanes[" + std::to_string(i) + "]";
      if (!n.is_string()) fail(n, path + " must be a string of DPDK devargs, not " + type_name(n));
      if (n.as_string()->get().empty())
        fail(n, path + " is empty; allowed: DPDK devargs, e.g. net_af_packet0,iface=v0");
      try {
        engine::parse_verbs_lane(n.as_string()->get());
      } catch (const std::invalid_argument& e) {
        fail(n, path + ": " + e.what());
      }
      m.spec.lanes.push_back(n.as_string()->get());
    }

    // Empty or absent: the bootstrap learns the addresses (not the static one).
    const toml::array* macs = array(t, "macs", "member.macs", "strings");
    if (macs == nullptr || macs->empty()) return m;
    if (macs->size() != spec.lanes)
      fail(*t.get("macs"), "member.macs has " + count_of(macs->size(), "entry", "entries") +
                               " but the group has " + count_of(spec.lanes, "lane", "lanes") +
                               "; allowed: one address per lane");
    for (size_t i = 0; i < macs->size(); ++i) {
      const toml::node& n = (*macs)[i];
      const std::string path = "member.macs[" + std::to_string(i) + "]";
      if (!n.is_string()) fail(n, path + " must be a string, not " + type_name(n));
      const std::string& text = n.as_string()->get();
      const auto mac = drivers::ethernet::parse_mac(text);
      if (!mac)
        fail(n, path + " " + in_quotes(text) + " is malformed; allowed xx:xx:xx:xx:xx:xx, hex digits");
      if (drivers::ethernet::is_group(mac->bytes))
        fail(n, path + " " + in_quotes(text) + " is a multicast address; allowed: a unicast one (first byte even)");
      if (std::all_of(mac->bytes, mac->bytes + mac->len, [](uint8_t b) { return b == 0; }))
        fail(n, path + " " + in_quotes(text) + " is all zeros; allowed: a unicast address");
      m.spec.macs.push_back(text);
      m.macs.push_back(&n);
    }
    return m;
  }

  // Ranks 0..n-1, each once. Out-of-range and repeated ranks are the only
  // ways one can be missing, so those errors name the missing one too.
  void check_ranks(const std::vector<MemberRead>& members) const {
    const size_t n = members.size();
    std::vector<bool> present(n);
    for (const MemberRead& m : members)
      if (m.spec.rank < n) present[m.spec.rank] = true;
    const auto missing = std::find(present.begin(), present.end(), false) - present.begin();
    const std::string allowed = "each rank 0.." + std::to_string(n - 1) + " once, one per [[member]] (rank " +
                                std::to_string(missing) + " is missing)";
    std::vector<const toml::node*> holder(n);
    for (const MemberRead& m : members) {
      const uint32_t r = m.spec.rank;
      if (r >= n) fail(*m.rank, "member.rank " + std::to_string(r) + " is out of range; allowed " + allowed);
      if (holder[r] != nullptr)
        fail(*m.rank, "member.rank " + std::to_string(r) + " is duplicated (also on line " +
                          std::to_string(holder[r]->source().begin.line) + "); allowed " + allowed);
      holder[r] = m.rank;
    }
  }

  // Without site_latency_us any site numbers group members (e.g. for the
  // multilane chain); with it, a site is an index into it.
  void check_sites(const std::vector<MemberRead>& members, const GroupSpec& spec) const {
    const size_t sites = spec.site_latency_us.size();
    if (sites == 0) return;
    for (const MemberRead& m : members)
      if (m.spec.site >= sites)
        fail(m.site != nullptr ? *m.site : *m.table,
             "member.site " + std::to_string(m.spec.site) + " is out of range of site_latency_us (" +
                 std::to_string(sites) + " sites); allowed 0.." + std::to_string(sites - 1));
  }

  // The static bootstrap knows only the addresses the file gives, so it needs
  // all of them. The engine addresses a peer by one address on every lane,
  // so a member's lanes (its ports, each on its own switch) share one; two
  // members with one address would take each other's frames.
  // Verbs lanes (lane_port.h): one adapter port per member, on every member
  // or none, and a bootstrap that learns queue pair numbers known only once
  // the port is open (pmix, discovery; a key then needs pmix, checked when
  // the key is known: joining).
  void check_verbs(const std::vector<MemberRead>& members, const GroupSpec& spec) const {
    size_t on_verbs = 0;
    for (const MemberRead& m : members) {
      try {
        on_verbs += engine::member_verbs_lane(m.spec.lanes).has_value();
      } catch (const std::invalid_argument& e) {
        fail(*m.table->get("lanes"), std::string("member.lanes: ") + e.what());
      }
    }
    if (on_verbs == 0) return;
    if (on_verbs != members.size())
      fail(*members[0].table, std::to_string(on_verbs) + " of " + std::to_string(members.size()) +
                                  " members are on verbs lanes; allowed: all or none (a UD queue pair and an "
                                  "Ethernet port cannot talk)");
    if (spec.bootstrap == "static")
      fail(*members[0].table, "members on verbs lanes form by bootstrap \"pmix\" or \"discovery\", not \"static\": "
                              "queue pair numbers exist only once a port is open, so no file lists them");
  }

  void check_macs(const std::vector<MemberRead>& members, const GroupSpec& spec) const {
    std::vector<std::pair<drivers::PeerAddress, const toml::node*>> seen;  // one per member
    for (const MemberRead& m : members) {
      if (spec.bootstrap == "static" && m.spec.macs.empty())
        fail(*m.table, "bootstrap \"static\" needs member.macs on every member, one address per lane (" +
                           std::to_string(spec.lanes) + ")");
      if (m.macs.empty()) continue;
      const drivers::PeerAddress first = *drivers::ethernet::parse_mac(m.macs[0]->as_string()->get());
      for (const toml::node* n : m.macs)
        if (!(*drivers::ethernet::parse_mac(n->as_string()->get()) == first))
          fail(*n, "member.macs " + in_quotes(n->as_string()->get()) + " differs from the member's first lane (" +
                       in_quotes(m.macs[0]->as_string()->get()) +
                       "); a member's lanes share one address, each lane's port on its own switch");
      for (const auto& [other, where] : seen)
        if (other == first)
          fail(*m.macs[0], "member.macs " + in_quotes(m.macs[0]->as_string()->get()) +
                               " is duplicated (also on line " + std::to_string(where->source().begin.line) +
                               "); allowed: one address per member");
      seen.emplace_back(first, m.macs[0]);
    }
  }
};

}  // namespace

GroupSpec parse_group_file(const std::string& text, const std::string& name) {
  return GroupFileReader(name).read(text);
}

GroupSpec load_group_file(const std::string& path) {
  // A directory opens and reads as empty: it would pass for a file lacking [group].
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw std::invalid_argument(path + ": cannot read the group file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(path + ": cannot read the group file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::invalid_argument(path + ": cannot read the group file: " + std::strerror(errno));
  GroupSpec spec = parse_group_file(text.str(), path);
  spec.source = path;
  if (!spec.key_file.empty() && spec.key_file.front() != '/')
    spec.key_file = (std::filesystem::path(path).parent_path() / spec.key_file).string();
  if (!spec.auto_rules_file.empty() && spec.auto_rules_file.front() != '/')
    spec.auto_rules_file = (std::filesystem::path(path).parent_path() / spec.auto_rules_file).string();
  return spec;
}

}  // namespace lanecast
