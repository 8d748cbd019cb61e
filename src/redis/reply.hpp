#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "util/exit_status.hpp"

struct redisReply;
struct redisReader;

namespace redlock::redis {

// An owned copy of one RESP2 reply, so hiredis objects never outlive the
// reader call that produced them.
struct Reply {
  enum class Type { k_string, k_status, k_error, k_integer, k_nil, k_array };
  Type type = Type::k_nil;
  std::string str;  // bulk string, status or error text
  long long integer = 0;
  std::vector<Reply> elements;

  [[nodiscard]] bool is_error() const { return type == Type::k_error; }
  [[nodiscard]] bool is_nil() const { return type == Type::k_nil; }
  [[nodiscard]] bool is_array() const { return type == Type::k_array; }
  // The text of a string, status or error reply, or the decimal integer.
  [[nodiscard]] std::string text() const;
};

[[nodiscard]] Reply copy_reply(const redisReply* r);

// The most one reply may hold, so that what a server (or a proxy, or a
// wrong port) sends costs redlock at most some 15 MiB. redlock's largest
// replies are a SCAN page (COUNT 1000: about a thousand keys), status's
// reading of a lock (two elements per holder and per waiter, some 170
// bytes plus the host and the command, itself at most 64 bytes, or 1 KiB
// as versions before 0.2 recorded it), break's list of holders (eight
// elements each) and CLUSTER NODES (some 150 KiB for a thousand nodes). The
// bounds leave room for 2,000 holders in break and 8,000 in status (1,700
// with 1 KiB commands each).
inline constexpr size_t k_max_reply_elements = 16'384;  // at every level, the reply itself included
inline constexpr size_t k_max_reply_bytes = 2 << 20;    // strings and lines together
inline constexpr int k_max_reply_depth = 4;             // arrays in arrays (break's holders: 3)

// A hiredis reader whose replies stay within the bounds above: one that
// announces more (an array of 585477708 elements, a string of 999999999
// bytes) fails the reader at once, before anything is allocated for it.
// Free it with free_reader().
[[nodiscard]] redisReader* create_reader();
void free_reader(redisReader* reader);

// redisReaderGetReply for a reader from create_reader(), which also fails
// once the bytes waiting in it announce or hold more than a reply may (a
// string's length, a line that does not end).
[[nodiscard]] int read_reply(redisReader* reader, void** reply);

// Why read_reply failed, to follow "Redis at HOST sent ": "a malformed reply:
// <hiredis's words>", or "an unexpected reply: <what was past which bound>
// (is it a Redis server?)".
[[nodiscard]] std::string reader_failure(const redisReader* reader);

// The exit status an error reply stands for: 77 for authentication and ACL
// refusals (NOAUTH, WRONGPASS, NOPERM, an unauthenticated protocol error),
// 76 for anything else.
[[nodiscard]] ExitStatus classify_error(const std::string& error_text);

// What to do about an error reply, as " (…)" to end a line, or "" when the
// error says it all.
[[nodiscard]] std::string error_hint(const std::string& error_text);

}  // namespace redlock::redis
