#pragma once

// What `redlock doctor` prints (doctor/checks.hpp judges): the report for
// people and the JSON array, as pure functions of the findings.

#include <cstddef>
#include <string>
#include <vector>

#include "doctor/checks.hpp"

namespace redlock::cli {

// The report: each server named once, on a line of its own ("server URL"),
// before the checks about it; with several servers, the checks about them
// all after "all servers". A check is a line: its level and name in
// columns, then what was found and what to do. With a `width` (a
// terminal's), that text is wrapped at blanks under its column, so that no
// line is wider unless one word is; 0 (a pipe) keeps each check on one
// line. Escaped for a terminal.
[[nodiscard]] std::string doctor_text(const std::vector<doctor::Finding>& findings, size_t width = 0);

// doctor --json: an array of {check, level, server, detail, advice}
// (documented in redlock(1), JSON OUTPUT), with a final newline.
[[nodiscard]] std::string doctor_json(const std::vector<doctor::Finding>& findings);

}  // namespace redlock::cli
