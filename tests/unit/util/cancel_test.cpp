// A Cancel: one descriptor that every blocking wait polls; readable means
// "stop waiting now".

#include "util/cancel.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

using redlock::Cancel;
using redlock::Clock;
using namespace std::chrono_literals;

namespace {

// A pipe whose read end is the Cancel's descriptor: writing a byte is the request.
class Request {
 public:
  Request() { EXPECT_EQ(::pipe(m_ends), 0); }
  ~Request() {
    ::close(m_ends[0]);
    ::close(m_ends[1]);
  }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;

  [[nodiscard]] Cancel cancel() const { return Cancel(m_ends[0]); }
  void come() { EXPECT_EQ(::write(m_ends[1], "x", 1), 1); }

 private:
  int m_ends[2] = {-1, -1};
};

}  // namespace

TEST(Cancel, TheDefaultOneNeverComesAndSleepsTheWholeTime) {
  const Cancel never;
  EXPECT_EQ(never.fd(), -1);
  EXPECT_FALSE(never.requested());
  const auto start = Clock::now();
  EXPECT_TRUE(never.sleep_until(start + 50ms));
  const auto slept = Clock::now() - start;
  EXPECT_GE(slept, 50ms);
  EXPECT_LT(slept, 2s);
}

TEST(Cancel, ASleepEndsAtOnceWhenTheRequestHasCome) {
  Request request;
  const Cancel cancel = request.cancel();
  EXPECT_FALSE(cancel.requested());
  request.come();
  EXPECT_TRUE(cancel.requested());
  EXPECT_TRUE(cancel.requested()) << "looking must not consume the request";
  const auto start = Clock::now();
  EXPECT_FALSE(cancel.sleep_until(start + 10s));
  EXPECT_LT(Clock::now() - start, 2s);
}

TEST(Cancel, ASleepWithoutTheRequestLastsUntilItsDeadline) {
  Request request;
  const auto start = Clock::now();
  EXPECT_TRUE(request.cancel().sleep_until(start + 30ms));
  EXPECT_GE(Clock::now() - start, 30ms);
  EXPECT_TRUE(request.cancel().sleep_until(start)) << "a deadline already past returns at once";
}

TEST(CancelAfter, ComesByItselfOnceItsTimeHasPassed) {
  const redlock::CancelAfter soon(50ms);
  EXPECT_GE(soon.cancel().fd(), 0);
  EXPECT_FALSE(soon.cancel().requested());
  const auto start = Clock::now();
  EXPECT_FALSE(soon.cancel().sleep_until(start + 5s)) << "it came";
  const auto waited = Clock::now() - start;
  EXPECT_GE(waited, 40ms);
  EXPECT_LT(waited, 2s);
  EXPECT_TRUE(soon.cancel().requested()) << "and stays come";
}
