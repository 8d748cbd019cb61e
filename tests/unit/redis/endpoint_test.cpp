// Redis URLs: every form the man page names (redlock(1), "Redis URLs"), every
// malformed one rejected as a usage error (64) before any connection, and no
// password in any output.

#include "redis/endpoint.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "util/exit_status.hpp"

using redlock::ExitStatus;
using redlock::UsageError;
using redlock::redis::Endpoint;
using redlock::redis::parse_endpoint;
using redlock::redis::parse_endpoint_list;

namespace {

// The message of the UsageError that `url` gets, or a test failure.
std::string rejection(const std::string& url) {
  try {
    Endpoint ep = parse_endpoint(url);
    ADD_FAILURE() << "'" << url << "' was accepted as " << ep.display();
  } catch (const UsageError& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_usage);
    return e.what();
  }
  return {};
}

}  // namespace

TEST(ParseEndpoint, ReadsAPlainHostWithTheDefaultPortAndDatabase) {
  Endpoint ep = parse_endpoint("redis://127.0.0.1");
  EXPECT_EQ(ep.kind, Endpoint::Kind::k_tcp);
  EXPECT_FALSE(ep.tls);
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 0);
  EXPECT_EQ(ep.user, "");
  EXPECT_FALSE(ep.password.has_value());
}

TEST(ParseEndpoint, ReadsHostPortAndDatabase) {
  Endpoint ep = parse_endpoint("redis://cache.example.com:6380/3");
  EXPECT_EQ(ep.host, "cache.example.com");
  EXPECT_EQ(ep.port, 6380);
  EXPECT_EQ(ep.db, 3);
}

TEST(ParseEndpoint, ReadsADatabaseWithoutAPort) {
  Endpoint ep = parse_endpoint("redis://localhost/15");
  EXPECT_EQ(ep.port, 6379);
  EXPECT_EQ(ep.db, 15);
}

TEST(ParseEndpoint, TakesAnEmptyPathAsDatabaseZero) {
  EXPECT_EQ(parse_endpoint("redis://localhost/").db, 0);
}

TEST(ParseEndpoint, AcceptsTheLowestAndHighestPorts) {
  EXPECT_EQ(parse_endpoint("redis://h:1").port, 1);
  EXPECT_EQ(parse_endpoint("redis://h:65535").port, 65535);
}

TEST(ParseEndpoint, ReadsRedissAsTls) {
  Endpoint ep = parse_endpoint("rediss://secure.example.com:6390");
  EXPECT_TRUE(ep.tls);
  EXPECT_EQ(ep.host, "secure.example.com");
  EXPECT_EQ(ep.port, 6390);
}

TEST(ParseEndpoint, ReadsUserAndPassword) {
  Endpoint ep = parse_endpoint("redis://alice:s3cret@h:7000/2");
  EXPECT_EQ(ep.user, "alice");
  ASSERT_TRUE(ep.password.has_value());
  EXPECT_EQ(*ep.password, "s3cret");
  EXPECT_EQ(ep.host, "h");
  EXPECT_EQ(ep.port, 7000);
  EXPECT_EQ(ep.db, 2);
}

TEST(ParseEndpoint, ReadsAPasswordWithoutAUser) {
  Endpoint ep = parse_endpoint("redis://:s3cret@h");
  EXPECT_EQ(ep.user, "");
  ASSERT_TRUE(ep.password.has_value());
  EXPECT_EQ(*ep.password, "s3cret");
}

TEST(ParseEndpoint, ReadsTheOldSinglePartUserinfoAsAPassword) {
  Endpoint ep = parse_endpoint("redis://s3cret@h");
  EXPECT_EQ(ep.user, "");
  ASSERT_TRUE(ep.password.has_value());
  EXPECT_EQ(*ep.password, "s3cret");
}

TEST(ParseEndpoint, ReadsAUserWithAnEmptyPasswordAsNoPassword) {
  Endpoint ep = parse_endpoint("redis://alice:@h");
  EXPECT_EQ(ep.user, "alice");
  EXPECT_FALSE(ep.password.has_value());
}

TEST(ParseEndpoint, DecodesPercentEscapesInUserAndPassword) {
  Endpoint ep = parse_endpoint("redis://al%69ce:p%40ss%3Aw%2Fo%25rd@h");
  EXPECT_EQ(ep.user, "alice");
  ASSERT_TRUE(ep.password.has_value());
  EXPECT_EQ(*ep.password, "p@ss:w/o%rd");
}

TEST(ParseEndpoint, SplitsUserinfoAtTheLastAtSign) {
  Endpoint ep = parse_endpoint("redis://:a@b@h:6380");
  ASSERT_TRUE(ep.password.has_value());
  EXPECT_EQ(*ep.password, "a@b");
  EXPECT_EQ(ep.host, "h");
  EXPECT_EQ(ep.port, 6380);
}

// A redis:// path is a database number, never an '@': a password may hold
// a raw '/' (and '?', '#', ':', '@', spaces) without escaping.
TEST(ParseEndpoint, APasswordMayHoldARawSlashOrSpace) {
  for (const std::string pw : {"p/ss", "a/b@c:d", "/?#", "x@/0", "two words", " "}) {
    SCOPED_TRACE(pw);
    Endpoint ep = parse_endpoint("redis://:" + pw + "@h:6380/2");
    ASSERT_TRUE(ep.password.has_value());
    EXPECT_EQ(*ep.password, pw);
    EXPECT_EQ(ep.host, "h");
    EXPECT_EQ(ep.port, 6380);
    EXPECT_EQ(ep.db, 2);
    EXPECT_EQ(ep.display().find(pw), std::string::npos) << ep.display();
  }
}

// Found by fuzz/endpoint_fuzz.cpp: display() wrote decoded hosts and socket
// paths back unescaped, so "%25" came back as an escape, "%3F" as a query
// and "%20" as a space: $REDLOCK_URL named another server, or none.
TEST(EndpointDisplay, EscapesWhatTheUrlEscapedSoItNamesTheSameServer) {
  for (const char* url :
       {"redis://a%25ed", "redis://h%3F1:7000/2", "rediss://%C3%A9t%C3%A9", "unix:///tmp/my%20redis.sock",
        "unix:///tmp/a%3Fdb=1", "unix:///tmp/100%25.sock?db=2", "redis+sentinel://s%25x,t:1/m%2F1/3"}) {
    SCOPED_TRACE(url);
    Endpoint a = parse_endpoint(url);
    Endpoint b = parse_endpoint(a.display());
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.port, b.port);
    EXPECT_EQ(a.path, b.path);
    EXPECT_EQ(a.db, b.db);
    EXPECT_EQ(a.sentinels, b.sentinels);
    EXPECT_EQ(a.master, b.master);
    EXPECT_EQ(a.display(), b.display());
  }
  EXPECT_EQ(parse_endpoint("unix:///tmp/a%3Fdb=1").display(), "unix:///tmp/a%3Fdb%3D1");
}

TEST(ParseEndpoint, DecodesPercentEscapesInTheHost) {
  EXPECT_EQ(parse_endpoint("redis://my%2Dhost").host, "my-host");
}

TEST(ParseEndpoint, ReadsAnIpv6HostInBrackets) {
  Endpoint ep = parse_endpoint("redis://[::1]:6380");
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 6380);
  Endpoint full = parse_endpoint("redis://u:p@[2001:db8::1]/4");
  EXPECT_EQ(full.host, "2001:db8::1");
  EXPECT_EQ(full.port, 6379);
  EXPECT_EQ(full.db, 4);
}

TEST(ParseEndpoint, ReadsAUnixSocketPath) {
  Endpoint ep = parse_endpoint("unix:///run/redis/redis.sock");
  EXPECT_EQ(ep.kind, Endpoint::Kind::k_unix);
  EXPECT_EQ(ep.path, "/run/redis/redis.sock");
  EXPECT_EQ(ep.db, 0);
}

TEST(ParseEndpoint, ReadsTheDatabaseOfAUnixSocket) {
  Endpoint ep = parse_endpoint("unix:///tmp/r.sock?db=7");
  EXPECT_EQ(ep.path, "/tmp/r.sock");
  EXPECT_EQ(ep.db, 7);
}

TEST(ParseEndpoint, DecodesPercentEscapesInASocketPath) {
  EXPECT_EQ(parse_endpoint("unix:///tmp/my%20redis.sock").path, "/tmp/my redis.sock");
}

TEST(ParseEndpoint, AcceptsTheLargestDatabaseNumber) {
  EXPECT_EQ(parse_endpoint("redis://h/2147483647").db, 2147483647);
  rejection("redis://h/2147483648");
}

TEST(ParseEndpoint, RejectsAnEmptyUrl) {
  rejection("");
}

TEST(ParseEndpoint, RejectsAUrlWithoutAScheme) {
  rejection("localhost:6379");
  rejection("127.0.0.1");
  rejection("//localhost");
}

TEST(ParseEndpoint, ASchemeWithoutItsColonSlashSlashIsCorrectedNotDoubled) {
  const std::pair<const char*, const char*> cases[] = {
      {"redis//host", "write redis://host"},
      {"rediss//host:6380", "write rediss://host:6380"},
      {"redis:/host", "write redis://host"},
      {"redis:host", "write redis://host"},
      {"rediss:host/2", "write rediss://host/2"},
      {"redis+sentinel//s1,s2/mymaster", "write redis+sentinel://s1,s2/mymaster"},
      {"//host", "write redis://host "},
  };
  for (const auto& [url, expected] : cases) {
    SCOPED_TRACE(url);
    const std::string msg = rejection(url);
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
    EXPECT_EQ(msg.find("redis://redis"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("redis:///"), std::string::npos) << msg;
  }
}

TEST(ParseEndpoint, AHostNamedRedisWithAPortStillLacksOnlyTheScheme) {
  // docker compose's "redis:6379" is the host redis, not a mistyped scheme.
  EXPECT_NE(rejection("redis:6379").find("write redis://redis:6379 "), std::string::npos);
  EXPECT_NE(rejection("redis:6379/2").find("write redis://redis:6379/2 "), std::string::npos);
}

TEST(ParseEndpoint, AMistypedSchemeNeverEchoesThePassword) {
  for (const char* url : {"redis//:hunter2pw@h", "redis:u:hunter2pw@h:1", "rediss:/u:hunter2pw://x@h"}) {
    SCOPED_TRACE(url);
    const std::string msg = rejection(url);
    EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("://***@h"), std::string::npos) << msg;
  }
}

TEST(ParseEndpoint, RejectsUnknownSchemes) {
  std::string msg = rejection("http://localhost:6379");
  EXPECT_NE(msg.find("http"), std::string::npos) << msg;
  rejection("REDIS://localhost");
  rejection("redis-sentinel://h:26379/m");
  rejection("tcp://localhost:6379");
}

TEST(ParseEndpoint, RejectsPortZero) {
  rejection("redis://h:0");
}
TEST(ParseEndpoint, RejectsPortsAbove65535) {
  rejection("redis://h:65536");
  rejection("redis://h:99999999999999999999");
}
TEST(ParseEndpoint, RejectsANonNumericPort) {
  for (const char* url :
       {"redis://h:abc", "redis://h:63a9", "redis://h:-1", "redis://h:+6379", "redis://h:6379:1", "redis://h:0x10"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}
TEST(ParseEndpoint, RejectsAnEmptyPort) {
  rejection("redis://h:");
  rejection("redis://h:/1");
  rejection("redis://[::1]:");
}

TEST(ParseEndpoint, RejectsAnEmptyHost) {
  for (const char* url : {"redis://", "redis://:6379", "redis:///0", "redis://u:p@", "redis://u:p@:6379", "rediss://",
                          "redis://[]", "redis://[]:6379"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsBadPercentEscapes) {
  for (const char* url : {"redis://:pa%zzss@h", "redis://:pass%4@h", "redis://:pass%@h", "redis://u%g1:p@h",
                          "redis://ho%zzst", "redis://host%", "unix:///tmp/r%2.sock", "unix:///tmp/r%.sock"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsIpv6WithoutBrackets) {
  for (const char* url : {"redis://::1", "redis://::1:6379", "redis://2001:db8::1", "redis://fe80::1/0"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsMalformedBracketedHosts) {
  for (const char* url : {"redis://[::1", "redis://[::1]6379", "redis://[::1]x:6379", "redis://[zz::1]:6379",
                          "redis://[::1]:0", "redis://[::1]:65536", "redis://[::1]:abc"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsADatabaseThatIsNotANumber) {
  for (const char* url :
       {"redis://h/abc", "redis://h/-1", "redis://h/1.5", "redis://h/1/2", "redis://h/0x1", "redis://h:6379/db1"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsQueryStringsAndFragmentsOnTcpUrls) {
  rejection("redis://h?db=1");
  rejection("redis://h:6379/0?timeout=1");
  rejection("redis://h#top");
}

TEST(ParseEndpoint, RejectsSpacesAndControlCharacters) {
  for (const char* url :
       {"redis://ho st", "redis://host\n", "redis://\thost", "unix:///tmp/r\x7f.sock", " redis://host"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsPercentEscapedControlCharactersInTheHostAndPath) {
  for (const char* url : {"redis://ho%0ast", "redis://%00", "redis://ho%01st", "redis://host%7f",
                          "unix:///tmp/r%00.sock", "unix:///tmp/r%0a.sock"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsHostsWithCharactersNoHostNameHas) {
  rejection("redis://a,b:6379");
  rejection("redis://h%2Fx");
}

TEST(ParseEndpoint, RejectsAUnixUrlWithoutAnAbsolutePath) {
  rejection("unix://");
  rejection("unix://redis.sock");
  rejection("unix://?db=1");
}

TEST(ParseEndpoint, RejectsABadUnixDatabase) {
  for (const char* url :
       {"unix:///tmp/r.sock?db=", "unix:///tmp/r.sock?db=x", "unix:///tmp/r.sock?db=-1", "unix:///tmp/r.sock?db=1&x=2",
        "unix:///tmp/r.sock?foo=1", "unix:///tmp/r.sock?", "unix:///tmp/r.sock?db=1.5"}) {
    SCOPED_TRACE(url);
    rejection(url);
  }
}

TEST(ParseEndpoint, RejectsASocketPathTooLongForTheKernel) {
  rejection("unix:///" + std::string(120, 'x'));
  EXPECT_NO_THROW((void)parse_endpoint("unix:///" + std::string(100, 'x')));
}

TEST(ParseEndpointList, SplitsAtCommas) {
  auto eps = parse_endpoint_list("redis://a:1,redis://b:2/3,unix:///tmp/c.sock");
  ASSERT_EQ(eps.size(), 3u);
  EXPECT_EQ(eps[0].host, "a");
  EXPECT_EQ(eps[1].port, 2);
  EXPECT_EQ(eps[1].db, 3);
  EXPECT_EQ(eps[2].path, "/tmp/c.sock");
}

TEST(ParseEndpointList, AllowsSpacesAroundTheCommas) {
  auto eps = parse_endpoint_list("redis://a:1, redis://b:2 ,  unix:///tmp/c.sock");
  ASSERT_EQ(eps.size(), 3u);
  EXPECT_EQ(eps[0].host, "a");
  EXPECT_EQ(eps[1].port, 2);
  EXPECT_EQ(eps[2].path, "/tmp/c.sock");
}

TEST(ParseEndpointList, AStrayCommaIsNamedAsSuch) {
  for (const char* list :
       {"redis://a:1,", "redis://a:1, ", ",redis://a", "redis://a,,redis://b", "redis://a:1, ,redis://b:2"}) {
    SCOPED_TRACE(list);
    try {
      (void)parse_endpoint_list(list);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("stray comma"), std::string::npos) << e.what();
    }
  }
}

TEST(ParseEndpointList, RejectsEmptyItems) {
  EXPECT_THROW((void)parse_endpoint_list(""), UsageError);
  EXPECT_THROW((void)parse_endpoint_list("redis://a,"), UsageError);
  EXPECT_THROW((void)parse_endpoint_list(",redis://a"), UsageError);
  EXPECT_THROW((void)parse_endpoint_list("redis://a,,redis://b"), UsageError);
}

TEST(EndpointDisplay, ShowsSchemeHostPortAndDatabase) {
  EXPECT_EQ(parse_endpoint("redis://h").display(), "redis://h:6379");
  EXPECT_EQ(parse_endpoint("redis://h:7000/2").display(), "redis://h:7000/2");
  EXPECT_EQ(parse_endpoint("rediss://h").display(), "rediss://h:6379");
  EXPECT_EQ(parse_endpoint("redis://[::1]:6380").display(), "redis://[::1]:6380");
  EXPECT_EQ(parse_endpoint("unix:///tmp/r.sock").display(), "unix:///tmp/r.sock");
  EXPECT_EQ(parse_endpoint("unix:///tmp/r.sock?db=3").display(), "unix:///tmp/r.sock?db=3");
}

TEST(EndpointDisplay, KeepsTheUserButNeverThePassword) {
  // "alice:@" and not "alice@": the single-part form would read back as a
  // password, and $REDLOCK_URL (made from display()) is read back by a
  // nested redlock.
  EXPECT_EQ(parse_endpoint("redis://alice:hunter2pw@h:7000/1").display(), "redis://alice:@h:7000/1");
  EXPECT_EQ(parse_endpoint("redis://:hunter2pw@h").display(), "redis://h:6379");
  EXPECT_EQ(parse_endpoint("redis://hunter2pw@h").display(), "redis://h:6379");
}

TEST(EndpointDisplay, NeverContainsThePasswordInAnyForm) {
  for (const char* url :
       {"redis://alice:hunter2pw@h", "redis://:hunter2pw@h:1/2", "redis://hunter2pw@[::1]:6380",
        "rediss://bob:hunter2pw@secure:6390/9", "redis://:hunter2pw@a@h", "redis://u:hunter%32pw@h"}) {
    SCOPED_TRACE(url);
    Endpoint ep = parse_endpoint(url);
    ASSERT_TRUE(ep.password.has_value());
    EXPECT_EQ(ep.display().find("hunter"), std::string::npos) << ep.display();
  }
  // A password set later (from $REDLOCK_PASSWORD) is not shown either.
  Endpoint ep = parse_endpoint("unix:///tmp/r.sock?db=1");
  ep.password = "hunter2pw";
  EXPECT_EQ(ep.display().find("hunter"), std::string::npos) << ep.display();
}

TEST(EndpointDisplay, ParsesBackToTheSameServer) {
  for (const char* url :
       {"redis://h", "redis://alice:pw@h:7000/2", "redis://alice@h", "redis://a%3Ab%40c:pw@h", "rediss://h:1",
        "redis://[2001:db8::1]:6380/5", "unix:///tmp/r.sock?db=4", "unix:///tmp/r.sock"}) {
    SCOPED_TRACE(url);
    Endpoint a = parse_endpoint(url);
    Endpoint b = parse_endpoint(a.display());
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.tls, b.tls);
    EXPECT_EQ(a.host, b.host);
    EXPECT_EQ(a.port, b.port);
    EXPECT_EQ(a.user, b.user);
    EXPECT_EQ(a.path, b.path);
    EXPECT_EQ(a.db, b.db);
    EXPECT_FALSE(b.password.has_value());
  }
}

TEST(ParseEndpoint, NeverQuotesThePasswordInItsComplaint) {
  // However a URL with a password is malformed, the message must not show
  // the password (it goes to stderr, and from there into logs).
  for (const char* url : {"redis://u:hunter2pw@h:abc", "redis://:hunter2pw@", "redis://u:hunter2pw@h/x",
                          "redis://u:hunter2pw@h:0", "redis://u:hunter2pw%zz@h", "redis://u:hunter2pw%4@h",
                          "redis://u:hunter2pw@[::1", "redis://u:hunter2pw?x@h:1:2", "redis://:hunter2pw#x@h/db",
                          "redis://u:hunter2pw/x@h/db", "rediss://:hunter2pw/@h:0"}) {
    SCOPED_TRACE(url);
    std::string msg = rejection(url);
    EXPECT_EQ(msg.find("hunter2"), std::string::npos) << msg;
  }
}

TEST(ParseEndpoint, ReadsSentinelsMasterAndDatabase) {
  Endpoint ep = parse_endpoint("redis+sentinel://:pw@10.0.0.1,10.0.0.2:26380,[::1]/mymaster/3");
  EXPECT_EQ(ep.kind, Endpoint::Kind::k_sentinel);
  ASSERT_EQ(ep.sentinels.size(), 3u);
  EXPECT_EQ(ep.sentinels[0], std::make_pair(std::string("10.0.0.1"), 26379));
  EXPECT_EQ(ep.sentinels[1], std::make_pair(std::string("10.0.0.2"), 26380));
  EXPECT_EQ(ep.sentinels[2], std::make_pair(std::string("::1"), 26379));
  EXPECT_EQ(ep.master, "mymaster");
  EXPECT_EQ(ep.db, 3);
  EXPECT_EQ(ep.password, "pw");
  EXPECT_EQ(ep.display(), "redis+sentinel://10.0.0.1:26379,10.0.0.2:26380,[::1]:26379/mymaster/3");
}

TEST(ParseEndpoint, ReadsTheSentinelsPasswordAndNeverShowsIt) {
  Endpoint ep = parse_endpoint("redis+sentinel://u:pw@s1,s2/mymaster/2?sentinel_password=a%26b%3Fc@d");
  ASSERT_TRUE(ep.sentinel_password.has_value());
  EXPECT_EQ(*ep.sentinel_password, "a&b?c@d");
  EXPECT_EQ(ep.user, "u");
  EXPECT_EQ(*ep.password, "pw");
  EXPECT_EQ(ep.master, "mymaster");
  EXPECT_EQ(ep.db, 2);
  EXPECT_EQ(ep.display(), "redis+sentinel://u:@s1:26379,s2:26379/mymaster/2");
  EXPECT_FALSE(parse_endpoint("redis+sentinel://s1/m?sentinel_password=").sentinel_password.has_value());
  rejection("redis+sentinel://s1/m?password=x");
  EXPECT_EQ(rejection("redis+sentinel://s1/m?sentinel_pasword=s3cr3t").find("s3cr3t"), std::string::npos);
  rejection("redis+sentinel://s1/m?sentinel_password");
  rejection("redis+sentinel://s1/m?sentinel_password=%zz");
  rejection("redis://h/0?sentinel_password=x");
}

TEST(ParseEndpoint, RejectsSentinelUrlsWithoutMasterOrWithEmptyHosts) {
  rejection("redis+sentinel://h:26379");
  rejection("redis+sentinel://h:26379/");
  rejection("redis+sentinel://h,,g/m");
  rejection("redis+sentinel://h:0/m");
  rejection("redis+sentinel://h/m/notadb");
}

TEST(ParseEndpointList, KeepsASentinelUrlsHostsTogether) {
  auto list = parse_endpoint_list("redis+sentinel://a,b:26380/m,redis://c:7000,unix:///tmp/r.sock");
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].sentinels.size(), 2u);
  EXPECT_EQ(list[1].host, "c");
  EXPECT_EQ(list[2].path, "/tmp/r.sock");
}

// ---------------------------------------------------------------- one server named twice

TEST(RefuseRepeated, RefusesTheSameServerInTheSameWordsWhateverTheCredentials) {
  using redlock::redis::refuse_repeated;
  const std::vector<std::pair<std::string, std::string>> same = {
      {"redis://127.0.0.1:7000", "redis://127.0.0.1:7000/0"},
      {"redis://Redis.Example:7000", "redis://redis.example:7000"},
      {"redis://u:pw-one@h:7000/2", "redis://:pw-two@h:7000/2"},
      {"rediss://[::1]:7000", "rediss://[::1]:7000"},
      {"unix:///run/redis.sock", "unix:///run/redis.sock?db=0"},
      {"redis+sentinel://s1:26379,s2:26379/m", "redis+sentinel://s2,s1/m"},
  };
  for (const auto& [a, b] : same) {
    SCOPED_TRACE(a + " " + b);
    try {
      refuse_repeated(parse_endpoint_list(a + ",redis://other:1," + b));
      ADD_FAILURE() << "not refused";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("named twice"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("pw-"), std::string::npos) << e.what();
    }
  }
  const std::vector<std::pair<std::string, std::string>> different = {
      {"redis://127.0.0.1:7000", "redis://127.0.0.1:7001"},
      {"redis://127.0.0.1:7000", "redis://127.0.0.1:7000/1"},
      {"redis://127.0.0.1:7000", "rediss://127.0.0.1:7000"},
      {"redis://localhost:7000", "redis://127.0.0.1:7000"},  // an alias: found once connected
      {"unix:///run/redis.sock", "unix:///run/redis.sock?db=1"},
      {"redis+sentinel://s1/m", "redis+sentinel://s1/n"},
  };
  for (const auto& [a, b] : different) {
    SCOPED_TRACE(a + " " + b);
    EXPECT_NO_THROW(refuse_repeated(parse_endpoint_list(a + "," + b)));
  }
}
