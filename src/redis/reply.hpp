#pragma once

#include <string>
#include <vector>

#include "util/exit_status.hpp"

struct redisReply;

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

// The exit status an error reply stands for: 77 for authentication and ACL
// refusals (NOAUTH, WRONGPASS, NOPERM, an unauthenticated protocol error),
// 76 for anything else.
[[nodiscard]] ExitStatus classify_error(const std::string& error_text);

// What to do about an error reply, as " (…)" to end a line, or "" when the
// error says it all.
[[nodiscard]] std::string error_hint(const std::string& error_text);

}  // namespace redlock::redis
