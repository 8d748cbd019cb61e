// Operators' marks on a name, against real servers and processes: break
// --grace and its older spelling revoke (the holder's exec hears it at
// once, a script's hold is broken after the grace), exec --on-busy
// replace, suspend and resume, and --note.

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "exec_support.hpp"
#include "harness.hpp"
#include "servers.hpp"

using namespace redlock::test;

namespace {

using Fixture = ExecFixture;

bool has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

bool await_listener(const RedisServer& redis, const std::string& name) {
  return await_revoke_listeners(redis, name);
}

}  // namespace

// `revoke NAME --grace D` and its spelling `break NAME --grace D`: one
// job, so one set of tests, run under each word.
class Grace : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Spellings, Grace, ::testing::Values("revoke", "break"));

TEST_P(Grace, TheHoldersExecHearsAtOnceEndsItsCommandAndGivesTheLockBack) {
  // A TTL of 60s: the first renewal is 20s away, so a revoke heard within
  // seconds was heard on the channel, not at a renewal.
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << holder.err_so_far();
  Result r = run({GetParam(), "job", "--grace", "5s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(r.seconds, 4.0) << "heard at once, not at the next renewal";
  EXPECT_TRUE(has(r.out, "revoked job: ")) << r.out;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_TRUE(has(h.err, "revoked by")) << h.err;
  EXPECT_TRUE(file_exists(f.path("term"))) << "the command got SIGTERM";
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
  Result history = run({"history", "job"}, f.env());
  EXPECT_TRUE(has(history.out, "revoked")) << history.out;
}

TEST_P(Grace, AScriptsHoldIsBrokenAfterTheGraceAndOnlyThatHold) {
  Fixture f;
  Result got = run({"acquire", "--ttl", "60s", "scripted"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  Result r = run({GetParam(), "scripted", "--grace", "1s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GE(r.seconds, 1.0) << "the grace comes first";
  EXPECT_TRUE(has(r.out, "broke it")) << r.out;
  EXPECT_FALSE(key_exists(f.redis, lock_key("scripted")));
}

TEST(Revoke, ACommandThatIgnoresTheTermIsKilledAfterTheGrace) {
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", "-c", "trap '' TERM; echo $$ > \"$D/pid\"; sleep 60"},
               f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << holder.err_so_far();
  Result r = run({"revoke", "job", "--grace", "1s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GE(r.seconds, 1.0) << "SIGKILL waits for the grace";
  EXPECT_LT(r.seconds, 8.0);
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_TRUE(has(h.err, "SIGKILL")) << h.err;
}

TEST(Revoke, AHoldKeptForHoldAtLeastIsBrokenAtOnce) {
  // Nothing runs under a kept hold: there is nobody to wait for.
  Fixture f;
  ASSERT_EQ(run({"exec", "--hold-at-least", "60s", "job", "--", "true"}, f.env()).status, 0);
  ASSERT_TRUE(key_exists(f.redis, lock_key("job"))) << "kept after the run";
  Result r = run({"revoke", "job", "--grace", "5s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(r.seconds, 3.0) << "not the grace and a second more";
  EXPECT_TRUE(has(r.out, "kept for --hold-at-least")) << r.out;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(Revoke, ALockNobodyHoldsIs1) {
  Fixture f;
  Result r = run({"revoke", "free"}, f.env());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(has(r.err, "not held")) << r.err;
}

TEST(Revoke, AnExecThatCannotActIs75AndActsOnceItCan) {
  // A stopped redlock stays subscribed (its connection is open) but cannot
  // act: revoke says so, and names the next step.
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << holder.err_so_far();
  holder.signal(SIGSTOP);
  Result r = run({"revoke", "job", "--grace", "1s"}, f.env(), Seconds(30));
  holder.signal(SIGCONT);
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "redlock break job")) << r.err;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << "the message waited in its connection: " << h.err;
  EXPECT_FALSE(key_exists(f.redis, lock_key("job")));
}

TEST(Revoke, ARevokeMadeBeforeTheExecListensIsReadFromItsMark) {
  // The revoke lands while the holder's command runs its first moments:
  // the exec finds its run in the mark once it subscribes.
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_TRUE(eventually([&] { return key_exists(f.redis, lock_key("job")); })) << holder.err_so_far();
  Child revoke({"revoke", "job", "--grace", "3s"}, f.env());
  Result h = holder.wait(Seconds(20));
  Result r = revoke.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Revoke, RacingTheHoldersOwnEndLeavesNothingForTheNextHolder) {
  Fixture f;
  for (int round = 0; round < 12; ++round) {
    Child holder({"exec", "job", "--", "sleep", "0.2"}, f.env());
    sleep_for(0.05 * (round % 6));
    Result r = run({"revoke", "job", "--grace", "1s"}, f.env(), Seconds(30));
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.status << r.err;
    Result h = holder.wait(Seconds(20));
    EXPECT_TRUE(h.status == 0 || h.status == 74) << h.status << h.err;
    // Whatever happened, the next holder runs undisturbed.
    Result next = run({"exec", "job", "--", "sh", "-c", "sleep 0.3; echo done"}, f.env(), Seconds(20));
    EXPECT_EQ(next.status, 0) << "round " << round << ": " << next.err;
    EXPECT_EQ(next.out, "done\n");
    EXPECT_FALSE(has(next.err, "revoked")) << next.err;
  }
}

TEST(Revoke, StatusShowsAPendingRevoke) {
  Fixture f;
  Result got = run({"acquire", "--ttl", "60s", "scripted"}, f.env());
  ASSERT_EQ(got.status, 0) << got.err;
  Child revoke({"revoke", "scripted", "--grace", "20s"}, f.env());
  std::string table;
  ASSERT_TRUE(eventually(
      [&] {
        table = run({"status", "scripted"}, f.env()).out;
        return has(table, "revoking");
      },
      Seconds(10)))
      << table;
  Result json = run({"status", "--json", "scripted"}, f.env());
  EXPECT_TRUE(has(json.out, "\"grace_ms\": 20000")) << json.out;
  revoke.signal(SIGTERM);
  Result r = revoke.wait(Seconds(10));
  EXPECT_EQ(r.signal, SIGTERM) << r.err;
  EXPECT_TRUE(has(r.err, "may still do so")) << r.err;
}

TEST(Revoke, AHolderOnThreeServersIsRevoked) {
  Servers s(3);
  TempDir d;
  Env env = s.env();
  env["D"] = d.path();
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", "-c", "echo $$ > \"$D/pid\"; sleep 60"}, env);
  ASSERT_GT(wait_for_pid(d.path() + "/pid"), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(s[0], "job")) << holder.err_so_far();
  Result r = run({"revoke", "job", "--grace", "2s"}, env, Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_EQ(s.holders("job"), 0);
}

TEST(BreakGrace, AnExecStillHoldingAfterTheGraceIs75AndALockNobodyHoldsIs1) {
  Fixture f;
  Result free = run({"break", "free", "--grace", "1s"}, f.env());
  EXPECT_EQ(free.status, 1) << free.err;
  EXPECT_EQ(free.err, run({"revoke", "free", "--grace", "1s"}, f.env()).err) << "the same line as revoke's";
  Child holder({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << holder.err_so_far();
  holder.signal(SIGSTOP);
  Result r = run({"break", "job", "--grace", "1s"}, f.env(), Seconds(30));
  holder.signal(SIGCONT);
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "is still held by")) << r.err;
  EXPECT_TRUE(has(r.err, "redlock break job frees it")) << r.err;
  EXPECT_EQ(holder.wait(Seconds(20)).status, 74);
}

TEST(BreakGrace, WithoutItBreakIsAsItWas) {
  Fixture f;
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "held"}, f.env()).status, 0);
  Result r = run({"break", "held", "free"}, f.env());
  EXPECT_EQ(r.status, 1) << "one was free: " << r.err;
  EXPECT_LT(r.seconds, 3.0) << "no grace to wait";
  EXPECT_TRUE(has(r.out, "broke held: took it from")) << r.out;
  EXPECT_FALSE(key_exists(f.redis, lock_key("held")));
}

TEST(OnBusy, ReplaceRevokesTheHolderAndRuns) {
  Fixture f;
  Child old({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << old.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << old.err_so_far();
  Result r =
      run({"exec", "--on-busy", "replace", "--kill-after", "2s", "job", "--", "echo", "new run"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "new run\n");
  EXPECT_TRUE(has(r.err, "--on-busy replace")) << r.err;
  Result o = old.wait(Seconds(20));
  EXPECT_EQ(o.status, 74) << o.err;
}

// A replacement that may not run does not revoke: the holder's run goes on
// (suspend promises it), and the replacer is busy as a plain exec is.
TEST(OnBusy, ReplaceOnASuspendedNameLeavesTheHolderRunning) {
  Fixture f;
  Child old({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << old.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << old.err_so_far();
  ASSERT_EQ(run({"suspend", "job", "--reason", "window"}, f.env()).status, 0);
  Result r = run({"exec", "--on-busy", "replace", "--kill-after", "1s", "job", "--", "touch", f.path("ran")}, f.env(),
                 Seconds(30));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "window")) << r.err;
  EXPECT_FALSE(file_exists(f.path("ran")));
  EXPECT_FALSE(file_exists(f.path("term"))) << "the running job was not stopped";
  EXPECT_TRUE(old.alive()) << old.err_so_far();
  EXPECT_FALSE(has(old.err_so_far(), "revoked")) << old.err_so_far();
  old.signal(SIGTERM);
  (void)old.wait(Seconds(20));
}

TEST(OnBusy, ReplaceWithinTheSkipWindowLeavesTheHolderRunning) {
  Fixture f;
  ASSERT_EQ(run({"exec", "job", "--", "true"}, f.env()).status, 0);  // this period's ok run
  Child old({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << old.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << old.err_so_far();
  Result r = run({"exec", "--on-busy", "replace", "--kill-after", "1s", "--skip-if-ok-within", "1h", "job", "--",
                  "touch", f.path("ran")},
                 f.env(), Seconds(30));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "--skip-if-ok-within")) << r.err;
  EXPECT_FALSE(file_exists(f.path("ran")));
  EXPECT_FALSE(file_exists(f.path("term"))) << "the running job was not stopped";
  EXPECT_TRUE(old.alive()) << old.err_so_far();
  old.signal(SIGTERM);
  (void)old.wait(Seconds(20));
}

TEST(OnBusy, ReplaceWithAFullLineLeavesTheHolderRunning) {
  Fixture f;
  Child old({"exec", "--ttl", "60s", "job", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << old.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "job")) << old.err_so_far();
  Child waiter({"acquire", "--wait", "60s", "job"}, f.env());
  ASSERT_TRUE(await_waiters(f.redis, "job")) << waiter.err_so_far();
  Result r = run(
      {"exec", "--on-busy", "replace", "--kill-after", "1s", "--max-waiters", "1", "job", "--", "touch", f.path("ran")},
      f.env(), Seconds(30));
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(has(r.err, "--max-waiters 1")) << r.err;
  EXPECT_FALSE(file_exists(f.path("ran")));
  EXPECT_FALSE(file_exists(f.path("term"))) << "the running job was not stopped";
  EXPECT_TRUE(old.alive()) << old.err_so_far();
  waiter.signal(SIGTERM);
  old.signal(SIGTERM);
  (void)waiter.wait(Seconds(20));
  (void)old.wait(Seconds(20));
}

TEST(OnBusy, FailIsTheDefaultAndReplaceOnAFreeLockJustRuns) {
  Fixture f;
  Result free = run({"exec", "--on-busy", "replace", "job", "--", "echo", "ran"}, f.env());
  EXPECT_EQ(free.status, 0) << free.err;
  EXPECT_EQ(free.out, "ran\n");
  EXPECT_EQ(free.err, "");
  Result got = run({"acquire", "--ttl", "60s", "job"}, f.env());
  ASSERT_EQ(got.status, 0);
  Result busy = run({"exec", "--on-busy", "fail", "job", "--", "echo", "ran"}, f.env());
  EXPECT_EQ(busy.status, 75) << busy.err;
}

TEST(Suspend, AcquireAndExecAreBusyWithTheReasonUntilResumed) {
  Fixture f;
  Result s = run({"suspend", "nightly", "--reason", "db maintenance"}, f.env());
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_TRUE(has(s.out, "suspended nightly")) << s.out;
  Result e = run({"exec", "nightly", "--", "touch", f.path("ran")}, f.env());
  EXPECT_EQ(e.status, 75) << e.err;
  EXPECT_TRUE(has(e.err, "db maintenance")) << e.err;
  EXPECT_TRUE(has(e.err, "redlock resume nightly")) << e.err;
  EXPECT_FALSE(file_exists(f.path("ran")));
  Result quiet = run({"-q", "exec", "nightly", "--", "true"}, f.env());
  EXPECT_EQ(quiet.status, 75);
  EXPECT_EQ(quiet.err, "") << "-q silences it as any busy line";
  Result a = run({"acquire", "--wait", "5s", "nightly"}, f.env());
  EXPECT_EQ(a.status, 75) << a.err;
  EXPECT_LT(a.seconds, 4.0) << "waiting would change nothing";
  Result table = run({"status"}, f.env());
  EXPECT_TRUE(has(table.out, "SUSPENDED")) << "a suspended name is listed though nobody holds it: " << table.out;
  EXPECT_TRUE(has(table.out, "db maintenance")) << table.out;
  EXPECT_EQ(table.status, 0) << "status of every lock is 1 only for a name given: " << table.err;
  EXPECT_EQ(table.err, "");
  Result globbed = run({"status", "night*"}, f.env());
  EXPECT_EQ(globbed.status, 0) << globbed.err;
  EXPECT_TRUE(has(globbed.out, "SUSPENDED")) << globbed.out;
  Result named = run({"status", "nightly"}, f.env());
  EXPECT_EQ(named.status, 1) << "a name given that nobody holds: " << named.err;
  EXPECT_TRUE(has(named.err, "nightly is not held")) << named.err;
  Result json = run({"status", "--json", "nightly"}, f.env());
  EXPECT_TRUE(has(json.out, "\"reason\": \"db maintenance\"")) << json.out;
  Result prom = run({"status", "--format", "prometheus", "nightly"}, f.env());
  EXPECT_TRUE(has(prom.out, "redlock_lock_suspended{name=\"nightly\"} 1")) << prom.out;
  Result resumed = run({"resume", "nightly"}, f.env());
  EXPECT_EQ(resumed.status, 0) << resumed.err;
  Result again = run({"exec", "nightly", "--", "touch", f.path("ran")}, f.env());
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_TRUE(file_exists(f.path("ran")));
  Result twice = run({"resume", "nightly"}, f.env());
  EXPECT_EQ(twice.status, 0);
  EXPECT_TRUE(has(twice.out, "was not suspended")) << twice.out;
}

TEST(Suspend, TheRunningHolderGoesOnAndReEntersAndBreakDoesNotLiftIt) {
  Fixture f;
  Result got = run({"acquire", "--ttl", "60s", "job"}, f.env());
  ASSERT_EQ(got.status, 0);
  const std::string token = got.out.substr(0, got.out.find('\n'));
  ASSERT_EQ(run({"suspend", "job"}, f.env()).status, 0);
  Result reenter = run({"acquire", "--token", token, "job"}, f.env());
  EXPECT_EQ(reenter.status, 0) << reenter.err;
  EXPECT_EQ(run({"renew", "--token", token, "job"}, f.env()).status, 0);
  EXPECT_EQ(run({"break", "job"}, f.env()).status, 0);
  Result after = run({"exec", "job", "--", "true"}, f.env());
  EXPECT_EQ(after.status, 75) << "break does not lift a suspension: " << after.err;
  EXPECT_TRUE(has(after.err, "suspended")) << after.err;
}

TEST(Suspend, ForLapsesByItself) {
  Fixture f;
  ASSERT_EQ(run({"suspend", "job", "--for", "1s"}, f.env()).status, 0);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, f.env()).status, 75);
  EXPECT_TRUE(eventually([&] { return run({"exec", "job", "--", "true"}, f.env()).status == 0; }, Seconds(10)));
  Result table = run({"status"}, f.env());
  EXPECT_FALSE(has(table.out, "SUSPENDED")) << table.out;
}

TEST(Suspend, AWaiterInLineLeavesItAtItsNextTry) {
  Fixture f;
  Result got = run({"acquire", "--ttl", "60s", "job"}, f.env());
  ASSERT_EQ(got.status, 0);
  const std::string token = got.out.substr(0, got.out.find('\n'));
  Child waiter({"exec", "--wait", "60s", "job", "--", "touch", f.path("ran")}, f.env());
  ASSERT_TRUE(await_waiters(f.redis, "job")) << waiter.err_so_far();
  ASSERT_EQ(run({"suspend", "job", "--reason", "window"}, f.env()).status, 0);
  ASSERT_EQ(run({"release", "--token", token, "job"}, f.env()).status, 0);
  Result w = waiter.wait(Seconds(20));
  EXPECT_EQ(w.status, 75) << w.err;
  EXPECT_TRUE(has(w.err, "window")) << w.err;
  EXPECT_FALSE(file_exists(f.path("ran")));
  EXPECT_FALSE(key_exists(f.redis, lock_key("job") + ":line")) << "it left the line";
}

TEST(Suspend, OnThreeServersAMajorityIsEnough) {
  Servers s(3);
  Env env = s.env();
  s[2].stop();
  Result r = run({"suspend", "job", "--reason", "three"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  s[2].start();
  Result e = run({"exec", "job", "--", "true"}, env);
  EXPECT_EQ(e.status, 75) << e.err;
  EXPECT_TRUE(has(e.err, "three")) << e.err;
  EXPECT_EQ(run({"resume", "job"}, env).status, 0);
  EXPECT_EQ(run({"exec", "job", "--", "true"}, env).status, 0);
}

TEST(Suspend, StatusJsonGivesWhoSuspendedOrRevokedAPidAsANumber) {
  // As every other pid in redlock's JSON (holders', events' by_pid).
  Fixture f;
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, f.env()).status, 0);
  Child revoke({"revoke", "job", "--grace", "5s"}, f.env());
  nlohmann::json pending;
  ASSERT_TRUE(eventually([&] {
    pending = nlohmann::json::parse(run({"status", "--json", "job"}, f.env()).out).at(0)["revoke"];
    return !pending.is_null();
  })) << revoke.err_so_far();
  EXPECT_TRUE(pending["pid"].is_number_integer()) << pending.dump();
  ASSERT_EQ(run({"suspend", "job"}, f.env()).status, 0);
  const nlohmann::json s = nlohmann::json::parse(run({"status", "--json", "job"}, f.env()).out).at(0)["suspended"];
  EXPECT_EQ(s["pid"], static_cast<long long>(getpid())) << s.dump();
  (void)revoke.wait(Seconds(20));
}

TEST(Note, StatusShowsTheNoteWithPasswordsRedacted) {
  Fixture f;
  Child holder({"exec", "--note", "web-3:8080 redis://u:hunter2@db", "leader", "--", "sh", "-c",
                "echo $$ > \"$D/pid\"; sleep 60"},
               f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  Result table = run({"status", "leader"}, f.env());
  EXPECT_TRUE(has(table.out, "web-3:8080")) << table.out;
  EXPECT_FALSE(has(table.out, "hunter2")) << table.out;
  Result json = run({"status", "--json", "leader"}, f.env());
  EXPECT_TRUE(has(json.out, "\"note\": \"web-3:8080 redis://u:***@db\"")) << json.out;
  holder.signal(SIGTERM);
  (void)holder.wait(Seconds(20));
}

TEST(Revoke, OneNameOfASeveralNameExecIsNamedInItsLines) {
  Fixture f;
  Child holder({"exec", "--ttl", "60s", "alpha", "beta", "--", "sh", f.script(k_term_recorder)}, f.env());
  ASSERT_GT(wait_for_pid(f.path("pid")), 0) << holder.err_so_far();
  ASSERT_TRUE(await_listener(f.redis, "beta")) << holder.err_so_far();
  Result r = run({"revoke", "beta", "--grace", "5s"}, f.env(), Seconds(30));
  EXPECT_EQ(r.status, 0) << r.err;
  Result h = holder.wait(Seconds(20));
  EXPECT_EQ(h.status, 74) << h.err;
  EXPECT_TRUE(has(h.err, "beta was revoked by")) << h.err;
  EXPECT_FALSE(has(h.err, "alpha was revoked")) << h.err;
}
