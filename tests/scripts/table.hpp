#pragma once

// The lock's Lua scripts run directly against one redis-server (server.hpp),
// row by row: the keys before, the script's arguments, its reply, the keys
// after and what it published.
//
// Keys are written one a line, "KEY = TYPE VALUE [(px MS)]", as dump()
// prints them: a string's value, a hash's fields as "field=value" in order
// of name (a JSON value with its keys in order of name), a list's items, a
// sorted set's "member=score" by score, a stream's entries oldest first, each
// "field=value ..." in the order written, with " | " between entries. An
// entry may hold several keys, one
// a line; keys after may come in any order.
// In keys before and after, NOW, NOW+N and NOW-N are the server's clock in
// milliseconds when the row starts (a holder's or waiter's expiry; after a
// script, ~NOW+N is a lease of N ms it gave). Expected text may hold
// #  any integer,
// ~N an integer from N - 1000 to N (what is left of a lease of N ms),
// *  any text.
// The rows are all on lock "a" under the prefix "t:": t:{a}, t:{a}:fence,
// the line's t:{a}:line, :beats, :waiters and :writers, the channel
// t:{a}:released, and the index of held locks under the prefix, t:index.

#include <gtest/gtest.h>

#include <iosfwd>
#include <string>
#include <vector>

#include "lock/scripts.hpp"
#include "server.hpp"

namespace redlock::test {

struct Row {
  std::string name;  // the test's name: a sentence in CamelCase
  lock::ScriptName script = lock::ScriptName::k_acquire;
  std::vector<std::string> before;       // keys before
  std::vector<std::string> args;         // numkeys, KEYS, ARGV (lock::to_args)
  std::string reply;                     // the reply, as show() writes it
  std::vector<std::string> after;        // keys after
  std::vector<std::string> published{};  // "channel message", in order
};

// Runs one row on the shared server and checks it (gtest failures).
void run(const Row& row);

// `text` with NOW, NOW+N and NOW-N replaced by `now` (+ or - N).
[[nodiscard]] std::string with_now(const std::string& text, long long now);

// Whether `text` matches `pattern` (#, ~N and * as above).
[[nodiscard]] bool matches(const std::string& pattern, const std::string& text);

// gtest prints a row, and names its test, by the row's name.
void PrintTo(const Row& row, std::ostream* out);
[[nodiscard]] std::string row_name(const testing::TestParamInfo<Row>& row);

}  // namespace redlock::test
