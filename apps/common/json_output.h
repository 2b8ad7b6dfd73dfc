// Every --json the commands print goes through nlohmann::json (Debian's
// nlohmann-json3-dev), so strings are escaped whatever they hold - a path
// with quotes or backslashes, control characters, a client's name. Objects
// keep the order their fields are set in (ordered_json): the documented
// order of docs/json.md.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lanecast::apps {

using Json = nlohmann::ordered_json;

// The text of `j`; bytes that are not UTF-8 (a file name may hold any) come
// out as U+FFFD instead of failing the whole object. indent < 0: one line.
std::string json_text(const Json& j, int indent = -1);

// json_text(j, indent) and a newline on `to`.
void print_json(const Json& j, std::FILE* to = stdout, int indent = -1);

// An array with one element per line: readable, and a run cut short leaves
// whole rows behind (bench and bench --stream print their rows so).
void print_json_rows(const std::vector<Json>& rows, std::FILE* to = stdout);

// `v` rounded to `decimals` places: measured figures keep the precision they
// have (nanoseconds in microseconds) instead of printing 17 digits.
double rounded(double v, int decimals = 3);

}  // namespace lanecast::apps
