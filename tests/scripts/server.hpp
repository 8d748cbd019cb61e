#pragma once

// One redis-server with the lock's scripts loaded, for the tests that run
// the scripts directly: the table's rows (table.hpp) and the line's model
// (line_model_test.cpp). The text of every script is the one redlock embeds
// (lock/scripts.hpp), sent with EVALSHA.

#include <memory>
#include <string>
#include <vector>

#include "lock/scripts.hpp"

namespace redlock::test {

// A reply, decoded.
struct Value {
  enum class Type { k_string, k_status, k_error, k_integer, k_nil, k_array, k_other };
  Type type = Type::k_nil;
  std::string text;          // a string's, a status's or an error's
  long long integer = 0;     // an integer's
  std::vector<Value> items;  // an array's
};

// A reply as the scripts' headers write them: {'acquired', 'T1', 12, 1, 30000}.
[[nodiscard]] std::string show(const Value& v);

// The keys of lock "a" under prefix "t:".
[[nodiscard]] const lock::Keys& keys();

// The server of one test binary, started at first use, with every script
// loaded and a connection that hears every message on the channels "t:*".
class ScriptServer {
 public:
  ScriptServer();
  ~ScriptServer();
  ScriptServer(const ScriptServer&) = delete;
  ScriptServer& operator=(const ScriptServer&) = delete;

  // What SCRIPT LOAD named the script.
  [[nodiscard]] const std::string& loaded(lock::ScriptName name) const;
  // Empties the server.
  void reset();
  // The server's clock (TIME) in milliseconds.
  [[nodiscard]] long long now_ms();
  // One command; a connection that fails throws std::runtime_error.
  Value cmd(const std::vector<std::string>& argv);
  // Runs the script by the SHA-1 redlock computed with `args` (numkeys,
  // KEYS, ARGV: lock::to_args).
  Value eval(lock::ScriptName name, const std::vector<std::string>& args);
  // The messages published since the last call: "channel message", in
  // order; but those on a lock's events channel, which events() returns.
  [[nodiscard]] std::vector<std::string> published();
  // The messages published on "t:{a}:events" (includes/events.lua) since
  // the last call, in order (each call of published() collects them).
  [[nodiscard]] std::vector<std::string> events();

 private:
  struct Parts;
  std::unique_ptr<Parts> m_parts;
};

// The binary's one server.
[[nodiscard]] ScriptServer& script_server();

}  // namespace redlock::test
