// redis+sentinel:// endpoints: the master's address comes from Sentinel.

#include <gtest/gtest.h>
#include <netinet/in.h>
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
  explicit Sentinel(int master_port) : m_port(free_port()) {
    const std::string conf = m_dir.path() + "/sentinel.conf";
    std::ofstream(conf) << "port " << m_port << "\nbind 127.0.0.1\ndir " << m_dir.path()
                        << "\nsentinel monitor mymaster 127.0.0.1 " << master_port << " 1\n"
                        << "sentinel down-after-milliseconds mymaster 500\n"
                        << "sentinel failover-timeout mymaster 2000\n";
    m_process =
        std::make_unique<Child>(std::vector<std::string>{conf, "--sentinel"}, Env{}, std::string("redis-server"));
    // Ready once it knows the master.
    EXPECT_TRUE(
        eventually([&] { return master().find(std::to_string(master_port)) != std::string::npos; }, Seconds(5)));
  }
  [[nodiscard]] int port() const { return m_port; }
  // "host port" of the master as the sentinel sees it, "" if unknown.
  [[nodiscard]] std::string master() const {
    Result r = run_cli({"SENTINEL", "get-master-addr-by-name", "mymaster"});
    return r.status == 0 ? r.out : "";
  }

 private:
  [[nodiscard]] Result run_cli(const std::vector<std::string>& args) const {
    std::vector<std::string> all = {"-h", "127.0.0.1", "-p", std::to_string(m_port)};
    all.insert(all.end(), args.begin(), args.end());
    Child cli(all, Env{}, std::string("redis-cli"));
    return cli.wait(Seconds(5));
  }
  TempDir m_dir;
  int m_port;
  std::unique_ptr<Child> m_process;
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
  RedisServer master;
  RedisServer replica(RedisServer::Options{.extra = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
  ASSERT_TRUE(eventually(
      [&] { return replica.cmd({"ROLE"}).elements.size() > 3 && replica.cmd({"ROLE"}).elements[3].str == "connected"; },
      Seconds(10)));
  Sentinel sentinel(master.port());
  // The sentinel must have discovered the replica before it can promote it.
  ASSERT_TRUE(eventually(
      [&] {
        Child cli({"-h", "127.0.0.1", "-p", std::to_string(sentinel.port()), "SENTINEL", "replicas", "mymaster"}, Env{},
                  std::string("redis-cli"));
        return cli.wait(Seconds(5)).out.find(std::to_string(replica.port())) != std::string::npos;
      },
      Seconds(15)));
  master.kill();
  ASSERT_TRUE(eventually([&] { return sentinel.master().find(std::to_string(replica.port())) != std::string::npos; },
                         Seconds(20)))
      << "no failover";
  Env env{{"REDLOCK_URL", sentinel_url(sentinel)}};
  Result a = run({"acquire", "after"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(replica.cmd({"EXISTS", "redlock:{after}"}).integer, 1);
}

TEST(Sentinel, UrlsAreValidatedBeforeAnyTraffic) {
  for (const char* url :
       {"redis+sentinel://127.0.0.1:26379", "redis+sentinel://127.0.0.1:26379/", "redis+sentinel://,127.0.0.1/m",
        "redis+sentinel://127.0.0.1:0/m", "redis+sentinel://127.0.0.1:26379/m/x"}) {
    Result r = run({"acquire", "x"}, {{"REDLOCK_URL", url}});
    EXPECT_EQ(r.status, 64) << url << ": " << r.err;
  }
}
