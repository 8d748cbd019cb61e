// exec under an interactive terminal: CMD can read the terminal and Ctrl-C
// reaches CMD (its process group is the terminal's foreground group).

#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "exec/wait_status.hpp"
#include "exec_support.hpp"

using namespace redlock::test;

namespace {

// redlock run as the session leader of a new pseudo-terminal.
class OnTerminal {
 public:
  OnTerminal(const std::vector<std::string>& args, const std::string& url) {
    std::vector<std::string> argv{redlock_binary()};
    argv.insert(argv.end(), args.begin(), args.end());
    start(argv, url);
  }
  // An interactive shell with job control, with redlock as $RL.
  explicit OnTerminal(const std::string& url) { start({"/bin/bash", "--norc", "--noprofile", "-i"}, url); }
  ~OnTerminal() {
    if (m_pid > 0 && m_status < 0) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, nullptr, 0);
    }
    close(m_master);
  }
  void type(const std::string& text) { (void)!write(m_master, text.data(), text.size()); }
  // Reads the terminal until `needle` shows up (or `limit` passes); returns all read so far.
  std::string read_until(const std::string& needle, Seconds limit = Seconds(5)) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (m_screen.find(needle) == std::string::npos && std::chrono::steady_clock::now() < end) {
      pollfd p{m_master, POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char buf[512];
        ssize_t n = read(m_master, buf, sizeof(buf));
        if (n > 0) {
          m_screen.append(buf, static_cast<size_t>(n));
        } else {
          break;
        }
      }
    }
    return m_screen;
  }
  // Like read_until, but only what came after the first `skip` bytes.
  bool shows_after(size_t skip, const std::string& needle, Seconds limit = Seconds(5)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      if (m_screen.find(needle, skip) != std::string::npos) {
        return true;
      }
      read_until("\x01", Seconds(0.05));
    }
    return m_screen.find(needle, skip) != std::string::npos;
  }
  [[nodiscard]] size_t seen() const { return m_screen.size(); }
  // In the shell: runs `command_line`, waits for its "ready" line, presses
  // Ctrl-Z and waits for the shell's "Stopped". Returns where that began.
  size_t run_and_suspend(const std::string& command_line) {
    EXPECT_TRUE(shows_after(0, "$ "));
    const size_t start = seen();
    type(command_line + "\n");
    // The command's own line: the terminal also echoes the typed "echo
    // ready", and a Ctrl-Z before the lock is taken stops redlock instead.
    EXPECT_TRUE(shows_after(start, "ready\r\n")) << m_screen;
    const size_t mark = seen();
    type("\x1a");  // the terminal's suspend character
    EXPECT_TRUE(shows_after(mark, "Stopped")) << m_screen.substr(mark);
    return mark;
  }
  // After run_and_suspend(): the shell answers again.
  bool prompt_is_back(size_t mark) {
    type("echo prompt-$((1+1))-back\n");
    return shows_after(mark, "prompt-2-back");
  }
  // Resumes with fg a suspended job whose command reads a line and prints
  // "got:" and it; the job ends with status 0.
  void fg_and_answer() {
    const size_t mark = seen();
    type("fg\n");
    EXPECT_TRUE(shows_after(mark, "exec")) << m_screen.substr(mark);
    type("hello\n");
    EXPECT_TRUE(shows_after(mark, "got:hello")) << m_screen.substr(mark);
    type("echo \"rc=$?\"\n");
    EXPECT_TRUE(shows_after(mark, "rc=0")) << m_screen.substr(mark);
  }
  int wait(Seconds limit = Seconds(10)) {
    auto end = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < end) {
      read_until("\x01", Seconds(0.05));  // keep draining the terminal
      int ws = 0;
      if (waitpid(m_pid, &ws, WNOHANG) == m_pid) {
        m_status = redlock::exec::exit_status_of(ws);
        return m_status;
      }
    }
    return -1;
  }

 private:
  void start(const std::vector<std::string>& args, const std::string& url) {
    m_pid = forkpty(&m_master, nullptr, nullptr, nullptr);
    if (m_pid == 0) {
      setenv("REDLOCK_URL", url.c_str(), 1);
      setenv("RL", redlock_binary().c_str(), 1);
      setenv("PS1", "$ ", 1);
      std::vector<char*> argv;
      for (const auto& a : args) {
        argv.push_back(const_cast<char*>(a.c_str()));
      }
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }

  int m_master = -1;
  pid_t m_pid = -1;
  int m_status = -1;
  std::string m_screen;
};

}  // namespace

TEST(ExecTerminal, TheCommandCanReadTheTerminal) {
  RedisServer redis;
  OnTerminal t({"exec", "tty", "--", "sh", "-c", "echo ready; read line; echo \"got:$line\"; exit 5"}, redis.url());
  ASSERT_NE(t.read_until("ready").find("ready"), std::string::npos);
  t.type("hello\n");
  EXPECT_NE(t.read_until("got:hello").find("got:hello"), std::string::npos);
  EXPECT_EQ(t.wait(), 5);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("tty")}).integer, 0);
}

TEST(ExecTerminal, CtrlCReachesTheCommandAndTheLockIsReleased) {
  RedisServer redis;
  OnTerminal t({"exec", "tty", "--", "sh", "-c", "trap 'echo caught; exit 3' INT; echo ready; sleep 20 & wait"},
               redis.url());
  ASSERT_NE(t.read_until("ready").find("ready"), std::string::npos);
  t.type("\x03");  // the terminal's interrupt character
  EXPECT_NE(t.read_until("caught").find("caught"), std::string::npos);
  EXPECT_EQ(t.wait(), 3) << "redlock exits with the command's status, not killed by the interrupt itself";
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("tty")}).integer, 0);
}

TEST(ExecTerminal, CtrlZStopsTheWholeJobAndFgResumesIt) {
  // Ctrl-Z stopped only the command (its group has the terminal); redlock
  // went on renewing, so the shell never got its prompt back and the lock
  // stayed held by a stopped job with no way to reach it from the terminal.
  RedisServer redis;
  OnTerminal t(redis.url());
  const size_t mark = t.run_and_suspend("\"$RL\" exec --ttl 30s tz -- sh -c 'echo ready; read x; echo got:$x'");
  ASSERT_TRUE(t.prompt_is_back(mark)) << t.read_until("").substr(mark);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("tz")}).integer, 1) << "a stopped job keeps its lock for its TTL";
  t.fg_and_answer();
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("tz")}).integer, 0);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

TEST(ExecTerminal, AWaitWithoutALimitCountsTheTimeSoFar) {
  // The live line of --wait inf read "waiting for w: 1s of ever".
  RedisServer redis;
  ASSERT_EQ(run({"acquire", "--ttl", "30s", "w"}, {{"REDLOCK_URL", redis.url()}}).status, 0);
  OnTerminal t({"acquire", "--wait", "inf", "w"}, redis.url());
  const std::string screen = t.read_until("1s so far");
  EXPECT_NE(screen.find("waiting for w: 1s so far, held by"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("ever"), std::string::npos) << screen;
}

TEST(ExecTerminal, AfterCtrlZAndBgTheShellKeepsTheTerminal) {
  // Continued in the background, redlock took the terminal back from the
  // shell when the command ended (or stopped on reading it), and the
  // interactive shell, reading, got EIO and exited.
  RedisServer redis;
  OnTerminal t(redis.url());
  size_t mark = t.run_and_suspend("\"$RL\" exec --ttl 30s bgk -- sh -c 'echo ready; sleep 1; echo slept'");
  t.type("bg\n");
  ASSERT_TRUE(t.shows_after(mark, "slept")) << t.read_until("").substr(mark);
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("bgk")}).integer == 0; }, Seconds(5)));
  mark = t.seen();
  t.type("echo still-$((2+2))-here\n");
  EXPECT_TRUE(t.shows_after(mark, "still-4-here")) << t.read_until("").substr(mark);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

TEST(ExecTerminal, CtrlZStopsAJobThatRunsRedlockInsideAScriptOrAnotherExec) {
  // redlock stopped only itself: the script (or the outer exec) that ran it
  // went on waiting, and the terminal stayed with a stopped group.
  RedisServer redis;
  OnTerminal t(redis.url());
  size_t mark = t.run_and_suspend(
      "\"$RL\" exec --ttl 30s outer -- \"$RL\" exec --ttl 30s outer -- sh -c 'echo ready; read x; echo got:$x'");
  ASSERT_TRUE(t.prompt_is_back(mark)) << t.read_until("").substr(mark);
  t.fg_and_answer();
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("outer")}).integer, 0);

  // A script without job control of its own reads the terminal after exec.
  mark = t.seen();
  t.type("sh -c '\"$RL\" exec --ttl 30s s -- true; read y; echo after:$y'\n");
  t.type("there\n");
  EXPECT_TRUE(t.shows_after(mark, "after:there")) << t.read_until("").substr(mark);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

namespace {

// The command of the job-control tests: writes its pid to $D/pid, says
// "ready", then ticks into $D/ticks every 50 ms.
const std::string k_ticker =
    "sh -c 'echo $$ >\"$D/pid\"; echo ready; while :; do echo t >>\"$D/ticks\"; sleep 0.05; done'";

// Whether the command's ticks stop (a stopped command) or go on, over a few
// hundred milliseconds.
bool ticking(const std::string& ticks) {
  const size_t before = read_file(ticks).size();
  sleep_for(0.4);
  return read_file(ticks).size() > before;
}

}  // namespace

TEST(ExecTerminal, CtrlZStopsTheCommandWhenStandardInputIsNotTheTerminal) {
  // With </dev/null or a pipe, redlock decided it was not interactive:
  // Ctrl-Z stopped redlock alone, the command ran on over the prompt while
  // the shell said "Stopped", and the guard killed it at the end of the
  // validity.
  RedisServer redis;
  TempDir dir;
  OnTerminal t(redis.url());
  ASSERT_TRUE(t.shows_after(0, "$ "));
  t.type("export D='" + dir.path() + "'\n");
  for (const std::string& input : {std::string("</dev/null"), std::string("true |")}) {
    const std::string ticks = dir.path() + "/ticks";
    const std::string line = input == "true |" ? "true | \"$RL\" exec --ttl 30s zn -- " + k_ticker
                                               : "\"$RL\" exec --ttl 30s zn -- " + k_ticker + " </dev/null";
    const size_t mark = t.run_and_suspend(line);
    const pid_t pid = static_cast<pid_t>(std::stol(read_file(dir.path() + "/pid")));
    EXPECT_TRUE(eventually([&] { return process_state(pid) == 'T'; })) << input << ": the command was not stopped";
    EXPECT_FALSE(ticking(ticks)) << input;
    ASSERT_TRUE(t.prompt_is_back(mark)) << t.read_until("").substr(mark);
    const size_t resumed = t.seen();
    t.type("fg\n");
    EXPECT_TRUE(t.shows_after(resumed, "exec")) << t.read_until("").substr(resumed);
    EXPECT_TRUE(ticking(ticks)) << input << ": fg did not resume the command";
    t.type("\x03");  // Ctrl-C reaches the command too
    t.type("echo \"rc=$?\"\n");
    EXPECT_TRUE(t.shows_after(resumed, "rc=130")) << t.read_until("").substr(resumed);
    EXPECT_TRUE(eventually([&] { return redis.cmd({"EXISTS", lock_key("zn")}).integer == 0; }));
    EXPECT_EQ(process_state(pid), 0) << input;
  }
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

TEST(ExecTerminal, ABackgroundCommandThatReadsTheTerminalStopsTheJobAndFgResumesIt) {
  // The command got SIGTTIN in a group the shell does not know: the job
  // showed "Running" for ever, renewing the lock, and fg did not wake it.
  RedisServer redis;
  OnTerminal t(redis.url());
  ASSERT_TRUE(t.shows_after(0, "$ "));
  t.type("\"$RL\" exec --ttl 30s bgr -- sh -c 'sleep 0.2; read x; echo got:$x' &\n");
  size_t mark = t.seen();
  t.type("sleep 1; jobs\n");
  ASSERT_TRUE(t.shows_after(mark, "Stopped")) << t.read_until("").substr(mark);
  mark = t.seen();
  t.type("fg\n");
  EXPECT_TRUE(t.shows_after(mark, "exec")) << t.read_until("").substr(mark);
  t.type("hello\n");
  EXPECT_TRUE(t.shows_after(mark, "got:hello")) << t.read_until("").substr(mark);
  t.type("echo \"rc=$?\"\n");
  EXPECT_TRUE(t.shows_after(mark, "rc=0")) << t.read_until("").substr(mark);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("bgr")}).integer, 0);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

TEST(ExecTerminal, ABackgroundCommandThatWritesUnderTostopStopsTheJobAndFgResumesIt) {
  RedisServer redis;
  OnTerminal t(redis.url());
  ASSERT_TRUE(t.shows_after(0, "$ "));
  t.type("stty tostop; \"$RL\" exec --ttl 30s bgw -- sh -c 'sleep 0.2; echo out-$((6*7))' &\n");
  size_t mark = t.seen();
  t.type("sleep 1; jobs\n");
  ASSERT_TRUE(t.shows_after(mark, "Stopped")) << t.read_until("").substr(mark);
  EXPECT_FALSE(t.shows_after(mark, "out-42", Seconds(0.2)));
  mark = t.seen();
  t.type("fg\n");
  EXPECT_TRUE(t.shows_after(mark, "out-42")) << t.read_until("").substr(mark);
  t.type("echo \"rc=$?\"; stty -tostop\n");
  EXPECT_TRUE(t.shows_after(mark, "rc=0")) << t.read_until("").substr(mark);
  EXPECT_EQ(redis.cmd({"EXISTS", lock_key("bgw")}).integer, 0);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}

TEST(ExecTerminal, FgAfterACtrlZLongerThanTheValiditySaysTheGuardKilledTheCommand) {
  // fg said "sending SIGTERM to the command", which the guard had killed
  // while redlock was stopped.
  RedisServer redis;
  OnTerminal t(redis.url());
  t.run_and_suspend("\"$RL\" exec --ttl 2s tv -- sh -c 'echo ready; read x'");
  sleep_for(2.5);  // past the lock's validity
  const size_t mark = t.seen();
  t.type("fg\n");
  EXPECT_TRUE(t.shows_after(mark, "its guard killed the command when the validity ran out (exit status 74)"))
      << t.read_until("").substr(mark);
  t.type("echo \"rc=$?\"\n");
  EXPECT_TRUE(t.shows_after(mark, "rc=74")) << t.read_until("").substr(mark);
  EXPECT_EQ(t.read_until("").find("sending SIGTERM", mark), std::string::npos) << t.read_until("").substr(mark);
  t.type("exit\n");
  EXPECT_EQ(t.wait(), 0);
}
