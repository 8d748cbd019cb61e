// The acquire sequence of lock::Locker without servers: the round's
// answers are scripted (lock::Servers::set_run_script, the seam), and what
// Locker sends next and what try_acquire returns are checked. Every
// decision (answers, quorum) runs as it does against Redis.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "lock/locker.hpp"
#include "redis/endpoint.hpp"
#include "redis/script.hpp"
#include "util/exit_status.hpp"
#include "util/token.hpp"

namespace redlock::lock {
namespace {

using redis::Reply;

Reply str(const std::string& s) {
  Reply r;
  r.type = Reply::Type::k_string;
  r.str = s;
  return r;
}

Reply num(long long n) {
  Reply r;
  r.type = Reply::Type::k_integer;
  r.integer = n;
  return r;
}

Reply arr(std::vector<Reply> elements) {
  Reply r;
  r.type = Reply::Type::k_array;
  r.elements = std::move(elements);
  return r;
}

Reply granted(long long fence) {
  return arr({str("acquired"), str("tok"), num(fence), num(1), num(30'000)});
}

Reply busy() {
  return arr({str("busy"), num(1500), str("web1"), str("77")});
}

Reply released() {
  return arr({str("released"), num(1), num(0)});
}

// What one server was asked: the script's name and the targeted server.
struct Sent {
  std::string script;
  size_t server;
  bool operator==(const Sent&) const = default;
};

// Servers that answer as `answer` says (the script's name and the server's
// index in; nullopt: it does not answer in time), each in turn, asking the
// round's `decided` after each answer as redis::run_script does.
class ScriptedServers {
 public:
  using Answer = std::function<std::optional<Reply>(const std::string& script, size_t server)>;

  ScriptedServers(size_t n, Answer answer, Millis delay = Millis(0))
      : m_locker(endpoints(n), Options{}), m_answer(std::move(answer)), m_delay(delay) {
    m_locker.servers().set_run_script(
        [this](const redis::ScriptCall& call, const std::vector<bool>& targets) { return run(call, targets); });
  }

  Locker& locker() { return m_locker; }
  const std::vector<Sent>& sent() const { return m_sent; }
  std::vector<Sent> sent(const std::string& script) const {
    std::vector<Sent> out;
    for (const Sent& s : m_sent) {
      if (s.script == script) {
        out.push_back(s);
      }
    }
    return out;
  }

 private:
  static std::vector<redis::Endpoint> endpoints(size_t n) {
    std::vector<redis::Endpoint> out;
    for (size_t i = 0; i < n; ++i) {
      out.push_back(redis::parse_endpoint("redis://127.0.0.1:" + std::to_string(1 + i)));
    }
    return out;
  }

  std::vector<redis::ScriptAnswer> run(const redis::ScriptCall& call, const std::vector<bool>& targets) {
    const size_t n = m_locker.size();
    std::vector<redis::ScriptAnswer> out(n);
    std::vector<bool> in(n, false);
    bool decided = false;
    for (size_t i = 0; i < n; ++i) {
      if (!targets.empty() && !targets[i]) {
        out[i].failure = redis::Failure{ExitStatus::k_unavailable, "not asked"};
        in[i] = true;
        continue;
      }
      // Sent to every server at once; the answers come in in turn, and
      // once the round is decided the rest are abandoned.
      const std::string script(call.script->name);
      m_sent.push_back({script, i});
      std::optional<Reply> reply;
      if (!decided) {
        std::this_thread::sleep_for(m_delay);
        reply = m_answer(script, i);
      }
      if (reply) {
        out[i].reply = *reply;
      } else {
        out[i].failure = redis::Failure{ExitStatus::k_unavailable, "no answer in time"};
      }
      in[i] = true;
      decided = decided || (call.decided && call.decided(out, in));
    }
    return out;
  }

  Locker m_locker;
  Answer m_answer;
  Millis m_delay;
  std::vector<Sent> m_sent;
};

TEST(AcquireSequence, AQuorumOfGrantsIsHeldAndNothingIsUndone) {
  ScriptedServers s(3, [](const std::string&, size_t) { return granted(7); });
  const AcquireOutcome got = s.locker().try_acquire("job", Millis(30'000), "", Owner{});
  ASSERT_TRUE(std::holds_alternative<Acquired>(got));
  const auto& a = std::get<Acquired>(got);
  EXPECT_EQ(a.fence, 7);
  EXPECT_TRUE(plausible_token(a.token)) << "a fresh token: " << a.token;
  EXPECT_TRUE(s.sent("release").empty());
  EXPECT_TRUE(s.sent("raise-fence").empty()) << "every server handed out the same fence";
}

TEST(AcquireSequence, ARoundEndsOnceAQuorumGrantedAndTheStragglerIsLeftToItsTtl) {
  ScriptedServers s(3, [](const std::string&, size_t) { return granted(7); });
  const AcquireOutcome got = s.locker().try_acquire("job", Millis(30'000), "", Owner{});
  ASSERT_TRUE(std::holds_alternative<Acquired>(got));
  EXPECT_EQ(std::get<Acquired>(got).voted, (std::vector<bool>{true, true, false}))
      << "two grants of three decide the round";
  EXPECT_TRUE(s.sent("release").empty()) << "a late grant is under the holder's token, renewed and released with it";
}

TEST(AcquireSequence, TheSmallerFencesOfAQuorumAreRaisedToItsLargest) {
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "raise-fence") {
      return arr({str("raised")});
    }
    return i == 0 ? granted(5) : granted(9);
  });
  const AcquireOutcome got = s.locker().try_acquire("job", Millis(30'000), "", Owner{});
  ASSERT_TRUE(std::holds_alternative<Acquired>(got));
  EXPECT_EQ(std::get<Acquired>(got).fence, 9);
  EXPECT_EQ(s.sent("raise-fence"), (std::vector<Sent>{{"raise-fence", 0}}));
}

TEST(AcquireSequence, AGrantShortOfAQuorumIsGivenBackWhereverItMayHaveBeenTaken) {
  // Server 0 grants, 1 is busy, 2 does not answer (it may still run the
  // script): both 0 and 2 are released, and the caller hears busy.
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "release") {
      return released();
    }
    return i == 0 ? std::optional(granted(3)) : i == 1 ? std::optional(busy()) : std::nullopt;
  });
  const AcquireOutcome got = s.locker().try_acquire("job", Millis(30'000), "", Owner{});
  ASSERT_TRUE(std::holds_alternative<Busy>(got));
  EXPECT_EQ(std::get<Busy>(got).host, "web1");
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}, {"release", 2}}));
}

TEST(AcquireSequence, AGrantThatCameAfterItsTtlRanOutIsGivenBackAndSaysRedisIsTooSlow) {
  ScriptedServers s(
      1,
      [](const std::string& script, size_t) -> std::optional<Reply> {
        return script == "release" ? released() : granted(1);
      },
      Millis(30));
  try {
    (void)s.locker().try_acquire("job", Millis(20), "", Owner{});
    FAIL() << "a grant past its TTL is no lock";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_unavailable);
    EXPECT_NE(std::string(e.what()).find("TTL had run out"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}}));
}

TEST(AcquireSequence, AMajorityThatCannotBeReachedIsUnavailableWithEveryGrantUndone) {
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "release") {
      return released();
    }
    return i == 0 ? std::optional(granted(2)) : std::nullopt;
  });
  try {
    (void)s.locker().try_acquire("job", Millis(30'000), "", Owner{});
    FAIL() << "one server of three is no quorum";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_unavailable);
  }
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}, {"release", 1}, {"release", 2}}));
}

TEST(AcquireSequence, AFenceThatCannotBeRaisedTakesItsServerOutOfTheHold) {
  // Servers 0 and 1 grant (the round is decided), server 0 with the
  // smaller fence, and raising it fails: one grant of three is no lock,
  // and every grant is given back.
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "raise-fence") {
      return std::nullopt;
    }
    if (script == "release") {
      return released();
    }
    return i == 0 ? granted(5) : granted(9);
  });
  try {
    (void)s.locker().try_acquire("job", Millis(30'000), "", Owner{});
    FAIL() << "a server whose fence is behind does not count";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_unavailable);
  }
  EXPECT_EQ(s.sent("raise-fence"), (std::vector<Sent>{{"raise-fence", 0}}));
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}, {"release", 1}, {"release", 2}}));
}

TEST(AcquireSequence, AModeMismatchIsAUsageErrorOnceTheGrantsAreGivenBack) {
  // Server 0 grants, server 1 holds the name as a semaphore: the round is
  // decided there, and the grant (and whatever server 2 may still do) is
  // given back before the error.
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "release") {
      return released();
    }
    return i == 0 ? granted(4) : arr({str("mismatch"), str("semaphore"), str("3")});
  });
  try {
    (void)s.locker().try_acquire("job", Millis(30'000), "", Owner{});
    FAIL() << "a name held in another mode is a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), ExitStatus::k_usage);
    EXPECT_NE(std::string(e.what()).find("--limit 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}, {"release", 2}}));
}

TEST(AcquireSequence, AReentryOnAMinorityGivesItsLevelBackAndTakesNoFreshToken) {
  ScriptedServers s(3, [](const std::string& script, size_t i) -> std::optional<Reply> {
    if (script == "release") {
      return released();
    }
    return i == 0 ? arr({str("reentered"), str("old"), num(3), num(2), num(30'000)}) : busy();
  });
  const AcquireOutcome got = s.locker().try_acquire("job", Millis(30'000), "old", Owner{});
  ASSERT_TRUE(std::holds_alternative<Busy>(got));
  EXPECT_EQ(s.sent("release"), (std::vector<Sent>{{"release", 0}})) << "one level of the caller's token, and no more";
}

}  // namespace
}  // namespace redlock::lock
