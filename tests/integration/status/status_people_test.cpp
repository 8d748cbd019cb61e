// status for a person at a terminal: globs that pick names out of the index
// of held locks, --sort, a table that fits the terminal (and stays as it was
// through a pipe), --watch clipped to the screen under its header, and a
// reader that goes away ending the listing quietly.

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>

#include "exec/wait_status.hpp"
#include "lock_support.hpp"

using namespace redlock::test;
using nlohmann::json;

namespace {

class StatusForPeople : public WithRedis {};

// The names status --json lists, in its order.
std::vector<std::string> names_in(const std::string& out) {
  std::vector<std::string> names;
  for (const auto& lock : json::parse(out)) {
    names.push_back(lock["name"]);
  }
  return names;
}

// What redlock writes to a terminal of its own (a pty) with `env`, until it
// exits, `stop_after` passes (then it gets SIGINT), or 20 s.
struct Screen {
  std::string text;
  int status = -1;
};
Screen on_a_terminal(const std::vector<std::string>& args, const Env& env, double stop_after = 20) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) {
    for (const auto& [k, v] : env) {
      setenv(k.c_str(), v.c_str(), 1);
    }
    const std::string bin = redlock_binary();
    std::vector<char*> argv{const_cast<char*>(bin.c_str())};
    for (const auto& a : args) {
      argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  Screen s;
  const auto start = std::chrono::steady_clock::now();
  bool stopped = false;
  while (std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) {
      char buf[4096];
      const ssize_t n = read(master, buf, sizeof(buf));
      if (n > 0) {
        s.text.append(buf, static_cast<size_t>(n));
      }
    }
    int ws = 0;
    if (waitpid(pid, &ws, WNOHANG) == pid) {
      s.status = redlock::exec::exit_status_of(ws);
      char buf[4096];
      for (ssize_t n; (n = read(master, buf, sizeof(buf))) > 0;) {
        s.text.append(buf, static_cast<size_t>(n));
      }
      break;
    }
    if (!stopped && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > stop_after) {
      kill(pid, SIGINT);
      stopped = true;
    }
  }
  if (s.status < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  close(master);
  // A terminal turns each newline into CR LF.
  for (size_t at = 0; (at = s.text.find("\r\n", at)) != std::string::npos;) {
    s.text.erase(at, 1);
  }
  return s;
}

// The columns `line` takes on a terminal: its characters (an ellipsis
// that cut a value is three bytes, one column).
size_t columns_of(const std::string& line) {
  return static_cast<size_t>(
      std::count_if(line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xc0) != 0x80; }));
}

}  // namespace

TEST_F(StatusForPeople, AGlobShowsTheHeldLocksItMatchesAndNamesStillWorkBesideIt) {
  for (const char* name : {"deploy-web", "deploy-db", "backup", "deploy*literal"}) {
    take(name, {"--ttl", "60s"});
  }
  Result g = rl({"status", "--json", "deploy-*"});
  EXPECT_EQ(g.status, 0) << g.err;
  EXPECT_EQ(names_in(g.out), (std::vector<std::string>{"deploy-db", "deploy-web"}));
  // A backslash makes a metacharacter plain.
  Result literal = rl({"status", "--json", "deploy\\*literal"});
  EXPECT_EQ(names_in(literal.out), (std::vector<std::string>{"deploy*literal"})) << literal.err;
  // Names first, in the order given, then what the globs match; each once.
  Result mixed = rl({"status", "--json", "backup", "deploy-w?b", "backup"});
  EXPECT_EQ(mixed.status, 0) << mixed.err;
  EXPECT_EQ(names_in(mixed.out), (std::vector<std::string>{"backup", "deploy-web"}));
  // A name that is free is 1, as before, and so is a glob that matches nothing.
  Result free_name = rl({"status", "nobody", "deploy-*"});
  EXPECT_EQ(free_name.status, 1) << free_name.err;
  EXPECT_NE(free_name.err.find("nobody is not held"), std::string::npos) << free_name.err;
  Result none = rl({"status", "cache-*"});
  EXPECT_EQ(none.status, 1);
  EXPECT_TRUE(one_line(none.err)) << none.err;
  EXPECT_NE(none.err.find("no held lock under the prefix 'redlock:' on " + redis.url() + " matches 'cache-*'"),
            std::string::npos)
      << none.err;
  Result partly = rl({"status", "deploy-*", "cache-[0-9]"});
  EXPECT_EQ(partly.status, 1);
  EXPECT_NE(partly.err.find("no held lock matches 'cache-[0-9]'"), std::string::npos) << partly.err;
  EXPECT_EQ(split_lines(partly.out).size(), 3U) << partly.out;
}

TEST_F(StatusForPeople, AGlobIsAnsweredByTheIndexNeverByScanningTheKeyspace) {
  take("deploy-web", {"--ttl", "60s"});
  for (int i = 0; i < 200; ++i) {
    (void)redis.cmd({"SET", "cache:" + std::to_string(i), "x"});
  }
  const long long scans = redis.calls("scan");
  Result r = rl({"status", "deploy-*"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(redis.calls("scan"), scans) << "a glob must not SCAN";
  EXPECT_GE(redis.calls("zscan"), 1);
}

TEST_F(StatusForPeople, SortOrdersByNameAgeOrTimeLeft) {
  take("zz-oldest", {"--ttl", "60s"});
  sleep_for(0.05);
  take("mm-soonest", {"--ttl", "10s"});
  sleep_for(0.05);
  take("aa-newest", {"--ttl", "30s"});
  EXPECT_EQ(names_in(rl({"status", "--json"}).out), (std::vector<std::string>{"aa-newest", "mm-soonest", "zz-oldest"}));
  EXPECT_EQ(names_in(rl({"status", "--json", "--sort", "age"}).out),
            (std::vector<std::string>{"zz-oldest", "mm-soonest", "aa-newest"}));
  EXPECT_EQ(names_in(rl({"status", "--json", "--sort", "ttl"}).out),
            (std::vector<std::string>{"mm-soonest", "aa-newest", "zz-oldest"}));
  EXPECT_EQ(names_in(rl({"status", "--json", "--sort", "name", "zz-oldest", "aa-newest"}).out),
            (std::vector<std::string>{"aa-newest", "zz-oldest"}));
  Result table = rl({"status", "--sort", "age"});
  const auto lines = split_lines(table.out);
  ASSERT_EQ(lines.size(), 4U) << table.out;
  EXPECT_EQ(lines[1].rfind("zz-oldest", 0), 0U) << table.out;
  Result bad = rl({"status", "--sort", "size"});
  EXPECT_EQ(bad.status, 64);
  EXPECT_NE(bad.err.find("invalid --sort 'size': use name, age or ttl"), std::string::npos) << bad.err;
}

TEST_F(StatusForPeople, OnATerminalTheTableFitsItsWidthAndThroughAPipeItIsUnchanged) {
  hold_locks(redis, 3);  // each held by "./deploy.sh --env production": a row wider than 60
  const Screen narrow = on_a_terminal({"status"}, env({{"COLUMNS", "60"}}));
  EXPECT_EQ(narrow.status, 0) << narrow.text;
  const auto lines = split_lines(narrow.text);
  ASSERT_GE(lines.size(), 2U) << narrow.text;
  for (const auto& line : lines) {
    EXPECT_LE(columns_of(line), 60U) << line;
  }
  EXPECT_EQ(lines[0].find("FENCE"), std::string::npos) << narrow.text;
  EXPECT_EQ(lines[0].find("COUNT"), std::string::npos) << narrow.text;
  EXPECT_NE(lines[0].find("WAITING"), std::string::npos) << narrow.text;

  const Screen wide = on_a_terminal({"status", "--wide"}, env({{"COLUMNS", "60"}}));
  EXPECT_NE(wide.text.find("FENCE"), std::string::npos) << wide.text;
  EXPECT_NE(wide.text.find("COUNT"), std::string::npos) << wide.text;

  // A pipe gets every column whatever COLUMNS says.
  Result piped = rl({"status"}, {{"COLUMNS", "20"}});
  EXPECT_NE(piped.out.find("FENCE"), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("COUNT"), std::string::npos) << piped.out;
  EXPECT_NE(piped.out.find("./deploy.sh --env production\n"), std::string::npos) << piped.out;
}

TEST_F(StatusForPeople, ALongNameIsCutBeforeAnyOtherValueAt80Columns) {
  const std::string name = "nightly-report-for-the-accounting-department-eu-1";
  ASSERT_EQ(name.size(), 49U);
  take(name, {"--ttl", "60s"});
  const Screen s = on_a_terminal({"status"}, env({{"COLUMNS", "80"}}));
  EXPECT_EQ(s.status, 0) << s.text;
  const auto lines = split_lines(s.text);
  ASSERT_EQ(lines.size(), 2U) << s.text;
  for (const auto& line : lines) {
    EXPECT_LE(columns_of(line), 80U) << line;
  }
  EXPECT_NE(lines[0].find("TTL"), std::string::npos) << s.text;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0 && std::strlen(host) <= 16) {
    // With a longer host name, WAITING would be the next column to go.
    EXPECT_NE(lines[0].find("WAITING"), std::string::npos) << s.text;
  }
  EXPECT_EQ(lines[1].rfind("nightly-rep\xe2\x80\xa6  held  ", 0), 0U) << s.text;
  // TTL whole: 59s, 59.9s or 1m (never "5" or "59." cut short).
  EXPECT_TRUE(std::regex_search(lines[1], std::regex(R"(  (59(\.\d)?s|1m)  )"))) << s.text;
  Result piped = rl({"status"});
  EXPECT_NE(piped.out.find(name + "  held"), std::string::npos) << "a pipe gets the name whole: " << piped.out;
}

TEST_F(StatusForPeople, HistoryOnATerminalFitsItsWidthAndThroughAPipeItIsWhole) {
  // Recorded whole (under 64 bytes), and past 80 columns with the rest.
  const std::string command = "echo 0123456789012345678901234567890123456789";
  ASSERT_EQ(rl({"exec", "ran", "--", "sh", "-c", command}).status, 0);
  const Screen s = on_a_terminal({"history", "ran"}, env({{"COLUMNS", "80"}}));
  EXPECT_EQ(s.status, 0) << s.text;
  const auto lines = split_lines(s.text);
  ASSERT_EQ(lines.size(), 2U) << s.text;
  for (const auto& line : lines) {
    EXPECT_LE(columns_of(line), 80U) << line;
  }
  EXPECT_TRUE(std::regex_search(lines[1], std::regex(R"(^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  )"))) << s.text;
  EXPECT_NE(lines[1].find("  ok  "), std::string::npos) << s.text;
  EXPECT_NE(lines[1].find("\xe2\x80\xa6"), std::string::npos) << "CMD cut: " << s.text;
  Result piped = rl({"history", "ran"});
  EXPECT_NE(piped.out.find("  sh -c " + command + "\n"), std::string::npos) << piped.out;
}

TEST_F(StatusForPeople, DashOPicksTheColumnsAndTheirOrderOnATerminalAndThroughAPipe) {
  hold_locks(redis, 2);
  // As ps -o: the header's names in any case, in the order given; FENCE on
  // a terminal too when asked for. The word after -o's list is a name.
  Result piped = rl({"status", "-o", "ttl,Name", "--sort", "name", "-o", "FENCE", "lock-0"});
  EXPECT_EQ(piped.status, 0) << piped.err;
  const auto lines = split_lines(piped.out);
  ASSERT_EQ(lines.size(), 2U) << piped.out;
  EXPECT_EQ(lines[0].rfind("TTL", 0), 0U) << piped.out;
  EXPECT_NE(lines[0].find("  NAME    FENCE"), std::string::npos) << piped.out;
  EXPECT_NE(lines[1].find("  lock-0  "), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find("HOST"), std::string::npos) << piped.out;

  const Screen narrow = on_a_terminal({"status", "--columns", "name,fence,count"}, env({{"COLUMNS", "60"}}));
  EXPECT_EQ(narrow.status, 0) << narrow.text;
  EXPECT_NE(narrow.text.find("NAME    FENCE"), std::string::npos) << narrow.text;
  EXPECT_NE(narrow.text.find("COUNT"), std::string::npos) << narrow.text;
  EXPECT_EQ(narrow.text.find("WAITING"), std::string::npos) << narrow.text;

  Result unknown = rl({"status", "-o", "name,owner"});
  EXPECT_EQ(unknown.status, 64);
  EXPECT_NE(unknown.err.find("unknown column 'owner' in --columns; the columns are NAME, STATE, HOST, PID, AGE, "
                             "TTL, FENCE, COUNT, WAITING, COMMAND"),
            std::string::npos)
      << unknown.err;
}

TEST_F(StatusForPeople, WatchOnATerminalKeepsItsHeaderAndClipsToTheScreen) {
  for (int i = 0; i < 12; ++i) {
    take("watched-lock-with-a-long-name-" + std::to_string(i), {"--ttl", "60s"});
  }
  const Screen s =
      on_a_terminal({"status", "--watch", "--interval", "200ms"}, env({{"COLUMNS", "40"}, {"LINES", "8"}}), 1.5);
  EXPECT_EQ(s.status, 0) << s.text;
  const std::string clear = "\033[H\033[2J";
  size_t frames = 0;
  for (size_t at = s.text.find(clear); at != std::string::npos; ++frames) {
    const size_t next = s.text.find(clear, at + clear.size());
    const std::string frame =
        s.text.substr(at + clear.size(), next == std::string::npos ? next : next - at - clear.size());
    const auto lines = split_lines(frame);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(lines[0].rfind("Every 200ms: redl", 0), 0U) << frame;
    // Too wide for 40 columns: what is shown is cut with "…", the time stays.
    EXPECT_NE(lines[0].find("…  "), std::string::npos) << lines[0];
    EXPECT_EQ(lines[0].back(), 'Z') << lines[0];
    EXPECT_LE(std::count(frame.begin(), frame.end(), '\n'), 7) << "the header must stay on the screen: " << frame;
    for (const auto& line : lines) {
      EXPECT_LE(columns_of(line), 40U) << line;
    }
    at = next;
  }
  EXPECT_GE(frames, 2U) << s.text;
}

TEST_F(StatusForPeople, AReaderThatGoesAwayEndsTheListingQuietly) {
  for (int i = 0; i < 5; ++i) {
    take("piped-" + std::to_string(i), {"--ttl", "60s"});
  }
  // The reader is gone before status writes: SIGPIPE ends it, as it ends ls.
  Child gone({"-c", "( sleep 0.5; \"$RL\" status; echo \"rc=$?\" >&2 ) | true"}, env({{"RL", redlock_binary()}}),
             "/bin/sh");
  Result r = gone.wait(Seconds(20));
  EXPECT_EQ(r.err, "rc=141\n");
  // Started with SIGPIPE ignored, it ends with 0, and says nothing either.
  Child ignored({"-c", "trap '' PIPE; ( sleep 0.5; \"$RL\" status --json; echo \"rc=$?\" >&2 ) | true"},
                env({{"RL", redlock_binary()}}), "/bin/sh");
  Result i = ignored.wait(Seconds(20));
  EXPECT_EQ(i.err, "rc=0\n");
  // head -1 reads one line of a long listing.
  hold_locks(redis, 3000);
  Child head({"-c", "\"$RL\" status | head -1; echo \"rc=$?\" >&2"}, env({{"RL", redlock_binary()}}), "/bin/sh");
  Result h = head.wait(Seconds(30));
  EXPECT_EQ(h.out.rfind("NAME", 0), 0U) << h.out;
  EXPECT_EQ(h.err, "rc=0\n") << "head's status; redlock said nothing";
}
