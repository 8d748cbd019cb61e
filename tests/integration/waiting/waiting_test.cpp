// A wait that says what it waits for: one line when it starts (holder's
// host, pid and command, how long it may keep the lock, how long redlock
// waits), one when it gets the lock; on a terminal one live line; -q
// silences all of it; a wait that runs out names the holder and does not
// suggest --wait again. The line a minute in a log, and every line's exact
// text, are timed on a fake clock in tests/unit/cli/wait_report_test.cpp.

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "exec/wait_status.hpp"
#include "exec_support.hpp"
#include "lock/scripts.hpp"

using namespace redlock::test;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    out.push_back(text.substr(start, nl - start));
  }
  return out;
}

std::string hostname() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// A holder of `name` whose command is `sleep SECONDS`, once it holds the lock.
std::unique_ptr<Child> hold(ExecFixture& f, const std::string& name, const std::string& seconds) {
  auto c =
      std::make_unique<Child>(std::vector<std::string>{"exec", "--ttl", "30s", name, "--", "sleep", seconds}, f.env());
  EXPECT_TRUE(eventually([&] { return key_exists(f.redis, lock_key(name)); }));
  return c;
}

}  // namespace

TEST(Waiting, OneLineWhenTheWaitStartsAndOneWhenTheLockIsTaken) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "1.5");
  Result r = run({"acquire", "--wait", "20s", "deploy"}, f.env());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_NE(lines[0].find("deploy is held by " + hostname() + " pid " + std::to_string(holder->pid()) + " (sleep 1.5)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[0].find("for at most"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("waiting up to 20s"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("redlock: acquired deploy after ", 0), 0u) << lines[1];
  EXPECT_EQ(holder->wait().status, 0);
}

// The holder is named from the busy answers themselves: a wait costs no
// read of the lock as `status` makes it (two more round trips per waiter).
TEST(Waiting, TheHolderIsNamedFromTheBusyAnswerWithoutReadingTheLockAgain) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "3");
  ASSERT_EQ(f.redis.cmd({"SCRIPT", "FLUSH"}).text(), "OK");
  Result r = run({"acquire", "--wait", "300ms", "deploy"}, f.env());
  EXPECT_EQ(r.status, 75) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_NE(lines[0].find("deploy is held by " + hostname() + " pid " + std::to_string(holder->pid()) + " (sleep 3)"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("gave up waiting for deploy after 300ms: it is still held by " + hostname()),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[1].find("(sleep 3)"), std::string::npos) << lines[1];
  // A flushed script comes back only when someone runs it (EVALSHA is
  // answered NOSCRIPT, then EVAL loads it): status's never did.
  const redlock::redis::Reply exists =
      f.redis.cmd({"SCRIPT", "EXISTS", std::string(redlock::lock::script(redlock::lock::ScriptName::k_acquire).sha1),
                   std::string(redlock::lock::script(redlock::lock::ScriptName::k_inspect).sha1),
                   std::string(redlock::lock::script(redlock::lock::ScriptName::k_line).sha1)});
  ASSERT_EQ(exists.elements.size(), 3u);
  EXPECT_EQ(exists.elements[0].integer, 1) << "the waiter's own tries load the acquire script";
  EXPECT_EQ(exists.elements[1].integer, 0) << "the waiter read the lock as status does";
  EXPECT_EQ(exists.elements[2].integer, 0) << "the waiter read the line as status does";
  holder->signal(SIGTERM);
  (void)holder->wait();
}

TEST(Waiting, ExecSaysTheSame) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "1");
  Result r = run({"exec", "--wait", "inf", "deploy", "--", "true"}, f.env());
  ASSERT_EQ(r.status, 0) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_NE(lines[0].find("(sleep 1)"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("--wait inf"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("redlock: acquired deploy after ", 0), 0u) << lines[1];
}

TEST(Waiting, QuietSilencesAllOfIt) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "1");
  Result r = run({"-q", "acquire", "--wait", "20s", "deploy"}, f.env());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto again = hold(f, "deploy2", "20");
  Result gave_up = run({"-q", "exec", "--wait", "300ms", "deploy2", "--", "true"}, f.env());
  EXPECT_EQ(gave_up.status, 75);
  EXPECT_EQ(gave_up.err, "");
  again->signal(SIGTERM);
}

TEST(Waiting, AWaitThatRunsOutNamesTheHolderAndDoesNotSuggestWaitAgain) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "30");
  // Over three seconds a log gets no progress line: those come once a minute.
  Result r = run({"acquire", "--wait", "3s", "deploy"}, f.env());
  EXPECT_EQ(r.status, 75);
  EXPECT_GE(r.seconds, 2.9);
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  const std::string& last = lines[1];
  EXPECT_NE(last.find("gave up waiting for deploy after 3s"), std::string::npos) << last;
  EXPECT_NE(last.find("held by " + hostname() + " pid " + std::to_string(holder->pid()) + " (sleep 30)"),
            std::string::npos)
      << last;
  EXPECT_EQ(last.find("--wait"), std::string::npos) << last;
  holder->signal(SIGTERM);
}

TEST(Waiting, ANoWaitBusyLockStillSuggestsWait) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "30");
  Result r = run({"acquire", "deploy"}, f.env());
  EXPECT_EQ(r.status, 75);
  ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
  EXPECT_NE(r.err.find("use --wait"), std::string::npos) << r.err;
  // The busy answer names the holder in full: its command too, at no cost.
  EXPECT_NE(r.err.find("deploy is held by " + hostname() + " pid " + std::to_string(holder->pid()) + " (sleep 30)"),
            std::string::npos)
      << r.err;
  holder->signal(SIGTERM);
}

TEST(Waiting, OnATerminalTheWaitIsOneLiveLine) {
  ExecFixture f;
  auto holder = hold(f, "deploy", "3.5");
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("REDLOCK_URL", f.redis.url().c_str(), 1);
    const std::string bin = redlock_binary();
    execl(bin.c_str(), bin.c_str(), "exec", "--wait", "20s", "deploy", "--", "true", static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string screen;
  int status = -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 50) > 0) {
      char buf[512];
      const ssize_t n = read(master, buf, sizeof(buf));
      if (n > 0) {
        screen.append(buf, static_cast<size_t>(n));
      }
    }
    int ws = 0;
    if (status < 0 && waitpid(pid, &ws, WNOHANG) == pid) {
      status = redlock::exec::exit_status_of(ws);
    }
    if (status >= 0 && screen.find("acquired deploy after") != std::string::npos) {
      break;
    }
  }
  if (status < 0) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  close(master);
  EXPECT_EQ(status, 0) << screen;
  // The live line is rewritten in place (carriage return, erase to the end of
  // the line) every second: elapsed of the bound, and the holder.
  EXPECT_NE(screen.find("\rredlock: waiting for deploy: 1s of 20s, held by " + hostname()), std::string::npos)
      << screen;
  EXPECT_NE(screen.find("\rredlock: waiting for deploy: 2s of 20s"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("\n" + std::string("redlock: waiting for deploy: 1s")), std::string::npos) << screen;
  EXPECT_NE(screen.find("acquired deploy after"), std::string::npos) << screen;
}
