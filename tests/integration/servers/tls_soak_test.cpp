// rediss:// endpoints: certificate verification, --insecure, client
// certificates, against a TLS redis-server with certificates made here.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "harness.hpp"

using namespace redlock::test;

namespace {

// A throwaway CA, a server certificate for 127.0.0.1/localhost signed by
// it, and a client certificate, made with the openssl command.
class Certificates {
 public:
  Certificates() {
    const std::string d = m_dir.path();
    const std::string script =
        "set -e; cd '" + d +
        "'\n"
        "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=redlock-test-ca -keyout ca.key -out ca.pem\n"
        "openssl req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout server.key -out server.csr\n"
        "printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > san.ext\n"
        "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext "
        "-out server.pem\n"
        "openssl req -newkey rsa:2048 -nodes -subj /CN=client -keyout client.key -out client.csr\n"
        "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem\n";
    if (std::system(("sh -c \"" + script + "\" >/dev/null 2>&1").c_str()) != 0) {
      throw std::runtime_error("openssl could not make test certificates");
    }
  }
  [[nodiscard]] std::string file(const std::string& name) const { return m_dir.path() + "/" + name; }
  [[nodiscard]] RedisServer::Options server(bool client_certs = false) const {
    RedisServer::Options o;
    o.tls_cert = file("server.pem");
    o.tls_key = file("server.key");
    o.tls_ca = file("ca.pem");
    if (client_certs) {
      o.tls_client_cert = file("client.pem");
      o.tls_client_key = file("client.key");
    }
    return o;
  }

 private:
  TempDir m_dir;
};

class Tls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { s_certs = std::make_unique<Certificates>(); }
  static void TearDownTestSuite() { s_certs.reset(); }
  static std::unique_ptr<Certificates> s_certs;
};
std::unique_ptr<Certificates> Tls::s_certs;

}  // namespace

TEST_F(Tls, VerifiedConnectionTakesAndShowsTheLock) {
  RedisServer redis(s_certs->server());
  Env env{{"REDLOCK_URL", redis.url()}};
  Result a = run({"acquire", "--tls-ca", s_certs->file("ca.pem"), "secure"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(redis.cmd({"HGET", "redlock:{secure}", "token"}).str + "\n", a.out);
  Result st = run({"status", "--tls-ca", s_certs->file("ca.pem"), "secure"}, env);
  EXPECT_EQ(st.status, 0) << st.err;
  EXPECT_NE(st.out.find("secure"), std::string::npos);
}

TEST_F(Tls, UnknownCertificateAuthorityIsRefused) {
  RedisServer redis(s_certs->server());
  Result a = run({"acquire", "nope"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(a.status, 77) << a.err;
  EXPECT_NE(a.err.find("verification"), std::string::npos) << a.err;
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{nope}"}).integer, 0);
}

TEST_F(Tls, ServerNameMismatchIsRefused) {
  RedisServer redis(s_certs->server());
  Result a = run({"acquire", "--tls-ca", s_certs->file("ca.pem"), "--tls-server-name", "elsewhere.example", "n"},
                 {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(a.status, 77) << a.err;
}

TEST_F(Tls, InsecureSkipsVerificationAndSaysSo) {
  RedisServer redis(s_certs->server());
  Result a = run({"acquire", "--insecure", "loose"}, {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("--insecure"), std::string::npos) << a.err;
}

// Set from the environment (as exec passes it on to a nested redlock), the
// warning names the variable: there is no --insecure on the command line.
TEST_F(Tls, InsecureFromTheEnvironmentSaysWhereItCameFrom) {
  RedisServer redis(s_certs->server());
  Result a = run({"acquire", "loose"}, {{"REDLOCK_URL", redis.url()}, {"REDLOCK_TLS_INSECURE", "1"}});
  EXPECT_EQ(a.status, 0) << a.err;
  EXPECT_NE(a.err.find("REDLOCK_TLS_INSECURE=1: TLS certificates are not verified"), std::string::npos) << a.err;
  EXPECT_EQ(a.err.find("--insecure"), std::string::npos) << a.err;
}

TEST_F(Tls, ClientCertificateWhenTheServerDemandsOne) {
  RedisServer redis(s_certs->server(true));
  Env env{{"REDLOCK_URL", redis.url()}};
  Result without = run({"acquire", "--tls-ca", s_certs->file("ca.pem"), "mtls"}, env);
  EXPECT_EQ(without.status, 77) << without.err;
  EXPECT_NE(without.err.find("give one with --tls-cert and --tls-key"), std::string::npos) << without.err;
  Result with = run({"acquire", "--tls-ca", s_certs->file("ca.pem"), "--tls-cert", s_certs->file("client.pem"),
                     "--tls-key", s_certs->file("client.key"), "mtls"},
                    env);
  EXPECT_EQ(with.status, 0) << with.err;
}

TEST_F(Tls, BadCertificateFilesAreUsageErrorsBeforeAnyTraffic) {
  Env env{{"REDLOCK_URL", "rediss://127.0.0.1:1"}};
  Result missing = run({"acquire", "--tls-ca", "/nonexistent/ca.pem", "x"}, env);
  EXPECT_EQ(missing.status, 64) << missing.err;
  Result half = run({"acquire", "--tls-cert", s_certs->file("client.pem"), "x"}, env);
  EXPECT_EQ(half.status, 64) << half.err;
}

TEST_F(Tls, PlainRedisUrlAgainstATlsPortIsUnavailable) {
  RedisServer redis(s_certs->server());
  std::string plain = "redis://127.0.0.1:" + std::to_string(redis.port());
  Result a = run({"acquire", "--redis-timeout", "500ms", "x"}, {{"REDLOCK_URL", plain}});
  EXPECT_EQ(a.status, 69) << a.err;
}

TEST_F(Tls, ExecRunsOverTlsAndPassesTheUrlOn) {
  RedisServer redis(s_certs->server());
  Result r = run({"exec", "--tls-ca", s_certs->file("ca.pem"), "tlsexec", "--", "sh", "-c", "echo \"$REDLOCK_URL\""},
                 {{"REDLOCK_URL", redis.url()}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, redis.url() + "\n");
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{tlsexec}"}).integer, 0);
}

TEST_F(Tls, ARedlockSaysOnceWhichServerFailsVerification) {
  RedisServer a(s_certs->server());
  RedisServer b(s_certs->server());
  Certificates other;  // a CA that --tls-ca does not trust
  RedisServer c(other.server());
  Env env{{"REDLOCK_URL", a.url() + "," + b.url() + "," + c.url()}};
  for (bool quiet : {false, true}) {
    SCOPED_TRACE(quiet ? "-q" : "");
    // Renewed every 500 ms: each renewal finds the third server refusing again.
    std::vector<std::string> args = {"exec", "--tls-ca", s_certs->file("ca.pem"), "--ttl", "1500ms", "split"};
    if (quiet) {
      args.emplace_back("-q");
    }
    args.insert(args.end(), {"--", "sleep", "2"});
    Result r = run(args, env);
    EXPECT_EQ(r.status, 0) << r.err;
    size_t first = r.err.find("verification of Redis at " + c.url());
    ASSERT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("verification of Redis at " + c.url(), first + 1), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("verification of Redis at " + a.url()), std::string::npos) << r.err;
  }
}

// A nested redlock inside exec verifies the servers and presents the client
// certificate as the outer one does, without the user repeating the options.
TEST_F(Tls, ANestedRedlockInsideExecUsesTheSameCertificates) {
  RedisServer redis(s_certs->server(true));
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"RL", redlock_binary()}, {"D", dir.path()}};
  Result r = run({"exec", "--tls-ca", s_certs->file("ca.pem"), "--tls-cert", s_certs->file("client.pem"), "--tls-key",
                  s_certs->file("client.key"), "outer", "--", "sh", "-c",
                  "env | grep '^REDLOCK_TLS_' | sort > \"$D/env\"; \"$RL\" exec inner -- \"$RL\" status outer"},
                 env);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("outer"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(dir.path() + "/env"), "REDLOCK_TLS_CA=" + s_certs->file("ca.pem") +
                                                "\nREDLOCK_TLS_CERT=" + s_certs->file("client.pem") +
                                                "\nREDLOCK_TLS_KEY=" + s_certs->file("client.key") + "\n");
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{outer}"}).integer, 0);
  EXPECT_EQ(redis.cmd({"EXISTS", "redlock:{inner}"}).integer, 0);
}

TEST_F(Tls, OpenSslIsLoadedOnlyForRediss) {
  // A plain call never maps libssl (it is loaded when an endpoint is
  // rediss://): CMD looks at its parent redlock's memory map.
  const std::vector<std::string> count_libssl = {"--", "sh", "-c", "grep -c libssl /proc/$PPID/maps || true"};
  RedisServer tls(s_certs->server());
  std::vector<std::string> args = {"exec", "--tls-ca", s_certs->file("ca.pem"), "maps"};
  args.insert(args.end(), count_libssl.begin(), count_libssl.end());
  Result with_tls = run(args, {{"REDLOCK_URL", tls.url()}});
  ASSERT_EQ(with_tls.status, 0) << with_tls.err;
  EXPECT_NE(with_tls.out, "0\n") << "rediss:// without libssl mapped?";
  RedisServer plain;
  args = {"exec", "maps"};
  args.insert(args.end(), count_libssl.begin(), count_libssl.end());
  Result without = run(args, {{"REDLOCK_URL", plain.url()}});
  ASSERT_EQ(without.status, 0) << without.err;
  EXPECT_EQ(without.out, "0\n");
}

TEST_F(Tls, AnOpenSslThatCannotBeLoadedIs69SayingWhatToInstall) {
  RedisServer tls(s_certs->server());
  TempDir dir;
  {
    std::ofstream broken(dir.path() + "/libssl.so.3");  // not a library: dlopen fails
  }
  Result r = run({"acquire", "--tls-ca", s_certs->file("ca.pem"), "noload"},
                 {{"REDLOCK_URL", tls.url()}, {"LD_LIBRARY_PATH", dir.path()}});
  EXPECT_EQ(r.status, 69) << r.err;
  EXPECT_NE(r.err.find("install libssl3"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(tls.cmd({"EXISTS", "redlock:{noload}"}).integer, 0);
  // A plain call does not need it.
  RedisServer plain;
  Result p = run({"acquire", "noload"}, {{"REDLOCK_URL", plain.url()}, {"LD_LIBRARY_PATH", dir.path()}});
  EXPECT_EQ(p.status, 0) << p.err;
}
