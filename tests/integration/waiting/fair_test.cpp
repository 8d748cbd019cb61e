// Fair waiting: waiters get a lock in the order they began waiting (the
// server's order), a dead or frozen waiter leaves the line within its
// heartbeat lease, a waiting writer blocks later readers, and nothing of the
// line outlives its last member.

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "exec_support.hpp"
#include "lock_support.hpp"
#include "servers.hpp"

using namespace redlock::test;

namespace {

std::string words_of(const std::string& path) {
  std::istringstream in(read_file(path));
  std::string out;
  for (std::string w; in >> w;) {
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// Starts a waiter on several servers and returns once every running one
// has it in line.
std::unique_ptr<Child> queue_up_on(const Servers& servers, const std::string& name,
                                   const std::vector<std::string>& args) {
  std::vector<long long> before;
  for (const auto& s : servers.all) {
    before.push_back(s->running() ? in_line(*s, name) : 0);
  }
  auto c = std::make_unique<Child>(args, servers.env());
  EXPECT_TRUE(eventually(
      [&] {
        for (size_t i = 0; i < servers.all.size(); ++i) {
          if (servers.all[i]->running() && in_line(*servers.all[i], name) <= before[i]) {
            return !c->alive();
          }
        }
        return true;
      },
      Seconds(10)))
      << "the waiter never joined every line";
  EXPECT_TRUE(c->alive()) << c->err_so_far();
  return c;
}

// Waiter id -> ticket in NAME's line on one server.
std::map<std::string, std::string> tickets_on(const RedisServer& redis, const std::string& name) {
  std::map<std::string, std::string> out;
  const auto all = redis.cmd({"ZRANGE", lock_key(name) + ":line", "0", "-1", "WITHSCORES"});
  for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
    out["w:" + all.elements[i].str] = all.elements[i + 1].str;
  }
  return out;
}

// The lock "fifo" held on `servers` (its token), and `n` waiters queued
// behind it in order, each appending its number to `log` when it gets in.
struct NumberedLine {
  std::string token;
  std::vector<std::unique_ptr<Child>> waiters;
};
NumberedLine queue_numbered(const Servers& servers, int n, const std::string& log,
                            const std::vector<std::string>& options) {
  NumberedLine line;
  Result holder = run({"acquire", "--ttl", "60s", "fifo"}, servers.env());
  EXPECT_EQ(holder.status, 0) << holder.err;
  line.token = first_line(holder.out);
  for (int i = 1; i <= n; ++i) {
    std::vector<std::string> args = options;
    for (const char* word : {"exec", "--wait", "60s", "fifo", "-c"}) {
      args.push_back(word);
    }
    args.push_back("echo " + std::to_string(i) + " >> " + log);
    line.waiters.push_back(queue_up_on(servers, "fifo", args));
  }
  return line;
}

void expect_all_ran(NumberedLine& line) {
  for (auto& w : line.waiters) {
    Result r = w->wait(Seconds(30));
    EXPECT_EQ(r.status, 0) << r.err;
  }
}

}  // namespace

TEST(Fair, SixWaitersGetTheLockInTheOrderTheyQueued) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  const std::string log = dir.path() + "/order";
  Result holder = run({"acquire", "--ttl", "60s", "fifo"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  std::vector<std::unique_ptr<Child>> waiters;
  for (int i = 1; i <= 6; ++i) {
    waiters.push_back(queue_up(
        redis, "fifo", {"exec", "--wait", "60s", "fifo", "-c", "echo " + std::to_string(i) + " >> " + log}, env));
  }
  ASSERT_EQ(run({"release", "--token", first_line(holder.out), "fifo"}, env).status, 0);
  for (auto& w : waiters) {
    Result r = w->wait(Seconds(30));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(words_of(log), "1 2 3 4 5 6");
  EXPECT_TRUE(line_gone(redis, "fifo")) << "nothing of the line outlives its last member";
}

namespace {

// `job` held for a minute (by `token`), with two waiters in line behind it.
struct HeldWithTwoInLine {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  std::string token;
  std::unique_ptr<Child> first, second;

  HeldWithTwoInLine() {
    Result holder = run({"acquire", "--ttl", "60s", "job"}, env);
    EXPECT_EQ(holder.status, 0) << holder.err;
    token = first_line(holder.out);
    first = queue_up(redis, "job", {"acquire", "--wait", "60s", "job"}, env);
    second = queue_up(redis, "job", {"acquire", "--wait", "60s", "job"}, env);
  }
};

}  // namespace

TEST(Fair, AKilledWaiterHoldsUpTheLineForAtMostItsLease) {
  HeldWithTwoInLine f;
  f.first->signal(SIGKILL);
  (void)f.first->wait();
  const double released = now_seconds();
  ASSERT_EQ(run({"release", "--token", f.token, "job"}, f.env).status, 0);
  Result r = f.second->wait(Seconds(20));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(now_seconds() - released, 3.5) << "the dead waiter's place lapses within its heartbeat lease";
}

TEST(Fair, AWaiterWhoseWaitEndsLeavesTheLineAtOnce) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  ASSERT_EQ(run({"acquire", "--ttl", "60s", "job"}, env).status, 0);
  auto w = queue_up(redis, "job", {"acquire", "--wait", "1s", "job"}, env);
  Result r = w->wait();
  EXPECT_EQ(r.status, 75) << r.err;
  EXPECT_TRUE(line_gone(redis, "job"));
}

TEST(Fair, AStoppedWaiterKeepsNewcomersOutUntilItsLeaseLapsesThenQueuesAgainAtTheEnd) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "60s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  auto frozen = queue_up(redis, "job", {"acquire", "--wait", "60s", "--ttl", "60s", "job"}, env);
  frozen->signal(SIGSTOP);
  ASSERT_EQ(run({"release", "--token", first_line(holder.out), "job"}, env).status, 0);
  // Free, but someone is in line: a one-try newcomer is refused...
  Result refused = run({"acquire", "job"}, env);
  EXPECT_EQ(refused.status, 75) << refused.err;
  EXPECT_NE(refused.err.find("waiting in line"), std::string::npos) << refused.err;
  // ...unless it races on purpose.
  Result racer = run({"acquire", "--unfair", "--ttl", "60s", "job"}, env);
  EXPECT_EQ(racer.status, 0) << racer.err;
  ASSERT_EQ(run({"release", "--token", first_line(racer.out), "job"}, env).status, 0);
  // Once its heartbeat lapses the frozen waiter is overtaken.
  Result later = run({"acquire", "--wait", "10s", "--ttl", "60s", "job"}, env);
  EXPECT_EQ(later.status, 0) << later.err;
  EXPECT_LT(later.seconds, 4.0);
  // Thawed, it takes a new place at the end and gets the lock when it frees.
  frozen->signal(SIGCONT);
  ASSERT_TRUE(eventually([&] { return in_line(redis, "job") == 1 || !frozen->alive(); }, Seconds(15)))
      << "the thawed waiter did not queue again";
  ASSERT_TRUE(frozen->alive()) << frozen->wait().err;
  ASSERT_EQ(run({"release", "--token", first_line(later.out), "job"}, env).status, 0);
  Result thawed = frozen->wait(Seconds(10));
  EXPECT_EQ(thawed.status, 0) << thawed.err;
  EXPECT_TRUE(line_gone(redis, "job"));
}

TEST(Fair, ASemaphoreHandsOutItsPlacesFirstComeFirstServed) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}};
  const std::string log = dir.path() + "/order";
  Result a = run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env);
  Result b = run({"acquire", "--limit", "2", "--ttl", "60s", "pool"}, env);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  std::vector<std::unique_ptr<Child>> waiters;
  for (int i = 1; i <= 4; ++i) {
    waiters.push_back(queue_up(
        redis, "pool",
        {"exec", "--limit", "2", "--wait", "60s", "pool", "-c", "echo " + std::to_string(i) + " >> " + log}, env));
  }
  ASSERT_EQ(run({"release", "--token", first_line(a.out), "pool"}, env).status, 0);
  for (auto& w : waiters) {
    Result r = w->wait(Seconds(30));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(words_of(log), "1 2 3 4");
  EXPECT_EQ(run({"release", "--token", first_line(b.out), "pool"}, env).status, 0);
  EXPECT_TRUE(line_gone(redis, "pool"));
}

TEST(Fair, AWriterAmongAStreamOfOverlappingReadersGetsInWithinAboutOneReadersHold) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  std::vector<std::unique_ptr<Child>> readers;
  auto reader = [&] {
    readers.push_back(std::make_unique<Child>(
        std::vector<std::string>{"exec", "--shared", "--wait", "60s", "rw", "--", "sleep", "1"}, env));
  };
  reader();
  ASSERT_TRUE(eventually([&] { return redis.cmd({"EXISTS", "redlock:{rw}"}).integer == 1; }, Seconds(10)));
  // Readers keep coming, each overlapping the last, for longer than the test.
  std::atomic<bool> stop{false};
  std::thread stream([&] {
    while (!stop) {
      reader();
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  Result writer = run({"exec", "--wait", "30s", "rw", "--", "true"}, env);
  stop = true;
  stream.join();
  EXPECT_EQ(writer.status, 0) << writer.err;
  EXPECT_LT(writer.seconds, 2.5) << "the writer waits for the readers already in, not for the ones after it";
  for (auto& r : readers) {
    Result rr = r->wait(Seconds(60));
    EXPECT_EQ(rr.status, 0) << rr.err;
  }
  EXPECT_TRUE(line_gone(redis, "rw"));
}

TEST(Fair, ReadersQueuedBehindAWriterAreLetInTogetherWhenItLeaves) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result w = run({"acquire", "--ttl", "60s", "rw"}, env);
  ASSERT_EQ(w.status, 0) << w.err;
  std::vector<std::unique_ptr<Child>> readers;
  for (int i = 0; i < 3; ++i) {
    readers.push_back(queue_up(redis, "rw", {"exec", "--shared", "--wait", "60s", "rw", "--", "sleep", "1.5"}, env));
  }
  const double released = now_seconds();
  ASSERT_EQ(run({"release", "--token", first_line(w.out), "rw"}, env).status, 0);
  for (auto& r : readers) {
    Result rr = r->wait(Seconds(30));
    EXPECT_EQ(rr.status, 0) << rr.err;
  }
  EXPECT_LT(now_seconds() - released, 3.0) << "three readers of 1.5 s each ran together, not one after another";
}

// Re-entry by the holder's token is checked before the line: the holder
// (and an exec nested in its command) never waits behind its own waiters.
TEST(Fair, ReentryByTheHoldersTokenNeverWaitsBehindTheLine) {
  RedisServer redis;
  Env env{{"REDLOCK_URL", redis.url()}};
  Result holder = run({"acquire", "--ttl", "60s", "job"}, env);
  ASSERT_EQ(holder.status, 0) << holder.err;
  const std::string token = first_line(holder.out);
  auto waiter = queue_up(redis, "job", {"acquire", "--wait", "30s", "job"}, env);
  Result again = run({"acquire", "--json", "--token", token, "job"}, env);
  EXPECT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.out.find("\"count\":2"), std::string::npos) << again.out;
  Env nested = env;
  nested["REDLOCK_TOKEN"] = token;
  Result inner = run({"exec", "job", "--", "true"}, nested);
  EXPECT_EQ(inner.status, 0) << inner.err;
  EXPECT_LT(inner.seconds, 5.0);
  EXPECT_TRUE(waiter->alive()) << "the waiter got the lock while its holder re-entered";
  EXPECT_EQ(in_line(redis, "job"), 1);
  waiter->signal(SIGTERM);
  (void)waiter->wait(Seconds(5));
}

// exec's end hands the lock to the next in line as a release does: its
// message names that waiter, so the others sleep on instead of all waking
// to find the lock taken again.
TEST(Fair, ExecsEndWakesOnlyTheNextInLine) {
  RedisServer redis;
  TempDir dir;
  Env env{{"REDLOCK_URL", redis.url()}, {"D", dir.path()}};
  Child holder({"exec", "job", "--", "sh", "-c", "touch \"$D/held\"; while [ ! -e \"$D/go\" ]; do sleep 0.02; done"},
               env);
  ASSERT_GE(seconds_until_file(dir.path() + "/held", Seconds(10)), 0) << holder.err_so_far();
  auto first = queue_up(redis, "job", {"exec", "--wait", "30s", "job", "--", "true"}, env);
  auto second = queue_up(redis, "job", {"exec", "--wait", "30s", "job", "--", "true"}, env);
  Child listener({"-c", "exec redis-cli -p " + std::to_string(redis.port()) + " subscribe 'redlock:{job}:released'"},
                 env, "sh");
  ASSERT_TRUE(await_waiters(redis, "job", 3, Seconds(10))) << "the listener never subscribed";
  write_file(dir.path() + "/go", "");
  EXPECT_EQ(holder.wait(Seconds(10)).status, 0);
  EXPECT_EQ(first->wait(Seconds(10)).status, 0);
  EXPECT_EQ(second->wait(Seconds(10)).status, 0);
  // redis-cli prints each message as three lines: message, the channel, the text.
  ASSERT_TRUE(eventually([&] { return listener.out_so_far().find("\nreleased") != std::string::npos; }, Seconds(5)));
  listener.signal(SIGTERM);
  const std::string heard = listener.wait(Seconds(5)).out;
  const size_t at = heard.find("\nreleased") + 1;
  const std::string message = heard.substr(at, heard.find('\n', at) - at);
  EXPECT_EQ(message.rfind("released ", 0), 0u) << "exec's end woke every waiter: " << heard;
  EXPECT_EQ(message.find(' ', 9), std::string::npos) << "one waiter is next, not several: " << message;
}

namespace {

// How often `pid` has gone to sleep and been woken (voluntary context switches).
long long wakeups(pid_t pid) {
  const std::string status = read_file("/proc/" + std::to_string(pid) + "/status");
  const size_t at = status.find("voluntary_ctxt_switches:");
  return at == std::string::npos ? -1 : std::stoll(status.substr(at + 24));
}

}  // namespace

// A release wakes the waiter it names and no other process: a waiter
// further back sleeps through releases that are not for it (only its
// heartbeat wakes it, twice a second), yet every waiter is still seen on
// the lock's channel.
TEST(Fair, AWaiterSleepsThroughReleasesThatNameAnother) {
  HeldWithTwoInLine f;
  auto& head = f.first;
  auto& back = f.second;
  const Env& env = f.env;
  Child listener({"-c", "exec redis-cli -p " + std::to_string(f.redis.port()) + " subscribe 'redlock:{job}:released'"},
                 env, "sh");
  ASSERT_TRUE(await_waiters(f.redis, "job", 3, Seconds(10))) << "every waiter and the listener are on the channel";
  // The head, frozen, stays the head for its lease (2 s): a release now
  // names it, and only it. Its message is sent again and again below, as
  // many releases would send it, faster than a loaded machine could start
  // a redlock per release. Its last heartbeat may be half a second old:
  // the messages below stay within the first 1.4 seconds.
  head->signal(SIGSTOP);
  const auto stopped = std::chrono::steady_clock::now();
  const auto since_stop = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count();
  };
  ASSERT_EQ(run({"release", "--token", f.token, "job"}, env).status, 0);
  // redis-cli prints each message as three lines: message, the channel, the text.
  ASSERT_TRUE(eventually([&] { return listener.out_so_far().find("\nreleased ") != std::string::npos; }, Seconds(5)));
  const std::string heard = listener.out_so_far();
  const size_t at = heard.find("\nreleased ") + 1;
  const std::string message = heard.substr(at, heard.find('\n', at) - at);
  ASSERT_EQ(message.find(' ', 9), std::string::npos) << "the release names one waiter: " << message;
  const long long before = wakeups(back->pid());
  const double start = since_stop();
  int releases = 0;
  while (releases < 30 && since_stop() < 1.4) {
    ASSERT_EQ(f.redis.cmd({"PUBLISH", "redlock:{job}:released", message}).integer, 3);
    ++releases;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double seconds = since_stop() - start;
  const long long woken = wakeups(back->pid()) - before;
  // A heartbeat (a try: the wake, the reply) is a few switches, one every
  // half second; each release would be one more.
  ASSERT_GE(releases, 5) << "too slow to tell the heartbeats from the releases";
  EXPECT_LT(woken, 4 * (seconds / 0.5 + 1) + 2)
      << releases << " releases naming the head woke the waiter behind it " << woken << " times";
  listener.signal(SIGTERM);
  head->signal(SIGKILL);
  back->signal(SIGTERM);
  (void)back->wait();
}

TEST(Fair, OverThreeServersWaitersGetTheLockInTheOrderTheyQueued) {
  // Redlock: every server keeps a line, and a waiter keeps one ticket on all
  // of them, so the head of every line is the same waiter.
  Servers servers(3);
  TempDir dir;
  const std::string log = dir.path() + "/order";
  NumberedLine line = queue_numbered(servers, 5, log, {});
  // After a heartbeat every line gives each waiter the same ticket.
  EXPECT_TRUE(eventually(
      [&] {
        const auto first = tickets_on(*servers.all[0], "fifo");
        return first.size() == 5 && tickets_on(*servers.all[1], "fifo") == first &&
               tickets_on(*servers.all[2], "fifo") == first;
      },
      Seconds(5)))
      << "the servers' lines disagree";
  ASSERT_EQ(run({"release", "--token", line.token, "fifo"}, servers.env()).status, 0);
  expect_all_ran(line);
  EXPECT_EQ(words_of(log), "1 2 3 4 5");
  for (const auto& s : servers.all) {
    EXPECT_TRUE(line_gone(*s, "fifo")) << "nothing of the line outlives its last member";
  }
}

TEST(Fair, OverThreeServersTheLineMovesOnWithOneServerStopped) {
  Servers servers(3);
  TempDir dir;
  const std::string log = dir.path() + "/order";
  NumberedLine line = queue_numbered(servers, 3, log, {"--redis-timeout", "200ms"});
  servers.all[2]->pause();
  ASSERT_EQ(run({"--redis-timeout", "200ms", "release", "--token", line.token, "fifo"}, servers.env()).status, 0);
  expect_all_ran(line);
  servers.all[2]->resume();
  EXPECT_EQ(words_of(log), "1 2 3");
}

TEST(Fair, OverThreeServersAGrantThatIsOutvotedKeepsTheWaitersPlace) {
  // The first server restarted empty: the lock is free there, held on the
  // other two. Each try wins the first server and is outvoted and undone;
  // the waiters stay in its line all the while, in their order, so that a
  // waiter whose grant there was undone is not overtaken on it.
  Servers servers(3);
  TempDir dir;
  const std::string log = dir.path() + "/order";
  Result holder = run({"acquire", "--ttl", "60s", "fifo"}, servers.env());
  ASSERT_EQ(holder.status, 0) << holder.err;
  servers.all[0]->stop();
  servers.all[0]->start();
  std::vector<std::unique_ptr<Child>> waiters;
  for (int i = 1; i <= 2; ++i) {
    waiters.push_back(queue_up_on(servers, "fifo",
                                  {"exec", "--wait", "60s", "fifo", "-c", "echo " + std::to_string(i) + " >> " + log}));
  }
  for (int sample = 0; sample < 15; ++sample) {  // three heartbeats
    EXPECT_EQ(in_line(*servers.all[0], "fifo"), 2) << "a waiter left the free server's line";
    sleep_for(0.1);
  }
  ASSERT_EQ(run({"release", "--token", first_line(holder.out), "fifo"}, servers.env()).status, 0);
  for (auto& w : waiters) {
    Result r = w->wait(Seconds(30));
    EXPECT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(words_of(log), "1 2");
}
