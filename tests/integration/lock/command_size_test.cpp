// No command redlock sends is larger than the strictest services take:
// ElastiCache Serverless refuses more than 3,999 arguments in a command,
// Upstash a request over 1 MB. Every command redlock sends is recorded
// (MONITOR, on a server of the test's own) while it reads 10,000 held
// locks, takes and frees several names at once, and reads their history.

#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "lock_support.hpp"

using namespace redlock::test;

namespace {

constexpr size_t k_max_arguments = 3'999;
constexpr size_t k_max_bytes = 1'000'000;

// One command as MONITOR shows it: its arguments' count and bytes.
struct Seen {
  size_t arguments = 0;
  size_t bytes = 0;
  std::string head;  // the command and its first argument, for the message
};

// The commands of MONITOR's `line`: `<time> [<db> <client>] "ARG" "ARG"...`,
// each argument quoted with \" \\ \xNN \n... escapes. Commands a script
// ran inside itself (`[0 lua]`) are the server's own, not sent.
std::optional<Seen> parse(const std::string& line) {
  const size_t close = line.find("] ");
  if (close == std::string::npos || line.find(" lua]") != std::string::npos) {
    return std::nullopt;
  }
  Seen s;
  bool in = false;
  std::string arg;
  for (size_t i = close + 2; i < line.size(); ++i) {
    const char c = line[i];
    if (!in) {
      if (c == '"') {
        in = true;
        arg.clear();
      }
      continue;
    }
    if (c == '\\' && i + 1 < line.size()) {
      i += line[i + 1] == 'x' ? 3 : 1;
      arg += '?';
    } else if (c == '"') {
      in = false;
      ++s.arguments;
      s.bytes += arg.size();
      if (s.arguments <= 2) {
        s.head += (s.arguments == 2 ? " " : "") + arg.substr(0, 40);
      }
    } else {
      arg += c;
    }
  }
  return s;
}

class CommandSize : public WithRedis {};

}  // namespace

TEST_F(CommandSize, NoCommandExceeds3999ArgumentsOrOneMegabyte) {
  hold_locks(redis, 10'000);
  std::vector<std::string> names;
  for (int i = 0; i < 32; ++i) {  // the most one lock takes
    names.push_back("many-" + std::to_string(i));
  }
  // Runs in the ledger, of one name and of several at once.
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(rl({"exec", "job", "--", "true"}).status, 0);
    ASSERT_EQ(rl({"exec", "a", "b", "c", "--", "true"}).status, 0);
  }

  Child monitor({"-p", std::to_string(redis.port()), "monitor"}, {}, std::string("redis-cli"));
  ASSERT_TRUE(eventually([&] { return monitor.out_so_far().find("OK") != std::string::npos; }, Seconds(10)));

  std::vector<std::string> acquire = {"acquire", "--ttl", "5m"};
  acquire.insert(acquire.end(), names.begin(), names.end());
  Result taken = rl(acquire);
  ASSERT_EQ(taken.status, 0) << taken.err;
  const std::string token = first_line(taken.out);
  std::vector<std::string> renew = {"renew", "--token", token};
  renew.insert(renew.end(), names.begin(), names.end());
  EXPECT_EQ(rl(renew).status, 0);
  for (const auto& args : std::vector<std::vector<std::string>>{{"status"},
                                                                {"status", "--json"},
                                                                {"status", "--format", "prometheus"},
                                                                {"status", "lock-*", "many-*"},
                                                                {"status", "job", "a", "b", "c"},
                                                                {"history", "job"},
                                                                {"history", "a", "--json"},
                                                                {"overdue", "c", "--max-age", "1h"},
                                                                {"exec", "a", "b", "c", "--", "true"},
                                                                {"doctor"}}) {
    Result r = rl(args);
    EXPECT_LE(r.status, 1) << args[0] << ": " << r.err;
  }
  std::vector<std::string> release = {"release", "--token", token};
  release.insert(release.end(), names.begin(), names.end());
  EXPECT_EQ(rl(release).status, 0);
  ASSERT_EQ(rl(acquire).status, 0);
  std::vector<std::string> broken = {"break"};
  broken.insert(broken.end(), names.begin(), names.end());
  EXPECT_EQ(rl(broken).status, 0);

  // Everything sent has been shown once a last command of ours is.
  ASSERT_EQ(redis.cmd({"ECHO", "command-size-end"}).str, "command-size-end");
  ASSERT_TRUE(
      eventually([&] { return monitor.out_so_far().find("command-size-end") != std::string::npos; }, Seconds(30)));
  monitor.signal(SIGTERM);
  const Result shown = monitor.wait(Seconds(10));
  size_t commands = 0;
  Seen largest;
  std::istringstream lines(shown.out);
  for (std::string line; std::getline(lines, line);) {
    const auto s = parse(line);
    if (!s) {
      continue;
    }
    ++commands;
    EXPECT_LE(s->arguments, k_max_arguments) << s->head;
    EXPECT_LE(s->bytes, k_max_bytes) << s->head;
    if (s->bytes > largest.bytes) {
      largest = *s;
    }
  }
  EXPECT_GT(commands, 300u) << "status of 10,000 locks alone sends hundreds";
  RecordProperty("largest_command", largest.head);
  RecordProperty("largest_bytes", std::to_string(largest.bytes));
}
