// Faults of the holder's own processes: redlock exec (alone, or with CMD
// and its guard, as when a whole machine is frozen) stopped past its TTL, and redlock
// SIGKILLed while CMD runs.

#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "exec_support.hpp"
#include "harness.hpp"

using namespace redlock::test;
using json = nlohmann::json;

namespace {

// CMD: records its fence and SIGTERM, and otherwise runs until told.
const std::string k_holder = k_term_trap +
                             "echo \"$REDLOCK_FENCE\" > \"$D/fence\"\n"
                             "sleep 60 & echo $! > \"$D/grandchild\"\n"
                             "echo $$ > \"$D/pid\"\n"
                             "wait\n";

// Stops redlock (and, when `whole_holder`, CMD's group and redlock's guard
// too, as when a whole machine is frozen) until its 2 s lock has expired,
// lets another client take the lock, resumes, and checks that the old
// holder gives up at once without touching the new one.
void pause_holder_past_its_ttl(bool whole_holder) {
  ExecFixture f;
  Child exec({"exec", "--ttl", "2s", "job", "--", "sh", f.script(k_holder)}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  f.reaper.group(pid);
  f.reaper.pid(wait_for_pid(f.path("grandchild")));
  const long long old_fence = std::stoll(read_file(f.path("fence")));
  std::vector<pid_t> guards;
  for (pid_t child : live_children(exec.pid())) {
    if (child != pid) {
      guards.push_back(child);
    }
  }
  ASSERT_EQ(guards.size(), 1U) << "redlock's children besides CMD: its guard";

  exec.signal(SIGSTOP);
  if (whole_holder) {
    ::kill(guards[0], SIGSTOP);
    ::kill(-pid, SIGSTOP);
  }
  ASSERT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4)))
      << "the stopped holder's lock should expire by its TTL";
  if (!whole_holder) {
    // The guard kept the lock's deadline: CMD's group was killed before the
    // key expired, though redlock could do nothing.
    EXPECT_TRUE(group_members(pid).empty()) << "CMD ran on past its lock while redlock was stopped";
  }
  Result other = run({"acquire", "--ttl", "30s", "--json", "job"}, f.env());
  ASSERT_EQ(other.status, 0) << other.err;
  json taken = json::parse(other.out);
  EXPECT_GT(taken["fence"].get<long long>(), old_fence) << "the next holder's fence tells the old one apart";

  exec.signal(SIGCONT);
  const double resumed_at = now_seconds();
  if (whole_holder) {
    ::kill(guards[0], SIGCONT);
    ::kill(-pid, SIGCONT);
  }
  EXPECT_TRUE(eventually([&] { return group_members(pid).empty(); }, Seconds(5)))
      << "CMD was not ended: " << exec.err_so_far();
  EXPECT_LT(now_seconds() - resumed_at, 1.0) << "the old holder must give up as soon as it runs again";
  Result r = exec.wait(Seconds(10));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("lost the lock"), std::string::npos) << r.err;
  EXPECT_FALSE(process_alive(pid));
  // The new holder's lock is exactly as it took it.
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "token"}).str, taken["token"].get<std::string>());
  EXPECT_EQ(f.redis.cmd({"HGET", lock_key("job"), "count"}).str, "1");
  EXPECT_GT(f.redis.cmd({"PTTL", lock_key("job")}).integer, 25000);
}

}  // namespace

TEST(ProcessFaults, HolderFrozenWithItsCommandPastTheTtlGivesUpAtOnceOnResume) {
  pause_holder_past_its_ttl(true);
}

// Only redlock is stopped: its guard, which keeps the lock's deadline,
// kills CMD's group when the validity ends; once redlock runs again it
// exits 74.
TEST(ProcessFaults, RedlockStoppedPastTheTtlHasItsCommandKilledByTheGuardInTime) {
  pause_holder_past_its_ttl(false);
}

TEST(ProcessFaults, SigkilledRedlockTakesCommandsGroupWithItAndTheLockExpires) {
  ExecFixture f;
  Child exec({"exec", "--ttl", "2s", "job", "--", "sh", f.script(k_holder)}, f.env());
  pid_t pid = wait_for_pid(f.path("pid"));
  ASSERT_GT(pid, 0) << exec.err_so_far();
  f.reaper.group(pid);
  pid_t grandchild = wait_for_pid(f.path("grandchild"));
  f.reaper.pid(grandchild);
  const long long old_fence = std::stoll(read_file(f.path("fence")));

  const double killed_at = now_seconds();
  exec.signal(SIGKILL);
  EXPECT_EQ(exec.wait(Seconds(5)).status, 128 + SIGKILL);
  EXPECT_TRUE(eventually([&] { return group_members(pid).empty(); }, Seconds(1)))
      << group_members(pid).size() << " processes of CMD's group outlived redlock";
  EXPECT_FALSE(process_alive(grandchild));
  EXPECT_FALSE(file_exists(f.path("term"))) << "SIGKILL, not a polite SIGTERM";
  // Nobody released it: it frees by its TTL, and the next holder's fence is larger.
  EXPECT_TRUE(eventually([&] { return !key_exists(f.redis, lock_key("job")); }, Seconds(4)));
  EXPECT_LT(now_seconds() - killed_at, 2.6);
  Result next = run({"acquire", "--json", "job"}, f.env());
  ASSERT_EQ(next.status, 0) << next.err;
  EXPECT_GT(json::parse(next.out)["fence"].get<long long>(), old_fence);
}
