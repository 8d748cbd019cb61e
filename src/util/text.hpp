#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace redlock {

inline constexpr size_t k_max_name_bytes = 512;

// Checks a lock name: 1 to 512 bytes of valid UTF-8 with no control
// characters (braces anywhere: lock/keys.hpp writes them inside the hash
// tag). Throws UsageError with the reason.
void validate_name(std::string_view name);

// Checks a free text an operator gives (--note, --reason): at most
// `max_bytes` of valid UTF-8 with no control characters, so that every
// line status prints stays one line. Throws UsageError naming `option`.
void validate_text(std::string_view text, std::string_view option, size_t max_bytes);

// True when `s` is well-formed UTF-8 (no overlongs, no surrogates).
[[nodiscard]] bool is_valid_utf8(std::string_view s);

// Makes text safe to print on a terminal: control characters, DEL and invalid
// UTF-8 bytes become \n, \t, \xNN escapes; C1 controls, format characters
// and line/paragraph separators (Unicode Cf, Zl, Zp: U+200B, U+202E,
// U+2028...) become \u202e (\U000e0041 past U+FFFF); a backslash becomes "\\".
[[nodiscard]] std::string escape_for_terminal(std::string_view s);

// The same, but a backslash stays as it is: for a line whose parts are
// escaped already and whose other parts (a server's error) may not be.
[[nodiscard]] std::string escape_controls(std::string_view s);

// A recorded command line for a terminal: escaped as escape_for_terminal
// does, but a backslash stays one, so `printf 'a\n'` reads as it was typed.
// (A name's backslashes are doubled so that no two names look alike; a
// command is only read.)
[[nodiscard]] std::string escape_command(std::string_view s);

// Items as a sentence says them: "a", "a and b", "a, b and c"; past
// `at_most` items, the first `at_most` and "and N more" (a line on stderr
// stays a line, however many names a command was given).
[[nodiscard]] std::string spoken_list(const std::vector<std::string>& items, size_t at_most = 5);

// What stands for a secret in anything redlock records or prints.
inline constexpr const char* k_redacted = "***";

// Replaces the password of every URL in `s` ("scheme://user:password@…")
// with "***". The password may hold any character: everything from the
// user name's ':' to the last '@' before the next URL is hidden.
[[nodiscard]] std::string redact_url_passwords(std::string_view s);

// Hides every secret in a line of text (a message, or a script for sh -c),
// in redact.cpp: URL passwords; the value of a key that names a secret
// (its name contains PASS, PWD, SECRET, TOKEN, KEY, AUTH, CRED, COOKIE or
// BEARER, any case): NAME=value, --name=value, a header's "X-Api-Key: value"
// or "Authorization: Bearer value", JSON's "token": value, a query's
// ?api_key=value; the word after -a or --name where NAME names a secret;
// and the secrets of common programs' options that do not say so, from a
// table (mysql -pSECRET, sshpass -p SECRET, curl -u user:SECRET...). Quotes
// are followed, so NAME='a b' hides all of 'a b'.
[[nodiscard]] std::string redact_secrets(std::string_view s);

// A program's arguments with every secret hidden: as redact_secrets does
// inside each one, and also a whole argument after -a/--password-style
// options, or after a secret key in its first word (NAME=, "Authorization:"),
// spaces and all.
[[nodiscard]] std::vector<std::string> redact_arguments(const std::vector<std::string>& argv);

// redact_arguments(argv) joined by spaces.
[[nodiscard]] std::string redact_command(const std::vector<std::string>& argv);

// `s` with each byte that is not part of valid UTF-8 replaced by U+FFFD.
[[nodiscard]] std::string make_valid_utf8(std::string_view s);

// The longest prefix of `s` of at most `max_bytes` that does not cut a
// UTF-8 character in two.
[[nodiscard]] std::string truncate_utf8(std::string_view s, size_t max_bytes);

// How many columns `s` takes on a terminal: one per character (a UTF-8
// sequence counts once, its continuation bytes not at all).
[[nodiscard]] size_t text_columns(std::string_view s);

// `s` cut to at most `columns` characters (UTF-8 sequences kept whole),
// ending with "…" when cut; whole when `columns` is 0.
[[nodiscard]] std::string fit_columns(std::string_view s, size_t columns);

// `text` as lines of at most `columns` characters, broken at blanks, each
// line after the first starting with `indent` (which counts in the width);
// a word longer than a line stays whole on its own line. With a newline
// after each line; whole on one line when `columns` is 0.
[[nodiscard]] std::string wrap_words(std::string_view text, size_t columns, std::string_view indent);

// The most a recorded command takes. Redis keeps a hash in its compact
// encoding (a listpack) only while every value in it is at most 64 bytes
// (hash-max-listpack-value): one longer command took a held lock from about
// 250 bytes of memory to more than 1,000.
inline constexpr size_t k_max_command_bytes = 64;

// What ends a recorded command that was cut: U+2026 (three bytes).
inline constexpr std::string_view k_cut_mark = "\xe2\x80\xa6";

// The command line stored with a lock for `status`: redacted, valid UTF-8,
// at most k_max_command_bytes; a longer one is cut between characters and
// ends with k_cut_mark.
[[nodiscard]] std::string recorded_command(const std::vector<std::string>& argv);

}  // namespace redlock
