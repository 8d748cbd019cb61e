#pragma once

// Where the lines on stderr go: --log-format, --syslog, --syslog-facility,
// else $REDLOCK_LOG_FORMAT and $REDLOCK_SYSLOG (util/log's sinks).

#include <optional>

#include "cli/commands.hpp"

namespace redlock::cli {

// Before argv is read in full: the log options and variables as far as
// they are valid, so that even a usage error is written as asked (what is
// not valid is said by the full reading, as text). Never throws.
void set_early_logging(int argc, char** argv) noexcept;

// The sinks the parsed command line and the environment ask for, and the
// lock the command is about (the JSON lines' "name"). A variable with a
// value that is no format or facility is a UsageError (64), before any
// traffic.
void set_logging(const AllOptions& o, std::optional<Subcommand> which);

}  // namespace redlock::cli
