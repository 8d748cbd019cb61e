// doctor's judgement (doctor/checks.hpp), table-driven: what servers said in,
// the level of each check out. No server.

#include "doctor/checks.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace redlock::doctor {
namespace {

// A healthy master: Redis 7, every right, noeviction, appendfsync always,
// no replicas, the clock in step, a fast round trip.
ServerFacts healthy(const std::string& name = "redis://a:6379", const std::string& run_id = "r1") {
  ServerFacts s;
  s.server = name;
  s.rtt = std::chrono::microseconds(300);
  s.clock_offset = Millis(3);
  s.info = {{"redis_version", "7.0.15"},
            {"run_id", run_id},
            {"role", "master"},
            {"connected_slaves", "0"},
            {"master_replid", run_id + "-repl"},
            {"cluster_enabled", "0"},
            {"connected_clients", "12"}};
  s.config = {{"maxmemory", "0"}, {"maxmemory-policy", "noeviction"}, {"appendonly", "yes"},  {"appendfsync", "always"},
              {"save", ""},       {"min-replicas-to-write", "0"},     {"maxclients", "10000"}};
  s.refused = std::vector<Refusal>{};
  return s;
}

// The level of `check` about `server` ("" for the set), or nullopt when
// there is no such finding.
std::optional<Level> level_of(const std::vector<Finding>& findings, const std::string& check,
                              const std::string& server = "redis://a:6379") {
  std::optional<Level> level;
  for (const auto& f : findings) {
    if (f.check == check && f.server == server) {
      level = std::max(level.value_or(Level::k_ok), f.level);
    }
  }
  return level;
}

TEST(Checks, AHealthyServerPassesEveryCheck) {
  const auto findings = diagnose({healthy()}, {});
  EXPECT_EQ(worst(findings), Level::k_ok);
  for (const char* check :
       {"reach", "auth", "version", "acl", "eviction", "persistence", "clients", "replicas", "clock", "rtt"}) {
    EXPECT_EQ(level_of(findings, check), Level::k_ok) << check;
  }
  EXPECT_EQ(level_of(findings, "cluster"), std::nullopt) << "not a Cluster node";
  EXPECT_EQ(level_of(findings, "sentinel"), std::nullopt);
  EXPECT_EQ(level_of(findings, "independence", ""), std::nullopt) << "one server";
}

TEST(Checks, EachFindingGetsItsLevel) {
  struct Row {
    const char* what;
    std::function<void(ServerFacts&)> change;
    Expectations e;
    const char* check;
    Level level;
  };
  const std::vector<Row> rows = {
      {"unreachable",
       [](ServerFacts& s) {
         s.failure = redis::Failure{ExitStatus::k_unavailable, "refused"};
       },
       {},
       "reach",
       Level::k_fail},
      {"wrong password",
       [](ServerFacts& s) {
         s.failure = redis::Failure{ExitStatus::k_refused, "WRONGPASS"};
       },
       {},
       "auth",
       Level::k_fail},
      {"evicting policy with a limit",
       [](ServerFacts& s) {
         s.config["maxmemory"] = "104857600";
         s.config["maxmemory-policy"] = "allkeys-lru";
       },
       {},
       "eviction",
       Level::k_fail},
      {"volatile policy with a limit",
       [](ServerFacts& s) {
         s.config["maxmemory"] = "1";
         s.config["maxmemory-policy"] = "volatile-ttl";
       },
       {},
       "eviction",
       Level::k_fail},
      {"evicting policy without a limit",
       [](ServerFacts& s) { s.config["maxmemory-policy"] = "allkeys-lru"; },
       {},
       "eviction",
       Level::k_ok},
      {"CONFIG refused",
       [](ServerFacts& s) {
         s.config.clear();
         s.config_error = "NOPERM";
       },
       {},
       "eviction",
       Level::k_warn},
      {"CONFIG refused, persistence",
       [](ServerFacts& s) {
         s.config.clear();
         s.config_error = "unknown command";
       },
       {},
       "persistence",
       Level::k_warn},
      {"appendfsync everysec",
       [](ServerFacts& s) { s.config["appendfsync"] = "everysec"; },
       {},
       "persistence",
       Level::k_warn},
      {"no persistence", [](ServerFacts& s) { s.config["appendonly"] = "no"; }, {}, "persistence", Level::k_warn},
      {"three quarters of the client slots taken",
       [](ServerFacts& s) { s.info["connected_clients"] = "7500"; },
       {},
       "clients",
       Level::k_warn},
      {"nine tenths of the client slots taken",
       [](ServerFacts& s) { s.info["connected_clients"] = "9000"; },
       {},
       "clients",
       Level::k_fail},
      {"a small maxclients nearly full",
       [](ServerFacts& s) {
         s.info["connected_clients"] = "95";
         s.config["maxclients"] = "100";
       },
       {},
       "clients",
       Level::k_fail},
      {"just under three quarters",
       [](ServerFacts& s) { s.info["connected_clients"] = "7499"; },
       {},
       "clients",
       Level::k_ok},
      {"maxclients refused",
       [](ServerFacts& s) {
         s.config.erase("maxclients");
         s.config_error = "NOPERM";
       },
       {},
       "clients",
       Level::k_warn},
      {"INFO without clients", [](ServerFacts& s) { s.info.erase("connected_clients"); }, {}, "clients", Level::k_warn},
      {"a replica",
       [](ServerFacts& s) {
         s.info["role"] = "slave";
         s.info["master_host"] = "b";
       },
       {},
       "replicas",
       Level::k_fail},
      {"--min-replicas above the replicas", [](ServerFacts&) {}, {.min_replicas = 1}, "replicas", Level::k_fail},
      {"min-replicas-to-write above the replicas",
       [](ServerFacts& s) { s.config["min-replicas-to-write"] = "2"; },
       {},
       "replicas",
       Level::k_fail},
      {"replicas behind Sentinel without --min-replicas",
       [](ServerFacts& s) {
         s.sentinel = true;
         s.down_after = Millis(60'000);
         s.info["connected_slaves"] = "1";
       },
       {},
       "replicas",
       Level::k_warn},
      {"Sentinel quicker than the TTL",
       [](ServerFacts& s) {
         s.sentinel = true;
         s.down_after = Millis(5000);
       },
       {},
       "sentinel",
       Level::k_warn},
      {"Sentinel slower than the TTL",
       [](ServerFacts& s) {
         s.sentinel = true;
         s.down_after = Millis(30'000);
       },
       {},
       "sentinel",
       Level::k_ok},
      {"Sentinel not asked", [](ServerFacts& s) { s.sentinel = true; }, {}, "sentinel", Level::k_warn},
      {"slots missing",
       [](ServerFacts& s) {
         s.info["cluster_enabled"] = "1";
         s.cluster = {{"cluster_state", "fail"}, {"cluster_slots_assigned", "10923"}};
       },
       {},
       "cluster",
       Level::k_fail},
      {"every slot",
       [](ServerFacts& s) {
         s.info["cluster_enabled"] = "1";
         s.cluster = {{"cluster_state", "ok"}, {"cluster_slots_assigned", "16384"}};
       },
       {},
       "cluster",
       Level::k_ok},
      {"clock ahead", [](ServerFacts& s) { s.clock_offset = Millis(5000); }, {}, "clock", Level::k_warn},
      {"clock behind", [](ServerFacts& s) { s.clock_offset = Millis(-2500); }, {}, "clock", Level::k_warn},
      {"slow round trip", [](ServerFacts& s) { s.rtt = std::chrono::milliseconds(600); }, {}, "rtt", Level::k_warn},
      {"round trip of a third of the TTL",
       [](ServerFacts& s) { s.rtt = std::chrono::milliseconds(400); },
       {.ttl = Millis(1200)},
       "rtt",
       Level::k_fail},
      {"Redis 6.2", [](ServerFacts& s) { s.info["redis_version"] = "6.2.14"; }, {}, "version", Level::k_warn},
      {"Redis 4", [](ServerFacts& s) { s.info["redis_version"] = "4.0.9"; }, {}, "version", Level::k_fail},
      {"INFO refused", [](ServerFacts& s) { s.info.clear(); }, {}, "version", Level::k_warn},
      {"rights not checkable",
       [](ServerFacts& s) {
         s.refused.reset();
         s.rights_error = "before Redis 7.0";
       },
       {},
       "acl",
       Level::k_warn},
      {"a lock right refused",
       [](ServerFacts& s) {
         s.refused = std::vector<Refusal>{{"lock", "HSET x"}};
       },
       {},
       "acl",
       Level::k_fail},
      {"a ledger right refused",
       [](ServerFacts& s) {
         s.refused = std::vector<Refusal>{{"ledger", "XADD x"}};
       },
       {},
       "acl",
       Level::k_fail},
      {"only the index refused",
       [](ServerFacts& s) {
         s.refused = std::vector<Refusal>{{"index", "ZADD i"}};
       },
       {},
       "acl",
       Level::k_warn},
  };
  for (const auto& row : rows) {
    ServerFacts s = healthy();
    row.change(s);
    const auto findings = diagnose({s}, row.e);
    EXPECT_EQ(level_of(findings, row.check), row.level) << row.what;
    for (const auto& f : findings) {
      EXPECT_EQ(f.level != Level::k_ok, !f.advice.empty()) << row.what << ": " << f.check << ": " << f.detail;
    }
  }
}

// A managed Redis refuses CONFIG: what INFO carries is read from there, the
// rest is unknown and says where to look.
TEST(Checks, WhereConfigIsRefusedInfoIsReadAndTheRestIsUnknown) {
  const auto refused = [](ServerFacts s) {
    s.config.clear();
    s.config_error = "ERR unknown command 'CONFIG'";
    return s;
  };
  const auto detail = [](const std::vector<Finding>& findings, const std::string& check) {
    for (const auto& f : findings) {
      if (f.check == check) {
        return f.detail + " / " + f.advice;
      }
    }
    return std::string();
  };
  ServerFacts evicting = refused(healthy());
  evicting.info["maxmemory"] = "104857600";
  evicting.info["maxmemory_policy"] = "allkeys-lru";
  evicting.info["aof_enabled"] = "1";
  evicting.info["maxclients"] = "100";
  evicting.info["connected_clients"] = "95";
  auto findings = diagnose({evicting}, {});
  EXPECT_EQ(level_of(findings, "eviction"), Level::k_fail) << detail(findings, "eviction");
  EXPECT_NE(detail(findings, "eviction").find("allkeys-lru"), std::string::npos);
  EXPECT_EQ(level_of(findings, "persistence"), Level::k_warn);
  EXPECT_NE(detail(findings, "persistence").find("appendfsync unknown (refused: ERR unknown command"),
            std::string::npos)
      << detail(findings, "persistence");
  EXPECT_NE(detail(findings, "persistence").find("console"), std::string::npos);
  EXPECT_EQ(level_of(findings, "clients"), Level::k_fail) << "maxclients from INFO clients";

  ServerFacts keeping = refused(healthy());
  keeping.info["maxmemory"] = "0";
  keeping.info["maxmemory_policy"] = "noeviction";
  keeping.info["aof_enabled"] = "0";
  findings = diagnose({keeping}, {});
  EXPECT_EQ(level_of(findings, "eviction"), Level::k_ok);
  EXPECT_NE(detail(findings, "persistence").find("appendonly no (INFO)"), std::string::npos);
  EXPECT_NE(detail(findings, "clients").find("maxclients: unknown (refused"), std::string::npos)
      << detail(findings, "clients");

  // Neither CONFIG nor INFO: every one unknown, with the console to check.
  ServerFacts blind = refused(healthy());
  blind.info.erase("maxmemory");
  findings = diagnose({blind}, {});
  EXPECT_NE(detail(findings, "eviction").find("maxmemory-policy: unknown (refused"), std::string::npos)
      << detail(findings, "eviction");
  EXPECT_NE(detail(findings, "eviction").find("in its console"), std::string::npos);
}

// A managed Redis refuses INFO: what only INFO says (the version, the
// role, the clients connected) is unknown because INFO was refused, with what
// to check in the console; CONFIG still says the rest. With CONFIG refused as
// well, persistence names both refusals.
TEST(Checks, WhereInfoIsRefusedItsFactsAreUnknownAndSaySo) {
  const auto detail = [](const std::vector<Finding>& findings, const std::string& check) {
    for (const auto& f : findings) {
      if (f.check == check) {
        return f.detail + " / " + f.advice;
      }
    }
    return std::string();
  };
  ServerFacts s = healthy();
  s.info.clear();
  s.info_error = "INFO answered: ERR unknown command 'INFO'";
  auto findings = diagnose({s}, {});
  EXPECT_EQ(worst(findings), Level::k_warn);
  for (const char* check : {"version", "replicas", "clients"}) {
    EXPECT_EQ(level_of(findings, check), Level::k_warn) << check;
    EXPECT_NE(detail(findings, check).find("unknown (refused: INFO answered: ERR unknown command 'INFO')"),
              std::string::npos)
        << detail(findings, check);
    EXPECT_NE(detail(findings, check).find("in its console"), std::string::npos) << detail(findings, check);
  }
  EXPECT_NE(detail(findings, "version").find("could not read the Redis version"), std::string::npos);
  EXPECT_EQ(level_of(findings, "persistence"), Level::k_ok) << "CONFIG says it";
  EXPECT_EQ(level_of(findings, "eviction"), Level::k_ok);

  s.config.clear();
  s.config_error = "CONFIG GET answered: ERR unknown command 'CONFIG'";
  findings = diagnose({s}, {});
  EXPECT_EQ(level_of(findings, "persistence"), Level::k_warn);
  EXPECT_NE(detail(findings, "persistence")
                .find("appendonly and appendfsync: unknown (refused: CONFIG GET answered: "
                      "ERR unknown command 'CONFIG'; INFO answered: ERR unknown command"),
            std::string::npos)
      << detail(findings, "persistence");
  EXPECT_NE(detail(findings, "persistence").find("CONFIG and INFO may be renamed"), std::string::npos);
}

TEST(Checks, AServerThatCannotBeReachedGetsNoOtherCheck) {
  ServerFacts s = healthy();
  s.failure = redis::Failure{ExitStatus::k_unavailable, "Connection refused"};
  const auto findings = diagnose({s}, {});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, "reach");
  EXPECT_EQ(worst(findings), Level::k_fail);
}

TEST(Checks, SeveralServersMustBeIndependentMasters) {
  const auto a = healthy("redis://a:6379", "r1");
  auto b = healthy("redis://b:6379", "r2");
  auto c = healthy("redis://c:6379", "r3");
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_ok);
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "quorum", ""), Level::k_ok);

  auto twice = healthy("redis://a:6379/1", "r1");  // one server under two names
  EXPECT_EQ(level_of(diagnose({a, twice, c}, {}), "independence", ""), Level::k_fail);

  b.info["master_replid"] = a.info.at("master_replid");  // a replica of a
  b.info["role"] = "slave";
  const auto replica = diagnose({a, b, c}, {});
  EXPECT_EQ(level_of(replica, "independence", ""), Level::k_fail);
  EXPECT_EQ(level_of(replica, "replicas", "redis://b:6379"), Level::k_fail);

  EXPECT_EQ(level_of(diagnose({a, c}, {}), "quorum", ""), Level::k_warn) << "two servers tolerate no failure";
  c.failure = redis::Failure{ExitStatus::k_unavailable, "down"};
  auto d = healthy("redis://d:6379", "r4");
  d.failure = c.failure;
  EXPECT_EQ(level_of(diagnose({a, c, d}, {}), "quorum", ""), Level::k_fail) << "no majority";
}

// A replica takes its master's master_replid only once in step: one that
// is still syncing, or whose link is down, is found by the address it names
// or by its master's list of replicas.
TEST(Checks, AReplicaNotInStepWithItsMasterIsStillNotIndependent) {
  auto at = [](const std::string& host, int port, const std::string& run_id) {
    auto s = healthy(fmt::format("redis://{}:{}", host, port), run_id);
    s.host = host;
    s.port = port;
    s.info["tcp_port"] = std::to_string(port);
    return s;
  };
  auto a = at("127.0.0.1", 30001, "r1");
  auto b = at("127.0.0.1", 30002, "r2");
  const auto c = at("10.0.0.3", 6379, "r3");
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_ok);

  b.info["role"] = "slave";
  b.info["master_host"] = "localhost";  // the loopback, in other words than the URL's
  b.info["master_port"] = "30001";
  b.info["master_link_status"] = "down";
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_fail);
  EXPECT_EQ(level_of(diagnose({b, a, c}, {}), "independence", ""), Level::k_fail);

  b.info["master_host"] = "10.0.0.9";  // a replica of a server not in the set: the same port, another host
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_ok);
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "replicas", "redis://127.0.0.1:30002"), Level::k_fail);

  // The master's list names it (reached through a forwarded port: the URL
  // says 30002, the replica listens on 7002).
  b.info["role"] = "master";
  b.info["tcp_port"] = "7002";
  a.info["connected_slaves"] = "1";
  a.info["slave0"] = "ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0";
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_fail);
  a.info["slave0"] = "ip=127.0.0.1,port=7003,state=online,offset=0,lag=0";
  EXPECT_EQ(level_of(diagnose({a, b, c}, {}), "independence", ""), Level::k_ok);

  // 127.0.0.1 as another machine says it is that machine, not this one.
  auto d = at("10.0.0.4", 6380, "r4");
  d.info["role"] = "slave";
  d.info["master_host"] = "127.0.0.1";
  d.info["master_port"] = "30001";
  EXPECT_EQ(level_of(diagnose({a, c, d}, {}), "independence", ""), Level::k_ok);
  d.info["master_host"] = "10.0.0.3";
  d.info["master_port"] = "6379";
  EXPECT_EQ(level_of(diagnose({a, c, d}, {}), "independence", ""), Level::k_fail);
}

TEST(Checks, TheQuorumLineCountsTheServersAlreadyDown) {
  const auto a = healthy("redis://a:6379", "r1");
  const auto b = healthy("redis://b:6379", "r2");
  auto c = healthy("redis://c:6379", "r3");
  const auto detail = [](const std::vector<Finding>& findings) {
    for (const auto& f : findings) {
      if (f.check == "quorum") {
        return f.detail;
      }
    }
    return std::string();
  };
  EXPECT_EQ(detail(diagnose({a, b, c}, {})), "3 of 3 servers answered; a majority is 2, so 1 may fail");
  c.failure = redis::Failure{ExitStatus::k_unavailable, "down"};
  // One is down already: "so 1 may fail" would promise a second.
  EXPECT_EQ(detail(diagnose({a, b, c}, {})),
            "2 of 3 servers answered; a majority is 2, so 1 may fail: no other may now");
  // An alias of a (another URL, the same run_id) is a, not a third server.
  const auto alias = healthy("redis://a-alias:6379", "r1");
  const auto aliased = diagnose({a, b, alias}, {});
  EXPECT_EQ(detail(aliased),
            "2 servers (the 3 URLs name 2 distinct servers): a majority is 2, so 0 may fail, as with 1 server");
  EXPECT_EQ(level_of(aliased, "quorum", ""), Level::k_warn);
}

TEST(Checks, StorageRisksReadAsGauges) {
  ServerFacts s = healthy();
  EXPECT_EQ(evicts_locks(s), false);
  EXPECT_EQ(restart_forgets_locks(s), false);
  s.config["maxmemory"] = "100";
  s.config["maxmemory-policy"] = "allkeys-random";
  s.config["appendfsync"] = "everysec";
  EXPECT_EQ(evicts_locks(s), true);
  EXPECT_EQ(restart_forgets_locks(s), true);
  s.config.clear();
  EXPECT_EQ(evicts_locks(s), std::nullopt);
  EXPECT_EQ(restart_forgets_locks(s), std::nullopt);
}

TEST(Checks, InfoIsReadLineByLine) {
  const auto info =
      parse_info("# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Replication\r\nrole:master\r\n");
  EXPECT_EQ(info.at("redis_version"), "7.0.15");
  EXPECT_EQ(info.at("run_id"), "abc");
  EXPECT_EQ(info.at("role"), "master");
  EXPECT_EQ(info.size(), 3u);
}

}  // namespace
}  // namespace redlock::doctor
