// redlock exec: what CMD gets (status, arguments, environment, descriptors),
// what redlock itself prints, and the lock's life around CMD.

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;

namespace {

Env url_env(const RedisServer& redis, const TempDir& dir) {
  return Env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
}

std::map<std::string, std::string> parse_env(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    auto eq = line.find('=');
    if (eq != std::string::npos) {
      out[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return out;
}

}  // namespace

TEST(Exec, SuccessfulCommandExitsZeroAndReleasesTheLock) {
  RedisServer redis;
  TempDir dir;
  const long long before_us = redis.time_us();
  Result r = run({"exec", "job", "--", "true"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
  // It really was taken: the fencing counter moved (to the server's clock in µs at least).
  EXPECT_GE(std::stoll(redis.cmd({"GET", lock_key("job") + ":fence"}).str), before_us);
}

// On one server an exec sends each script by its SHA-1 (EVALSHA), not the
// release's 19 KB body that Redis would read and hash at every exec; the
// body goes only to a server that answers NOSCRIPT.
TEST(Exec, AServerThatHasTheScriptsGetsNoScriptBody) {
  RedisServer redis;
  TempDir dir;
  ASSERT_EQ(run({"exec", "job", "--", "true"}, url_env(redis, dir)).status, 0);  // the scripts are loaded
  ASSERT_EQ(redis.cmd({"CONFIG", "RESETSTAT"}).text(), "OK");
  Result r = run({"exec", "job", "--", "true"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(redis.calls("eval"), 0);
  EXPECT_EQ(redis.calls("evalsha"), 2);
  // A server that lost them gets them again, and the lock is still released.
  ASSERT_EQ(redis.cmd({"SCRIPT", "FLUSH"}).text(), "OK");
  Result again = run({"exec", "job", "--", "true"}, url_env(redis, dir));
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, CommandExitStatusPassesThrough) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"exec", "job", "--", "sh", "-c", "exit 7"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, CommandKilledBySignalGives128PlusSignal) {
  RedisServer redis;
  TempDir dir;
  // The shell is CMD itself (exec'd directly), so it is CMD that dies of SIGSEGV.
  Result r = run({"exec", "job", "--", "sh", "-c", "ulimit -c 0; kill -SEGV $$; exit 1"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 139) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, CommandNotFoundGives127) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"exec", "job", "--", "redlock-test-no-such-command-xyz"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_NE(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));

  Result abs = run({"exec", "job", "--", dir.path() + "/missing"}, url_env(redis, dir));
  EXPECT_EQ(abs.status, 127) << abs.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, ACommandThatIsNotFoundIsNamedWithoutRawControlCharacters) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"exec", "job", "--", "/no\x1b[2Jcmd"}, url_env(redis, dir));
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_EQ(r.err, "redlock: cannot run /no\\x1b[2Jcmd: command not found\n");
}

TEST(Exec, AScriptWhoseInterpreterIsMissingIsNotCalledNotFound) {
  // execve says ENOENT for the #! line's interpreter: the script is there.
  RedisServer redis;
  TempDir dir;
  const std::string script = dir.path() + "/bad-interpreter.sh";
  write_file(script, "#!/no/such/interpreter\necho hi\n");
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  Result r = run({"exec", "job", "--", script}, url_env(redis, dir));
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_EQ(r.err, "redlock: cannot run " + script + ": its interpreter (the #! line) was not found\n");
  Result empty = run({"exec", "job", "--", ""}, url_env(redis, dir));
  EXPECT_EQ(empty.status, 127) << empty.err;
  EXPECT_EQ(empty.err, "redlock: cannot run '': command not found\n") << "an empty name is shown as one";
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, CommandNotExecutableGives126) {
  RedisServer redis;
  TempDir dir;
  std::string script = dir.path() + "/not-executable.sh";
  write_file(script, "#!/bin/sh\nexit 0\n", 0644);
  Result r = run({"exec", "job", "--", script}, url_env(redis, dir));
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_NE(r.err, "");
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));

  Result d = run({"exec", "job", "--", dir.path()}, url_env(redis, dir));
  EXPECT_EQ(d.status, 126) << d.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, ACommandLineTooLongWithTheLocksVariablesSaysSo) {
  // Arguments that fit redlock's own start but not CMD's (the REDLOCK_*
  // variables add a few hundred bytes) failed with "cannot execute". Under
  // a 256 KiB stack the limit is 128 KiB: the longest argument that still
  // lets redlock start is found by bisection, and with it CMD cannot start.
  RedisServer redis;
  TempDir dir;
  auto attempt = [&](size_t pad) {
    Child sh({"-c", "ulimit -s 256 && exec \"$0\" exec job -- true \"$@\"", redlock_binary(), std::string(pad / 2, 'a'),
              std::string(pad - pad / 2, 'b')},
             url_env(redis, dir), "sh");
    return sh.wait(Seconds(20));
  };
  auto redlock_started = [](const Result& r) { return r.err.find("Argument list too long") == std::string::npos; };
  size_t fits = 0;
  size_t too_long = 250'000;  // two arguments, each under the kernel's 128 KiB for one
  ASSERT_TRUE(redlock_started(attempt(fits)));
  ASSERT_FALSE(redlock_started(attempt(too_long)));
  while (too_long - fits > 1) {
    const size_t mid = fits + (too_long - fits) / 2;
    (redlock_started(attempt(mid)) ? fits : too_long) = mid;
  }
  Result r = attempt(fits);
  EXPECT_EQ(r.status, 126) << r.err;
  EXPECT_NE(r.err.find("redlock: cannot run true: argument list too long"), std::string::npos) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, ShellStringRunsWithDollarShell) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  env["SHELL"] = "";  // unset: /bin/sh
  Result r = run({"exec", "job", "-c", "echo \"one two\" | tr ' ' _; exit 5"}, env);
  EXPECT_EQ(r.status, 5) << r.err;
  EXPECT_EQ(r.out, "one_two\n");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));

  // $SHELL is the shell used: bash sets BASH_VERSION, dash does not.
  env["SHELL"] = "/bin/bash";
  Result b = run({"exec", "job", "-c", "echo \"[$BASH_VERSION]\""}, env);
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_NE(b.out, "[]\n");
  EXPECT_EQ(b.out.substr(0, 1), "[");
  env["SHELL"] = "/bin/sh";
  Result s = run({"exec", "job", "-c", "echo \"[$BASH_VERSION]\""}, env);
  EXPECT_EQ(s.out, "[]\n");
}

TEST(Exec, ArgumentsArriveUntouched) {
  RedisServer redis;
  TempDir dir;
  std::string script = dir.path() + "/args.sh";
  write_file(script, "printf '[%s]\\n' \"$@\"\n");
  Result r = run({"exec", "job", "--", "sh", script, "a b", "", "  two  spaces  ", "*", "$HOME", "--", "-c", "x", "-q",
                  "--ttl", "1s", "tab\there", "new\nline", "'quoted'"},
                 url_env(redis, dir));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "[a b]\n[]\n[  two  spaces  ]\n[*]\n[$HOME]\n[--]\n[-c]\n[x]\n[-q]\n[--ttl]\n[1s]\n"
            "[tab\there]\n[new\nline]\n['quoted']\n");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, EnvironmentDescribesTheLockAndKeepsTheCallersOwnPassword) {
  RedisServer::Options options;
  options.requirepass = "s3cret-pw";
  RedisServer redis(options);
  TempDir dir;
  Env env = url_env(redis, dir);
  env["REDLOCK_PASSWORD"] = "s3cret-pw";
  env["KEEP_ME"] = "kept";
  // CMD records its environment and the lock as Redis shows it at that moment.
  std::string script = dir.path() + "/env.sh";
  write_file(script, "env > \"$D/env\"\n");
  Result r = run({"exec", "--prefix", "pfx:", "job", "--", "sh", script}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job", "pfx:")));

  std::string text = read_file(dir.path() + "/env");
  auto seen = parse_env(text);
  EXPECT_EQ(seen["REDLOCK_NAME"], "job");
  EXPECT_EQ(seen["REDLOCK_PREFIX"], "pfx:");
  EXPECT_EQ(seen["REDLOCK_URL"], redis.url());
  EXPECT_EQ(seen["REDLOCK_TOKEN"].size() >= 32, true) << seen["REDLOCK_TOKEN"];
  EXPECT_GT(std::stoll(seen["REDLOCK_FENCE"]), 0);
  EXPECT_EQ(seen["REDLOCK_FENCE"], redis.cmd({"GET", lock_key("job", "pfx:") + ":fence"}).str);
  EXPECT_EQ(seen["KEEP_ME"], "kept");
  // $REDLOCK_PASSWORD was the caller's before redlock ran: CMD keeps it, and
  // it appears nowhere else.
  EXPECT_EQ(seen["REDLOCK_PASSWORD"], "s3cret-pw");
  EXPECT_EQ(text.find("s3cret-pw"), text.rfind("s3cret-pw")) << text;
  EXPECT_EQ(r.err.find("s3cret-pw"), std::string::npos);
}

TEST(Exec, EnvironmentTokenAndFenceAreTheHeldOnes) {
  RedisServer redis;
  TempDir dir;
  // Two runs: the second holder gets a larger fence and a different token;
  // both must match what Redis holds while CMD runs.
  std::string script = dir.path() + "/env.sh";
  write_file(script,
             "printf '%s %s\\n' \"$REDLOCK_TOKEN\" \"$REDLOCK_FENCE\" >> \"$D/seen\"\n"
             "while [ ! -e \"$D/go$REDLOCK_FENCE\" ]; do sleep 0.02; done\n");
  std::string previous_fence = "0";
  for (int round = 1; round <= 2; ++round) {
    Child c({"exec", "job", "--", "sh", script}, url_env(redis, dir));
    ASSERT_TRUE(eventually([&] {
      std::string seen = read_file(dir.path() + "/seen");
      return std::count(seen.begin(), seen.end(), '\n') == round;
    })) << c.err_so_far();
    std::istringstream last(read_file(dir.path() + "/seen"));
    std::string token, fence;
    for (int i = 0; i < round; ++i) {
      last >> token >> fence;
    }
    EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
    EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "fence"}).str, fence);
    EXPECT_GT(std::stoll(fence), std::stoll(previous_fence));
    previous_fence = fence;
    write_file(dir.path() + "/go" + fence, "");
    Result r = c.wait(Seconds(10));
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_FALSE(key_exists(redis, lock_key("job")));
  }
  std::istringstream all(read_file(dir.path() + "/seen"));
  std::string t1, f1, t2, f2;
  all >> t1 >> f1 >> t2 >> f2;
  EXPECT_NE(t1, t2);
}

TEST(Exec, UrlGivenToCommandHasNoPasswordEvenWhenTheUrlHadOne) {
  // The URL's password reaches CMD as $REDLOCK_PASSWORD only (so a nested
  // redlock can authenticate), never inside $REDLOCK_URL.
  RedisServer::Options options;
  options.requirepass = "pw-in-url-77";
  RedisServer redis(options);
  TempDir dir;
  std::string url = "redis://:pw-in-url-77@127.0.0.1:" + std::to_string(redis.port());
  Env env{{"REDLOCK_URL", url}, {"D", dir.path()}};
  Result r = run({"exec", "job", "--", "sh", "-c", "env > \"$D/env\""}, env);
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = read_file(dir.path() + "/env");
  auto seen = parse_env(text);
  EXPECT_NE(seen["REDLOCK_URL"], "");
  EXPECT_NE(seen["REDLOCK_URL"].find("127.0.0.1:" + std::to_string(redis.port())), std::string::npos)
      << seen["REDLOCK_URL"];
  EXPECT_EQ(seen["REDLOCK_URL"].find("pw-in-url-77"), std::string::npos) << text;
  EXPECT_EQ(seen["REDLOCK_PASSWORD"], "pw-in-url-77");
  EXPECT_EQ(text.find("pw-in-url-77"), text.rfind("pw-in-url-77")) << text;

  // The same through -r on the command line.
  Result r2 = run({"-r", url, "exec", "job", "--", "sh", "-c", "env > \"$D/env2\""}, {{"D", dir.path()}});
  ASSERT_EQ(r2.status, 0) << r2.err;
  std::string text2 = read_file(dir.path() + "/env2");
  EXPECT_NE(parse_env(text2)["REDLOCK_URL"], "");
  EXPECT_EQ(parse_env(text2)["REDLOCK_URL"].find("pw-in-url-77"), std::string::npos) << text2;
}

TEST(Exec, CommandSeesOnlyDescriptorsZeroOneTwo) {
  RedisServer redis;
  TempDir dir;
  // The shell lists its own descriptors ($$ is CMD, exec'd by redlock).
  // `ls` runs in a forked child (it is not the last command, so the shell
  // does not exec it), so its own directory descriptor is not in the
  // listing; and there is no redirection, which dash would implement by
  // saving a descriptor of its own (fd 10).
  Result r = run({"exec", "job", "--", "sh", "-c", "ls -1 /proc/$$/fd; exit 0"}, url_env(redis, dir));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "0\n1\n2\n");

  // The same after renewals (the renewer's connection is open then).
  Result r2 = run({"exec", "--ttl", "300ms", "job", "--", "sh", "-c", "sleep 0.4; ls -1 /proc/$$/fd; exit 0"},
                  url_env(redis, dir));
  ASSERT_EQ(r2.status, 0) << r2.err;
  EXPECT_EQ(r2.out, "0\n1\n2\n");

  // Descriptors that redlock itself inherited (not close-on-exec) stay
  // with redlock too: CMD gets 0, 1 and 2 only.
  Env env = url_env(redis, dir);
  env["RL"] = redlock_binary();
  Child c({"-c",
           "exec 7</dev/null 8>\"$D/extra\"; exec \"$RL\" exec job -- sh -c 'ls -1 /proc/$$/fd; "
           "exit 0'"},
          env, "sh");
  Result r3 = c.wait(Seconds(10));
  ASSERT_EQ(r3.status, 0) << r3.err;
  EXPECT_EQ(r3.out, "0\n1\n2\n");
}

TEST(Exec, RedlockWritesNothingToStdout) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  Result r = run({"-v", "exec", "job", "--", "sh", "-c", "echo out-line; echo err-line >&2"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "out-line\n");
  EXPECT_NE(r.err.find("err-line\n"), std::string::npos);

  // Busy, failing and lost paths write to stderr only.
  Result holder = run({"acquire", "--ttl", "30s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  Result busy = run({"exec", "job", "--", "sh", "-c", "echo should-not-run"}, env);
  EXPECT_EQ(busy.status, 75) << busy.err;
  EXPECT_EQ(busy.out, "");
  EXPECT_NE(busy.err, "");
  Result bad = run({"exec", "other", "--", "redlock-test-no-such-command-xyz"}, env);
  EXPECT_EQ(bad.status, 127);
  EXPECT_EQ(bad.out, "");
}

TEST(Exec, BusyLockWithQuietExitsSeventyFiveSilently) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  Result holder = run({"acquire", "--ttl", "30s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  std::string token = holder.out.substr(0, holder.out.find('\n'));

  Result q = run({"-q", "exec", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(q.status, 75);
  EXPECT_EQ(q.err, "");
  EXPECT_EQ(q.out, "");
  // Also with -q after the subcommand (global options are accepted there).
  Result q2 = run({"exec", "-q", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(q2.status, 75);
  EXPECT_EQ(q2.err, "");

  Result loud = run({"exec", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(loud.status, 75);
  EXPECT_NE(loud.err, "");
  EXPECT_EQ(std::count(loud.err.begin(), loud.err.end(), '\n'), 1) << loud.err;

  EXPECT_FALSE(file_exists(dir.path() + "/ran"));
  // The holder still holds it, untouched.
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
}

TEST(Exec, ConflictExitCodeReplacesSeventyFive) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  Result holder = run({"acquire", "--ttl", "30s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;

  Result zero = run({"exec", "--conflict-exit-code", "0", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(zero.status, 0);
  Result three = run({"exec", "--conflict-exit-code", "3", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(three.status, 3);
  EXPECT_NE(three.err, "");
  Result quiet = run({"-q", "exec", "--conflict-exit-code", "3", "job", "--", "sh", "-c", "touch \"$D/ran\""}, env);
  EXPECT_EQ(quiet.status, 3);
  EXPECT_EQ(quiet.err, "");
  EXPECT_FALSE(file_exists(dir.path() + "/ran"));
  EXPECT_TRUE(key_exists(redis, lock_key("job")));

  // A free lock still gives CMD's own status, not the conflict code.
  Result free_run = run({"exec", "--conflict-exit-code", "3", "free", "--", "sh", "-c", "exit 9"}, env);
  EXPECT_EQ(free_run.status, 9) << free_run.err;
}

TEST(Exec, ShortLockStaysHeldThroughALongCommand) {
  RedisServer redis;
  TempDir dir;
  Child c({"exec", "--ttl", "1s", "job", "--", "sh", "-c", "echo $$ > \"$D/pid\"; sleep 5"}, url_env(redis, dir));
  pid_t pid = wait_for_pid(dir.path() + "/pid");
  ASSERT_GT(pid, 0) << c.err_so_far();
  std::string token = redis.cmd({"HGET", lock_key("job"), "token"}).str;
  ASSERT_FALSE(token.empty());
  // Sample every 100 ms while CMD runs: the key never disappears and
  // never changes hands. A 1 s lock that was not renewed would be gone
  // after the first second.
  int samples = 0;
  int missing = 0;
  long long max_pttl = 0;
  while (process_alive(pid)) {
    std::string now = redis.cmd({"HGET", lock_key("job"), "token"}).str;
    if (now != token) {
      // CMD may just have ended and the lock been released; only a miss
      // while CMD still runs counts.
      if (process_alive(pid)) {
        ++missing;
      }
    }
    max_pttl = std::max(max_pttl, redis.cmd({"PTTL", lock_key("job")}).integer);
    ++samples;
    struct timespec ts {
      0, 100'000'000
    };
    nanosleep(&ts, nullptr);
  }
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_GE(samples, 35);  // ~5 s at 100 ms (with slack for a loaded machine)
  EXPECT_EQ(missing, 0);
  EXPECT_LE(max_pttl, 1000);  // it is renewed to its 1 s TTL, not longer
  EXPECT_GE(r.seconds, 4.9);
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, NestedExecOfTheSameNameReentersAndLeavesTheLockHeld) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  env["RL"] = redlock_binary();
  // The outer CMD runs an inner `redlock exec job` (with --wait, so a
  // failure to re-enter would hang rather than fail fast), then goes on.
  std::string script = dir.path() + "/outer.sh";
  write_file(script,
             "echo $$ > \"$D/pid\"\n"
             "\"$RL\" exec --wait 20s job -- sh -c 'touch \"$D/inner\"; while [ ! -e \"$D/go1\" ]; "
             "do sleep 0.02; done'\n"
             "echo $? > \"$D/inner_status\"\n"
             "while [ ! -e \"$D/go2\" ]; do sleep 0.02; done\n");
  Child c({"exec", "--ttl", "3s", "job", "--", "sh", script}, env);
  Reaper reaper;
  reaper.group(wait_for_pid(dir.path() + "/pid"));
  double t = seconds_until_file(dir.path() + "/inner", Seconds(10));
  ASSERT_GE(t, 0) << "the inner exec never ran its command: " << c.err_so_far();
  EXPECT_LT(t, 3.0);
  std::string token = redis.cmd({"HGET", lock_key("job"), "token"}).str;
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "2");

  write_file(dir.path() + "/go1", "");
  ASSERT_NE(wait_for_pid(dir.path() + "/inner_status"), -1);
  EXPECT_EQ(read_file(dir.path() + "/inner_status"), "0\n");
  // The inner exec gave back its level only: the outer still holds the lock.
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  // And it stays held (renewed by the outer) while the outer CMD goes on past a TTL.
  struct timespec ts {
    3, 500'000'000
  };
  nanosleep(&ts, nullptr);
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);
  EXPECT_TRUE(c.alive());

  write_file(dir.path() + "/go2", "");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, NestedAcquireAndReleaseOfTheSameNameReenter) {
  RedisServer redis;
  TempDir dir;
  Env env = url_env(redis, dir);
  env["RL"] = redlock_binary();
  std::string script = dir.path() + "/outer.sh";
  write_file(script,
             "echo $$ > \"$D/pid\"\n"
             "\"$RL\" acquire --wait 20s job > \"$D/acquired_token\"\n"
             "echo $? > \"$D/acquire_status\"\n"
             "while [ ! -e \"$D/go1\" ]; do sleep 0.02; done\n"
             "\"$RL\" release job\n"
             "echo $? > \"$D/release_status\"\n"
             "while [ ! -e \"$D/go2\" ]; do sleep 0.02; done\n");
  Child c({"exec", "--ttl", "3s", "job", "--", "sh", script}, env);
  Reaper reaper;
  reaper.group(wait_for_pid(dir.path() + "/pid"));
  ASSERT_NE(wait_for_pid(dir.path() + "/acquire_status", Seconds(10)), -1) << c.err_so_far();
  EXPECT_EQ(read_file(dir.path() + "/acquire_status"), "0\n");
  std::string token = redis.cmd({"HGET", lock_key("job"), "token"}).str;
  EXPECT_EQ(read_file(dir.path() + "/acquired_token"), token + "\n");
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "2");

  write_file(dir.path() + "/go1", "");
  ASSERT_NE(wait_for_pid(dir.path() + "/release_status"), -1);
  EXPECT_EQ(read_file(dir.path() + "/release_status"), "0\n");
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
  EXPECT_EQ(redis.cmd({"HGET", lock_key("job"), "token"}).str, token);

  write_file(dir.path() + "/go2", "");
  Result r = c.wait(Seconds(10));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

// Global options are accepted after the subcommand (man redlock: OPTIONS),
// and -r is the one most often written there: `redlock exec -r URL NAME -- CMD`.
TEST(Exec, RedisOptionAfterTheSubcommandTakesOneUrl) {
  RedisServer redis;
  TempDir dir;
  Result r = run({"exec", "-r", redis.url(), "job", "--", "sh", "-c", "exit 4"}, {{"D", dir.path()}});
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_FALSE(key_exists(redis, lock_key("job")));
}

TEST(Exec, TheRenewerThreadStartsOnlyWhenItIsSoonNeeded) {
  // A command that ends long before the first renewal (ttl/3) never costs
  // redlock a thread; one that runs on has the renewer by ttl/6, and the
  // revoke listener once it has run 50ms.
  ExecFixture f;
  const std::string threads = "ls /proc/$PPID/task | wc -l";
  Result quick = run({"exec", "--ttl", "30s", "threads", "--", "sh", "-c", threads}, f.env());
  ASSERT_EQ(quick.status, 0) << quick.err;
  EXPECT_EQ(quick.out, "1\n");
  Result slow = run({"exec", "--ttl", "600ms", "threads", "--", "sh", "-c", "sleep 0.4; " + threads}, f.env());
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_EQ(slow.out, "3\n");
}

TEST(Exec, AnUncontendedRunCostsRedisFewCommands) {
  // Every command a script runs costs Redis the same bookkeeping as one a
  // client sends (ACL, stats, the reply made into Lua), and with caches as
  // cold as a new process leaves them, that is most of a script's time. A
  // name with a ledger, nobody in line and no suspension: the acquire and
  // the release together ran 46 commands inside their scripts before they
  // asked EXISTS once for keys that are not there, took the fence with GET
  // and the ledger with XREVRANGE rather than with a TYPE first, and
  // reused the PTTL they had just set.
  RedisServer redis;
  TempDir dir;
  ASSERT_EQ(run({"exec", "job", "--", "true"}, url_env(redis, dir)).status, 0);
  const long long before = redis.commands_run();
  const long long scripts = redis.calls("evalsha") + redis.calls("eval");
  Result r = run({"exec", "job", "--", "true"}, url_env(redis, dir));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(redis.calls("evalsha") + redis.calls("eval") - scripts, 2);
  EXPECT_LE(redis.commands_run() - before - 2, 33) << redis.cmd({"INFO", "commandstats"}).str;
}
