// The lost-lock policy, with a fake lease and short TTLs: what the command
// gets when renewals fail (a signal at the validity's end minus
// --kill-after, SIGKILL --kill-after later), when a renewal finds the lock
// gone (a signal at once), and under --on-lost ignore (nothing). Real
// commands (sleep, sh), no server.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "exec/guard.hpp"
#include "exec/lease.hpp"
#include "exec/renewer.hpp"
#include "exec/supervisor.hpp"
#include "util/signals.hpp"

namespace redlock::exec {
namespace {

using std::chrono::duration_cast;

// A lease whose renewals answer as the test says: the n-th renewal (from 0)
// gets answer(n, cancel).
class FakeLease final : public Lease {
 public:
  using Answer = std::function<RenewResult(int n, const Cancel& cancel)>;
  FakeLease(Millis ttl, Answer answer) : m_ttl(ttl), m_answer(std::move(answer)) {}

  [[nodiscard]] const std::string& name() const override { return m_name; }
  [[nodiscard]] Millis ttl() const override { return m_ttl; }
  [[nodiscard]] RenewResult renew(const Cancel& cancel) override { return m_answer(m_renewals++, cancel); }

  [[nodiscard]] int renewals() const { return m_renewals; }

 private:
  std::string m_name = "job";
  Millis m_ttl;
  Answer m_answer;
  std::atomic<int> m_renewals{0};
};

// Every renewal works: the lock is ours for a whole TTL more.
RenewResult works(Millis ttl) {
  return Extended{Clock::now() + ttl};
}

struct Ran {
  Finished done;
  Millis took{0};  // from the acquire to the end of the command's group
};

// Runs `argv` under `lease` as exec does: taken now, valid for one TTL.
Ran run(const std::vector<std::string>& argv, FakeLease& lease, OnLost on_lost, Millis kill_after) {
  SignalFd signals({SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCHLD});
  const TimePoint acquired = Clock::now();
  GroupGuard guard;
  Renewer renewer(lease, acquired, acquired + lease.ttl());
  Policy policy;
  policy.on_lost = on_lost;
  policy.kill_after = kill_after;
  Ran ran;
  ran.done = supervise(Command{argv, {}}, renewer, policy, signals, guard);
  ran.took = duration_cast<Millis>(Clock::now() - acquired);
  guard.stop();
  return ran;
}

const std::vector<std::string> k_ignores_term = {"sh", "-c", "trap '' TERM; sleep 5"};

TEST(LostLock, RenewalsThatWorkKeepTheCommandRunningPastItsTtl) {
  FakeLease lease(Millis(150), [](int, const Cancel&) { return works(Millis(150)); });
  const Ran ran = run({"sleep", "0.5"}, lease, OnLost::k_term, Millis(50));
  EXPECT_EQ(ran.done.status, 0);
  EXPECT_FALSE(ran.done.lost);
  EXPECT_GE(ran.took, Millis(500));
  EXPECT_GE(lease.renewals(), 3);  // every 50ms, from the first at 50ms
}

TEST(LostLock, WhenRenewalsFailTheCommandGetsSigtermAtTheValidityMinusKillAfter) {
  FakeLease lease(Millis(600), [](int, const Cancel&) { return Failed{"connection refused"}; });
  const Ran ran = run({"sleep", "5"}, lease, OnLost::k_term, Millis(150));
  EXPECT_EQ(ran.done.status, 128 + SIGTERM);  // the supervisor's SIGTERM, not the guard's SIGKILL at 600ms
  EXPECT_TRUE(ran.done.lost);
  EXPECT_GE(ran.took, Millis(450));
  EXPECT_LT(ran.took, Millis(3000));
  EXPECT_GE(lease.renewals(), 2);  // retried quickly after the first failure
}

TEST(LostLock, WhenTheLockIsFoundGoneTheCommandGetsSigtermAtOnce) {
  FakeLease lease(Millis(900), [](int, const Cancel&) { return Gone{"job is no longer held by this token"}; });
  const Ran ran = run({"sleep", "5"}, lease, OnLost::k_term, Millis(150));
  EXPECT_EQ(ran.done.status, 128 + SIGTERM);
  EXPECT_TRUE(ran.done.lost);
  EXPECT_GE(ran.took, Millis(300));  // the first renewal, at a third of the TTL
  EXPECT_LT(ran.took, Millis(750)) << "it waited for the validity's end";
  EXPECT_EQ(lease.renewals(), 1);
}

TEST(LostLock, ACommandThatIgnoresSigtermGetsSigkillAfterKillAfter) {
  FakeLease lease(Millis(900), [](int, const Cancel&) { return Gone{"gone"}; });
  const Ran ran = run(k_ignores_term, lease, OnLost::k_term, Millis(200));
  EXPECT_EQ(ran.done.status, 128 + SIGKILL);
  EXPECT_TRUE(ran.done.lost);
  EXPECT_GE(ran.took, Millis(500));  // the first renewal, then --kill-after
  EXPECT_LT(ran.took, Millis(880)) << "killed by the guard at the validity's end, not by the supervisor";
}

TEST(LostLock, OnLostKillSendsSigkillAtOnce) {
  FakeLease lease(Millis(900), [](int, const Cancel&) { return Gone{"gone"}; });
  const Ran ran = run(k_ignores_term, lease, OnLost::k_kill, Millis(300));
  EXPECT_EQ(ran.done.status, 128 + SIGKILL);
  EXPECT_TRUE(ran.done.lost);
  EXPECT_LT(ran.took, Millis(600)) << "it waited for --kill-after";
}

TEST(LostLock, OnLostIgnoreLetsTheCommandFinishAndStillCountsTheLoss) {
  FakeLease gone(Millis(150), [](int, const Cancel&) { return Gone{"gone"}; });
  const Ran after_gone = run({"sleep", "0.4"}, gone, OnLost::k_ignore, Millis(50));
  EXPECT_EQ(after_gone.done.status, 0);
  EXPECT_TRUE(after_gone.done.lost);
  EXPECT_GE(after_gone.took, Millis(400));

  // Past the validity's end too: under ignore the guard keeps no deadline.
  FakeLease failing(Millis(150), [](int, const Cancel&) { return Failed{"timed out"}; });
  const Ran after_failures = run({"sleep", "0.4"}, failing, OnLost::k_ignore, Millis(50));
  EXPECT_EQ(after_failures.done.status, 0);
  EXPECT_TRUE(after_failures.done.lost);
  EXPECT_GE(after_failures.took, Millis(400));
}

TEST(LostLock, ARenewalThatFailsAndThenWorksIsNoLoss) {
  FakeLease lease(Millis(300), [](int n, const Cancel&) -> RenewResult {
    if (n == 0) {
      return Failed{"connection reset"};
    }
    return works(Millis(300));
  });
  const Ran ran = run({"sleep", "0.5"}, lease, OnLost::k_term, Millis(100));
  EXPECT_EQ(ran.done.status, 0);
  EXPECT_FALSE(ran.done.lost);
  EXPECT_GE(lease.renewals(), 3);
}

// A renewal that never answers (a hung server) holds the renewer's thread,
// never the supervisor: the validity's deadline still comes, and stopping
// the renewer cuts the renewal short.
TEST(LostLock, AHungRenewalDoesNotDelayTheDeadline) {
  FakeLease lease(Millis(600), [](int, const Cancel& cancel) -> RenewResult {
    (void)cancel.sleep_until(Clock::now() + Millis(10'000));
    return Failed{"cancelled"};
  });
  const Ran ran = run({"sleep", "5"}, lease, OnLost::k_term, Millis(150));
  EXPECT_EQ(ran.done.status, 128 + SIGTERM);
  EXPECT_TRUE(ran.done.lost);
  EXPECT_LT(ran.took, Millis(3000));
  EXPECT_EQ(lease.renewals(), 1);
}

TEST(LostLock, ACommandThatEndsBeforeTheFirstRenewalNeverStartsTheRenewer) {
  FakeLease lease(Millis(3000), [](int, const Cancel&) { return works(Millis(3000)); });
  const Ran ran = run({"sh", "-c", "exit 3"}, lease, OnLost::k_term, Millis(100));
  EXPECT_EQ(ran.done.status, 3);
  EXPECT_FALSE(ran.done.lost);
  EXPECT_EQ(lease.renewals(), 0);
}

}  // namespace
}  // namespace redlock::exec
