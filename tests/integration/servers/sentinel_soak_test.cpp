// redis+sentinel:// endpoints: the master's address comes from Sentinel.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <thread>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// A redis-server in sentinel mode watching `master_port` as "mymaster".
class Sentinel {
 public:
  struct Options {
    std::string requirepass{};    // the sentinel's own password
    int down_after_ms = 500;      // how soon a silent master counts as down
    bool wait_for_master = true;  // the constructor waits until it names the master
  };
  explicit Sentinel(int master_port) : Sentinel(master_port, Options{}) {}
  Sentinel(int master_port, Options options) : m_port(free_port()), m_password(options.requirepass) {
    const std::string conf = m_dir.path() + "/sentinel.conf";
    std::ofstream out(conf);
    out << "port " << m_port << "\nbind 127.0.0.1\ndir " << m_dir.path() << "\nsentinel monitor mymaster 127.0.0.1 "
        << master_port << " 1\n"
        << "sentinel down-after-milliseconds mymaster " << options.down_after_ms << "\n"
        << "sentinel failover-timeout mymaster 2000\n";
    if (!m_password.empty()) {
      out << "requirepass " << m_password << "\n";
    }
    out.close();
    m_process = std::make_unique<Child>(std::vector<std::string>{conf, "--sentinel"}, Env{}, redis_sentinel_binary());
    // Ready once it knows the master.
    if (options.wait_for_master) {
      EXPECT_TRUE(
          eventually([&] { return master().find(std::to_string(master_port)) != std::string::npos; }, Seconds(5)));
    }
  }
  [[nodiscard]] int port() const { return m_port; }
  void pause() const { m_process->signal(SIGSTOP); }
  void resume() const { m_process->signal(SIGCONT); }
  // "host port" of the master as the sentinel sees it, "" if unknown.
  [[nodiscard]] std::string master() const {
    Result r = run_cli({"SENTINEL", "get-master-addr-by-name", "mymaster"});
    return r.status == 0 ? r.out : "";
  }
  // Any sentinel command, through redis-cli.
  [[nodiscard]] Result run_cli(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"-h", "127.0.0.1", "-p", std::to_string(m_port)};
    Env env;
    if (!m_password.empty()) {
      env["REDISCLI_AUTH"] = m_password;
    }
    all.insert(all.end(), args.begin(), args.end());
    Child cli(all, env, std::string("redis-cli"));
    return cli.wait(Seconds(5));
  }

 private:
  TempDir m_dir;
  int m_port;
  std::string m_password;
  std::unique_ptr<Child> m_process;
};

// A master with one replica that is in sync, and a sentinel that knows both
// (so that it can fail over at once).
struct Replicated {
  Replicated() : replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}}) {
    EXPECT_TRUE(eventually(
        [&] {
          auto role = replica.cmd({"ROLE"});
          return role.elements.size() > 3 && role.elements[3].str == "connected";
        },
        Seconds(10)));
    sentinel = std::make_unique<Sentinel>(master.port());
    EXPECT_TRUE(eventually(
        [&] {
          return sentinel->run_cli({"SENTINEL", "replicas", "mymaster"}).out.find(std::to_string(replica.port())) !=
                 std::string::npos;
        },
        Seconds(15)));
  }
  // Waits until the sentinel names the replica as the master.
  bool failed_over() const {
    return eventually([&] { return sentinel->master().find(std::to_string(replica.port())) != std::string::npos; },
                      Seconds(20));
  }
  RedisServer master;
  RedisServer replica;
  std::unique_ptr<Sentinel> sentinel;
};

std::string sentinel_url(const Sentinel& s) {
  return "redis+sentinel://127.0.0.1:" + std::to_string(s.port()) + "/mymaster";
}

}  // namespace

TEST(Sentinel, TheLockLandsOnTheMasterTheSentinelNames) {
  RedisServer master;
  Sentinel sentinel(master.port());
  Env env{{"REDLOCK_URL", sentinel_url(sentinel)}};
  Result a = run({"acquire", "viasentinel"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(master.cmd({"HGET", "redlock:{viasentinel}", "token"}).str + "\n", a.out);
  Result st = run({"status", "viasentinel"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
}

TEST(Sentinel, DoctorComparesDownAfterMillisecondsWithTheTtl) {
  RedisServer master;
  Sentinel sentinel(master.port());  // down-after-milliseconds 500
  Env env{{"REDLOCK_URL", sentinel_url(sentinel)}};
  Result quick = run({"doctor"}, env);
  EXPECT_EQ(quick.status, 0) << quick.out << quick.err;
  // The server is named once, on the line above its checks.
  EXPECT_EQ(quick.out.rfind("server " + sentinel_url(sentinel) + "\n", 0), 0u) << quick.out;
  EXPECT_NE(quick.out.find("warn  sentinel      down-after-milliseconds 500ms is shorter than the TTL (30s)"),
            std::string::npos)
      << quick.out;
  Result slow = run({"doctor", "--ttl", "400ms"}, env);
  EXPECT_NE(slow.out.find("ok    sentinel      "), std::string::npos) << slow.out;
}

TEST(Sentinel, AnUnreachableSentinelIsSkipped) {
  RedisServer master;
  Sentinel sentinel(master.port());
  std::string url = "redis+sentinel://127.0.0.1:1,127.0.0.1:" + std::to_string(sentinel.port()) + "/mymaster";
  Result a = run({"acquire", "skip"}, {{"REDLOCK_URL", url}});
  EXPECT_EQ(a.status, 0) << a.err;
}

TEST(Sentinel, AnUnknownMasterIsUnavailable) {
  RedisServer master;
  Sentinel sentinel(master.port());
  std::string url = "redis+sentinel://127.0.0.1:" + std::to_string(sentinel.port()) + "/nosuchmaster";
  Result a = run({"acquire", "x"}, {{"REDLOCK_URL", url}});
  EXPECT_EQ(a.status, 69) << a.err;
  EXPECT_NE(a.err.find("nosuchmaster"), std::string::npos) << a.err;
}

TEST(Sentinel, AfterAFailoverTheNewMasterIsUsed) {
  Replicated set;
  set.master.kill();
  ASSERT_TRUE(set.failed_over()) << "no failover";
  Env env{{"REDLOCK_URL", sentinel_url(*set.sentinel)}};
  Result a = run({"acquire", "after"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(set.replica.cmd({"EXISTS", "redlock:{after}"}).integer, 1);
}

TEST(Sentinel, UrlsAreValidatedBeforeAnyTraffic) {
  for (const char* url :
       {"redis+sentinel://127.0.0.1:26379", "redis+sentinel://127.0.0.1:26379/", "redis+sentinel://,127.0.0.1/m",
        "redis+sentinel://127.0.0.1:0/m", "redis+sentinel://127.0.0.1:26379/m/x"}) {
    Result r = run({"acquire", "x"}, {{"REDLOCK_URL", url}});
    EXPECT_EQ(r.status, 64) << url << ": " << r.err;
  }
}

TEST(Sentinel, AHungSentinelIsSkipped) {
  RedisServer master;
  Sentinel hung(master.port());
  Sentinel healthy(master.port());
  hung.pause();
  const std::string url = "redis+sentinel://127.0.0.1:" + std::to_string(hung.port()) +
                          ",127.0.0.1:" + std::to_string(healthy.port()) + "/mymaster";
  Env env{{"REDLOCK_URL", url}};
  Result a = run({"acquire", "hung"}, env);
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_LT(a.seconds, 5.0) << "the hung sentinel was waited for too long";
  Result st = run({"status", "hung"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  Result r = run({"release", "--token", a.out.substr(0, a.out.find('\n')), "hung"}, env);
  EXPECT_EQ(r.status, 0) << r.err;
  hung.resume();
}

// A sentinel that lost track (here: one configured with the replica as the
// master, as after a failover it missed) names a replica. ROLE says so, and
// the next sentinel is asked, within the same connect.
TEST(Sentinel, AStaleAnswerIsCheckedWithRoleAndTheOtherSentinelsAsked) {
  RedisServer master;
  RedisServer replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
  Sentinel stale(replica.port(), Sentinel::Options{.down_after_ms = 60000});
  Sentinel healthy(master.port());
  const std::string url = "redis+sentinel://127.0.0.1:" + std::to_string(stale.port()) +
                          ",127.0.0.1:" + std::to_string(healthy.port()) + "/mymaster";
  Env env{{"REDLOCK_URL", url}};
  Result a = run({"acquire", "stale"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(master.cmd({"HGET", "redlock:{stale}", "token"}).str + "\n", a.out);
  Result st = run({"status", "stale"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  // Only a stale sentinel: no master to be found, and it says which server is not one.
  Result only = run({"acquire", "alone"}, {{"REDLOCK_URL", sentinel_url(stale)}});
  EXPECT_EQ(only.status, 69) << only.err;
  EXPECT_NE(only.err.find("not a master"), std::string::npos) << only.err;
}

TEST(Sentinel, SentinelsWithAPasswordAreAskedWithIt) {
  RedisServer master;
  Sentinel guarded(master.port(), Sentinel::Options{.requirepass = "s3nt-pw"});
  const std::string url = sentinel_url(guarded);
  // Without it: refused (77), saying how to give it, before anything is taken.
  Result none = run({"acquire", "pw"}, {{"REDLOCK_URL", url}});
  EXPECT_EQ(none.status, 77) << none.err;
  EXPECT_NE(none.err.find("sentinel_password"), std::string::npos) << none.err;
  Result wrong = run({"acquire", "pw"}, {{"REDLOCK_URL", url + "?sentinel_password=wr0ng-pw"}});
  EXPECT_EQ(wrong.status, 77) << wrong.err;
  EXPECT_EQ(wrong.err.find("wr0ng-pw"), std::string::npos) << wrong.err;
  EXPECT_EQ(master.cmd({"EXISTS", "redlock:{pw}"}).integer, 0);
  // In the URL (%-escaped like any URL part), or in the environment.
  Result in_url = run({"acquire", "-v", "pw"}, {{"REDLOCK_URL", url + "?sentinel_password=s3nt%2Dpw"}});
  ASSERT_EQ(in_url.status, 0) << in_url.err;
  EXPECT_EQ(in_url.err.find("s3nt"), std::string::npos) << in_url.err;
  Env env{{"REDLOCK_URL", url}, {"REDLOCK_SENTINEL_PASSWORD", "s3nt-pw"}};
  Result st = run({"status", "--json", "pw"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_EQ((st.out + st.err).find("s3nt"), std::string::npos) << st.out << st.err;
  // exec passes it on for a nested redlock, never inside REDLOCK_URL.
  Result e = run({"exec", "-r", url + "?sentinel_password=s3nt-pw", "pw2", "--", "env"}, {});
  EXPECT_EQ(e.status, 0) << e.err;
  EXPECT_NE(e.out.find("REDLOCK_SENTINEL_PASSWORD=s3nt-pw\n"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("REDLOCK_URL=" + url + "\n"), std::string::npos) << e.out;
}

// Sentinel replaces the master while exec holds a lock there. The lock's
// key may reach the new master by replication, but nothing says it is ours
// alone: another client may already hold it there (the old master still
// took our renewals until it was demoted). exec counts it lost at the next
// renewal: the command is stopped and exec exits 74.
TEST(Sentinel, ExecLosesItsLockWhenTheMasterIsFailedOver) {
  Replicated set;
  Env env{{"REDLOCK_URL", sentinel_url(*set.sentinel)}};
  Child holder({"exec", "--ttl", "3s", "failover", "--", "sleep", "30"}, env);
  ASSERT_TRUE(eventually([&] { return set.master.cmd({"EXISTS", "redlock:{failover}"}).integer == 1; }));
  // A loaded machine can make Sentinel give up on a failover it started:
  // ask again (INPROG while one is under way) until the replica is master.
  const auto promoted = [&] {
    return set.sentinel->master().find(std::to_string(set.replica.port())) != std::string::npos;
  };
  ASSERT_TRUE(eventually(
      [&] {
        (void)set.sentinel->run_cli({"SENTINEL", "FAILOVER", "mymaster"});
        return eventually(promoted, Seconds(5));
      },
      Seconds(40)))
      << "no failover";
  const double failed_over_at = now_seconds();
  Result r = holder.wait(Seconds(20));
  EXPECT_EQ(r.status, 74) << r.err;
  EXPECT_LT(now_seconds() - failed_over_at, 8.0) << "lost only after " << r.seconds << "s";
  EXPECT_NE(r.err.find("failed over"), std::string::npos) << r.err;
}

// A waiter whose master dies waits out the failover within its --wait and
// takes the lock on the new master once the holder's TTL has run out there.
TEST(Sentinel, AWaiterWaitsOutAFailover) {
  Replicated set;
  Env env{{"REDLOCK_URL", sentinel_url(*set.sentinel)}};
  // WAIT gets half of --timeout: the default (500 ms) is not always enough
  // for the replica of a loaded machine to answer.
  Result held = run({"acquire", "--ttl", "4s", "--min-replicas", "1", "--redis-timeout", "5s", "wait-failover"}, env);
  ASSERT_EQ(held.status, 0) << held.err;
  Child waiter({"acquire", "--wait", "30s", "wait-failover"}, env);
  ASSERT_TRUE(eventually([&] {
    return set.master.cmd({"PUBSUB", "NUMSUB", "redlock:{wait-failover}:released"}).elements.at(1).integer == 1;
  }));
  set.master.kill();
  Result w = waiter.wait(Seconds(40));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_EQ(set.replica.cmd({"HGET", "redlock:{wait-failover}", "token"}).str + "\n", w.out);
}

TEST(Sentinel, AWaitersTryLeftInAStoppedMastersBufferIsReleasedBehindIt) {
  // A try sent while the master was stopped timed out; its release went to
  // a new connection, which through Sentinel waits for ROLE and so never
  // sent it. The master, resumed, granted the stale try and nobody gave it
  // back: the waiter then waited on its own lock until --wait ran out.
  RedisServer master;
  Sentinel sentinel(master.port(), Sentinel::Options{.down_after_ms = 60'000});
  TempDir dir;
  Env env{{"REDLOCK_URL", sentinel_url(sentinel)}};
  Result held = run({"acquire", "--ttl", "2s", "stale"}, env);
  ASSERT_EQ(held.status, 0) << held.err;
  const std::string ran = dir.path() + "/ran";
  Child waiter({"exec", "--wait", "25s", "--redis-timeout", "300ms", "stale", "--", "touch", ran}, env);
  ASSERT_TRUE(eventually([&] {
    return master.cmd({"PUBSUB", "NUMSUB", "redlock:{stale}:released"}).elements.at(1).integer == 1;
  }));
  master.pause();
  sleep_for(3.0);  // past the holder's TTL, and several of the waiter's tries
  master.resume();
  const double resumed_at = now_seconds();
  Result w = waiter.wait(Seconds(30));
  EXPECT_EQ(w.status, 0) << w.err;
  EXPECT_LT(now_seconds() - resumed_at, 8.0) << w.err;
  EXPECT_TRUE(eventually([&] { return ::access(ran.c_str(), F_OK) == 0; }, Seconds(1)));
  EXPECT_EQ(master.cmd({"EXISTS", "redlock:{stale}"}).integer, 0);
}
