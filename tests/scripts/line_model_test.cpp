// The line of waiters checked against a model (line_model.hpp). Random
// sequences of what waiters and holders do (join the line or beat, stop
// beating, crash together, leave, take the lock without waiting, re-enter,
// renew, release, break, server time moving; readers and writers) run
// through the real scripts on a real redis-server, and every reply, every
// message published and what status would read afterwards must be what the
// model says; fences must increase, and the first k_near places of the line
// must never have a lease longer than the near one.
//
// rapidcheck shrinks a failing sequence and prints it as steps that paste
// into a regression test below (play()). RC_PARAMS sets its parameters;
// main() below makes the sequences short by default, for the fast tier.

#include "line_model.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "server.hpp"
#include "table.hpp"

namespace redlock::test {
namespace {

using lock::ScriptName;
using namespace line_model;
using namespace std::chrono_literals;

// The long leases of the first k_near places last k_near_lease: a sequence
// that took longer than this (a machine too busy) is discarded.
constexpr auto k_sequence_most = 1500ms;

// ---- The system under test: the scripts on the server ----

enum class Verdict { k_agrees, k_differs, k_too_slow };

class Sut {
 public:
  Sut() : m_server(script_server()) {
    m_server.reset();
    (void)m_server.published();
    m_start = std::chrono::steady_clock::now();
  }

  // Plays step s from state `before` (which the model allows); what did
  // not come back as the model says is in why().
  Verdict play(const Model& before, const Step& s) {
    m_why.clear();
    Model after = before;
    const Play p = next(after, s);
    const auto start = std::chrono::steady_clock::now();
    if (start - m_start > k_sequence_most) {
      return Verdict::k_too_slow;
    }
    std::vector<std::string> said;
    for (const auto& e : p.calls) {
      Value reply = m_server.eval(e.call.first, e.call.second);
      if (s.op == Op::k_break && reply.items.size() == 5) {
        // Readers come back in no particular order.
        auto& list = reply.items[4].items;
        std::sort(list.begin(), list.end(), [](const Value& x, const Value& y) {
          return !x.items.empty() && !y.items.empty() && x.items[0].text < y.items[0].text;
        });
      }
      check_reply(e, reply);
      said.insert(said.end(), e.published.begin(), e.published.end());
    }
    // The calls of a crash are certain of each other's leases only while
    // they are well within them.
    if (p.calls.size() > 1 && std::chrono::steady_clock::now() - start > k_crash_lease / 2) {
      return Verdict::k_too_slow;
    }
    std::this_thread::sleep_for(p.pause);
    check_published(said);
    check_state(after);
    if (std::chrono::steady_clock::now() - m_start > k_sequence_most) {
      return Verdict::k_too_slow;
    }
    if (m_why.empty()) {
      return Verdict::k_agrees;
    }
    m_why = code_of(s) + " from " + describe(before) + ":" + m_why;
    return Verdict::k_differs;
  }

  [[nodiscard]] const std::string& why() const { return m_why; }

 private:
  void differs(const std::string& what) { m_why += "\n  " + what; }

  void check_reply(const Expect& e, const Value& reply) {
    const std::string text = show(reply);
    if (!matches(e.reply, text)) {
      differs("reply " + text + ", the model says " + e.reply);
      return;
    }
    const auto number = [&](size_t i) { return reply.items.at(i).integer; };
    if (!e.granted.empty()) {
      const long long fence = number(2);
      if (fence <= m_last_fence) {
        differs("fence " + std::to_string(fence) + " after " + std::to_string(m_last_fence));
      }
      m_last_fence = std::max(m_last_fence, fence);
      m_fences[e.granted] = fence;
    }
    if (!e.reentered.empty() && number(2) != m_fences[e.reentered]) {
      differs("re-entered with fence " + std::to_string(number(2)) + ", not its own " +
              std::to_string(m_fences[e.reentered]));
    }
    if (e.held) {
      const long long left = number(1);
      if (*e.held ? (left <= 0 || left > k_long.count()) : left != 0) {
        differs("a TTL left of " + std::to_string(left) + (*e.held ? " on a held lock" : " on a free lock"));
      }
    }
    if (e.waiter >= 0) {
      const long long ticket = number(6);
      if (e.new_entry) {
        for (int o : e.behind) {
          if (m_tickets.count(o) && ticket <= m_tickets[o]) {
            differs("ticket " + std::to_string(ticket) + " of a newcomer, not after " + waiter_id(o) + "'s " +
                    std::to_string(m_tickets[o]));
          }
        }
      } else if (ticket != m_tickets[e.waiter]) {
        differs("ticket " + std::to_string(ticket) + " of a waiter that had " + std::to_string(m_tickets[e.waiter]));
      }
      m_tickets[e.waiter] = ticket;
    }
  }

  void check_published(std::vector<std::string> said) {
    std::vector<std::string> heard = m_server.published();
    // A break also tells each broken run's exec on the run's own channel
    // (<prefix>{NAME}:revoke:<run>): that is the holders', not the line's,
    // and tests/scripts/marks_test.cpp checks it.
    std::erase_if(heard, [](const std::string& m) { return m.find("}:revoke:") != std::string::npos; });
    std::sort(heard.begin(), heard.end());
    std::sort(said.begin(), said.end());
    if (heard != said) {
      differs("published [" + joined(heard) + "], the model says [" + joined(said) + "]");
    }
  }

  // What status reads (inspect-4n.lua, line-3n.lua) is what the model holds,
  // and the first k_near places have near leases.
  void check_state(const Model& m) {
    std::map<std::string, long long> holders;
    for (const auto& h : m.holders) {
      holders[h.token] = h.count;
    }
    const Value locks =
        m_server.eval(ScriptName::k_inspect, lock::to_args(std::vector<lock::Keys>{keys()}, lock::InspectArgs{}));
    if (locks.items.size() != 2) {
      differs("inspect answered " + show(locks));
      return;
    }
    const Value& lock = locks.items[1];
    if (lock.items.size() != 7 || lock.items[0].text != (holders.empty() ? "none" : "hash")) {
      differs("the lock reads " + show(lock) + ", the model says " + (holders.empty() ? "free" : "held"));
      return;
    }
    const long long now = std::stoll(lock.items[1].text);
    std::map<std::string, long long> seen;
    const auto& fields = lock.items[4].items;
    std::map<std::string, std::string> field;
    for (size_t i = 0; i + 1 < fields.size(); i += 2) {
      field[fields[i].text] = fields[i + 1].text;
    }
    for (const auto& [name, value] : field) {
      if (name.rfind("h:", 0) == 0) {
        const auto v = nlohmann::json::parse(value);
        if (v.at("expiry").get<long long>() > now) {
          seen[name.substr(2)] = v.at("count").get<long long>();
        }
      }
    }
    if (!field["token"].empty()) {
      seen[field["token"]] = std::stoll(field["count"]);
    }
    if (seen != holders) {
      differs("the lock holds " + show(lock) + ", the model says " + describe(m));
    }
    if (!holders.empty() && lock.items[3].integer <= 0) {
      differs("a held lock without a TTL: " + show(lock));
    }

    std::vector<std::string> live;
    for (const auto& w : m.line) {
      if (!w.dead) {
        live.push_back(waiter_id(w.client));
      }
    }
    const Value lines =
        m_server.eval(ScriptName::k_line, lock::to_args(std::vector<lock::Keys>{keys()}, lock::LineArgs{k_clients}));
    const Value line = lines.items.size() == 2 ? lines.items[1] : lines;
    std::vector<std::string> listed;
    if (line.items.size() == 4) {
      const auto& entries = line.items[2].items;
      for (size_t i = 2; i + 1 < entries.size(); i += 2) {
        listed.push_back(entries[i].text.substr(2));
      }
    }
    if (listed != live || line.items.size() != 4 || line.items[3].integer != static_cast<long long>(live.size())) {
      differs("the line reads " + show(line) + ", the model says " + describe(m));
    }

    // A lease read after the script that set it: now is at least its now.
    const long long later = m_server.now_ms();
    for (const auto& id : m_server.cmd({"ZRANGE", keys().line, "0", std::to_string(k_near - 1)}).items) {
      const Value end = m_server.cmd({"ZSCORE", keys().beats, id.text});
      if (end.type == Value::Type::k_string && std::stoll(end.text) > later + k_near_lease) {
        differs(id.text + " is within " + std::to_string(k_near) + " places of the head with a lease of " +
                std::to_string(std::stoll(end.text) - later) + " ms");
      }
    }
  }

  static std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
      out += (out.empty() ? "" : ", ") + s;
    }
    return out;
  }

  ScriptServer& m_server;
  std::chrono::steady_clock::time_point m_start;
  std::string m_why;
  long long m_last_fence = 0;
  std::map<std::string, long long> m_fences;  // token -> the fence it got
  std::map<int, long long> m_tickets;         // client -> its ticket in line
};

// ---- rapidcheck ----

using Command = rc::state::Command<Model, Sut>;

class Act : public Command {
 public:
  explicit Act(Step step) : m_step(step) {}
  void checkPreconditions(const Model& m) const override { RC_PRE(allowed(m, m_step)); }
  void apply(Model& m) const override { (void)next(m, m_step); }
  void run(const Model& m, Sut& sut) const override {
    switch (sut.play(m, m_step)) {
      case Verdict::k_agrees:
        return;
      case Verdict::k_too_slow:
        RC_DISCARD("the sequence took longer than the near lease: the machine is too busy to keep the model's time");
        return;
      case Verdict::k_differs:
        RC_FAIL(sut.why());
        return;
    }
  }
  void show(std::ostream& os) const override { os << code_of(m_step) << ","; }

 private:
  Step m_step;
};

// A step that the model allows, mostly: clients are picked among those
// that can take it (a waiter beats, an idle client joins, a holder
// releases), so that lines grow past k_near and holders come and go.
rc::Gen<std::shared_ptr<const Command>> any_step(const Model& model) {
  return rc::gen::exec([m = model]() -> std::shared_ptr<const Command> {
    std::vector<int> idle, waiting, holding, any;
    int waiting_set = 0;
    for (int c = 0; c < k_clients; ++c) {
      any.push_back(c);
      if (waits(m, c)) {
        waiting.push_back(c);
        waiting_set |= 1 << c;
      } else if (!holds(m, c)) {
        idle.push_back(c);
      }
      if (holds(m, c) || m.lapsed.count(c) > 0) {
        holding.push_back(c);
      }
    }
    const auto pick = [&any](const std::vector<int>& among) {
      return *rc::gen::elementOf(among.empty() ? any : among);
    };
    const auto mode_of = [&m](int c, Mode otherwise) { return waits(m, c) ? m.line[index_of(m, c)].mode : otherwise; };
    const Mode mode = *rc::gen::element(k_writer, k_reader);
    Step s{*rc::gen::weightedElement<Op>({{10, Op::k_join},
                                          {2, Op::k_stop},
                                          {2, Op::k_crash},
                                          {1, Op::k_leave},
                                          {2, Op::k_take},
                                          {1, Op::k_brief},
                                          {2, Op::k_reenter},
                                          {1, Op::k_renew},
                                          {3, Op::k_release},
                                          {1, Op::k_release_all},
                                          {1, Op::k_break},
                                          {1, Op::k_tick}}),
           0, mode};
    switch (s.op) {
      case Op::k_join:
        // A newcomer, or a waiter's beat.
        s.client = *rc::gen::weightedElement<int>({{3, 0}, {1, 1}}) == 0 ? pick(idle) : pick(waiting);
        s.mode = mode_of(s.client, mode);
        break;
      case Op::k_stop:
      case Op::k_leave:
        s.client = pick(waiting);
        s.mode = mode_of(s.client, mode);
        break;
      case Op::k_crash:
        s.client = (*rc::gen::inRange(1, 1 << k_clients) & waiting_set);
        s.client = s.client ? s.client : waiting_set;
        break;
      case Op::k_take:
      case Op::k_brief:
        s.client = pick(idle);
        break;
      case Op::k_reenter:
      case Op::k_renew:
      case Op::k_release:
      case Op::k_release_all:
        s.client = pick(holding);
        break;
      case Op::k_break:
      case Op::k_tick:
        break;
    }
    return std::make_shared<const Act>(s);
  });
}

RC_GTEST_PROP(LineModel, EveryReplyIsTheModels, ()) {
  Sut sut;
  rc::state::check(Model{}, sut, any_step);
}

// ---- Fixed sequences: found by the property (as it shrank them), or
// written to show a rule ----

// Plays `steps` from an empty server, as the property does.
void play(const std::vector<Step>& steps) {
  Sut sut;
  Model m;
  for (const auto& s : steps) {
    ASSERT_TRUE(allowed(m, s)) << code_of(s) << " is not a step the model allows from " << describe(m);
    const Verdict v = sut.play(m, s);
    if (v == Verdict::k_too_slow) {
      GTEST_SKIP() << "the sequence took longer than the near lease: the machine is too busy";
    }
    ASSERT_TRUE(v == Verdict::k_agrees) << sut.why();
    (void)next(m, s);
  }
}

TEST(LineModel, WritersGoInTurnAndReadersTogether) {
  play({take(0), join(1), join(2, k_reader), join(3, k_reader), join(4), release(0), join(1), join(2, k_reader),
        release(1), join(2, k_reader), join(3, k_reader), release(2), release(3), join(4)});
}

TEST(LineModel, EveryKindOfStepAgrees) {
  play({take(0, k_reader), reenter(0, k_reader), reenter(0), join(1), brief(2, k_reader), renew(0), release(0),
        release_all(0), join(1), release(1), leave(1), tick(), renew(0), brief(3), release(3), join(4), break_lock(),
        join(4)});
}

// Found by the property, as it shrank it: the release pruned W3, which
// brought W0 within k_near of the head with the far lease it had asked for
// at place 5, and neither cut it nor told it (a dead W0 would have held the
// line up to its far lease, not the near one). release-6.lua now moves the
// line as acquire and leave do.
TEST(LineModel, AReleaseThatPrunesCutsTheLeaseOfOneThatComesNear) {
  play({join(2), join(4, k_reader), join(3, k_reader), join(6, k_reader), join(5), join(0, k_reader), stop(3, k_reader),
        release(2)});
}

// The same in break-6.lua, found by the property too.
TEST(LineModel, ABreakThatPrunesCutsTheLeaseOfOneThatComesNear) {
  play({join(4, k_reader), join(0), join(1, k_reader), join(2), join(5, k_reader), join(3), stop(0), break_lock()});
}

// Several waiters that die together, pruned at once by a break.
TEST(LineModel, ABreakAfterACrashCutsTheLeasesOfThoseThatComeNear) {
  play({take(0), join(1), join(2), join(3), join(4), join(5), join(6), crash({1, 2, 3}), break_lock()});
}

TEST(LineModel, AStoppedHeadIsSkipped) {
  play({take(0), join(1), join(2), stop(1), release(0), join(2)});
}

}  // namespace
}  // namespace redlock::test

// Short sequences unless RC_PARAMS says otherwise: the fast tier runs this.
int main(int argc, char** argv) {
  const char* given = std::getenv("RC_PARAMS");
  std::string params = given ? given : "";
  if (params.find("max_success") == std::string::npos) {
    params += " max_success=100";
  }
  if (params.find("max_size") == std::string::npos) {
    params += " max_size=50";
  }
  setenv("RC_PARAMS", params.c_str(), 1);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
