#pragma once

// What redlock says about a command line, in words: help wrapped to the
// width of a terminal, the known word nearest to a mistyped one, exec's
// command line with the `--` it lacks, and what a parse error may echo.
// Pure text, no CLI11: cli/line/options.cpp, the one file that includes CLI11,
// asks these functions (each file that includes CLI11 costs seconds of
// compile and its own copy of CLI11's static objects at every start).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::cli {

// The width redlock's help is wrapped to.
inline constexpr size_t k_help_width = 80;

// `help` with each line longer than `width` wrapped at blanks: an entry's
// description (text at `column` after a run of blanks, as CLI11 lays out an
// option or a subcommand) goes on at that column, any other line under its
// own indentation. A word longer than a line stays whole.
[[nodiscard]] std::string wrap_help(std::string_view help, size_t column, size_t width = k_help_width);

// The word of `known` nearest to `typed`, for "did you mean": the fewest
// edits (a transposition is one), at most a third of the word (one for a
// short word), or the one word `typed` begins; none when nothing is near,
// or `typed` is a single letter.
[[nodiscard]] std::optional<std::string> nearest_word(std::string_view typed, const std::vector<std::string>& known);

// What a flock(1) user means by `typed`, an option of flock's that redlock
// spells otherwise or does without (-e, --nb, -u, -o, -F, -V), said as a
// typo's "did you mean ...?" is (without the parentheses); `subcommand` is
// the one it was given to ("" for none). None for any other word.
[[nodiscard]] std::optional<std::string> flock_word(std::string_view typed, std::string_view subcommand);

// `word` as a shell reads it back: as it is when it is plain, else in
// single quotes (a quote in it as '"'"', so that no backslash is needed).
[[nodiscard]] std::string shell_quoted(std::string_view word);

// The command line `words` (argv without the program) with `--` put before
// word `command_at`, each word quoted for the shell and secrets redacted:
// the line to suggest when exec's CMD came without `--`.
[[nodiscard]] std::string with_dashes(const std::vector<std::string>& words, size_t command_at);

// How much quieter one word of argv asks redlock to be: -q and --quiet 1,
// -qq 2, --silent 2.
[[nodiscard]] int quiet_level(std::string_view word);

// `text` (what a parse error echoes) with every argument of `args` that
// redact_arguments() changes replaced by its redacted form wherever the
// text shows it whole, and passwords in URLs masked.
[[nodiscard]] std::string without_secrets(std::string text, const std::vector<std::string>& args);

}  // namespace redlock::cli
