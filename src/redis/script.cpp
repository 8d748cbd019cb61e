#include "redis/script.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "redis/cluster.hpp"
#include "redis/fanout.hpp"
#include "util/log.hpp"
#include "util/number.hpp"

namespace redlock::redis {
namespace {

// A Cluster that keeps redirecting more often than this is misconfigured.
constexpr int k_max_redirects = 5;

// The least a server still out gets once the round is decided without it
// (see Run::go): a server that answers a few milliseconds after the others
// (a loaded machine, a longer route) is not a silent one.
constexpr Millis k_straggler_grace{50};

// One server's progress through a run.
struct Pending {
  size_t index = 0;
  bool by_body = false;             // send EVAL with the body
  std::unique_ptr<Connection> ask;  // an ASK's target, for the next try only
  int redirects = 0;
  std::optional<TimePoint> resend_at;  // after TRYAGAIN: when it is asked again
  Millis backoff{5};                   // the next TRYAGAIN's wait
};

enum class Step { k_done, k_again, k_tryagain };

// An error reply becomes a failure with its status and a line for people:
// `where` is the server, `script` the script's name.
void describe_error(ScriptAnswer& a, const std::string& where, std::string_view script) {
  if (a.failure || !a.reply.is_error()) {
    return;
  }
  const std::string e = mask_secrets(a.reply.str);
  const ExitStatus status = classify_error(e);
  if (e.rfind("NOAUTH", 0) == 0 || e.find("unauthenticated") != std::string::npos) {
    a.failure = Failure{status, fmt::format("Redis at {} requires a password: give it with --password-file FILE, "
                                            "$REDLOCK_PASSWORD or $REDLOCK_PASSWORD_FILE",
                                            where)};
  } else if (redirect_of(e)) {
    a.failure = Failure{ExitStatus::k_protocol, fmt::format("Redis at {} kept redirecting {}: {}", where, script, e)};
  } else {
    a.failure = Failure{status, fmt::format("Redis at {} answered {}: {}{}", where, script, e, error_hint(e)), true};
  }
}

class Run {
 public:
  Run(std::span<std::unique_ptr<Connection>> conns, const ScriptCall& call)
      : m_conns(conns), m_call(call), m_answers(conns.size()) {}

  std::vector<ScriptAnswer> go(const std::vector<bool>& targets) {
    std::vector<Pending> out;  // the servers whose answer is not in
    m_in.assign(m_conns.size(), false);
    for (size_t i = 0; i < m_conns.size(); ++i) {
      if (targets.empty() || targets[i]) {
        Pending p;
        p.index = i;
        p.by_body = !m_call.eval_body.empty() && m_call.eval_body[i];
        out.push_back(std::move(p));
      } else {
        m_answers[i].failure = Failure{ExitStatus::k_unavailable, "not asked"};
        m_in[i] = true;
      }
    }
    const TimePoint start = Clock::now();
    const TimePoint deadline = start + m_call.timeouts.command;
    for (auto& p : out) {
      send(p);
    }
    // Once the answers in decide the round, the servers still out get a
    // moment more: as long again as the round has taken, at least
    // k_straggler_grace (never past their own timeouts). A server just
    // behind the others then still counts (its vote, its busy answer, its
    // connection kept for the next round), while a silent one costs the
    // round that moment, not its timeout.
    std::optional<TimePoint> given_up_at;
    while (!out.empty()) {
      if (!wait(out, given_up_at)) {
        break;
      }
      step(out, deadline);
      const TimePoint now = Clock::now();
      if (!out.empty() && !given_up_at && m_call.decided && m_call.decided(m_answers, m_in)) {
        given_up_at = now + std::max<Clock::duration>(now - start, k_straggler_grace);
      }
      if (!out.empty() && given_up_at && now >= *given_up_at) {
        abandon(out);
      }
    }
    return std::move(m_answers);
  }

 private:
  Connection& target(Pending& p) { return p.ask ? *p.ask : *m_conns[p.index]; }

  // Server i's answer is in: its error reply, if it is one, a failure.
  void take_in(size_t i) {
    m_in[i] = true;
    describe_error(m_answers[i], m_conns[i]->endpoint().display(), m_call.script->name);
  }

  // Waits until some server's reply is in (or its connection failed), the
  // first TRYAGAIN is due, or `until` passes. False when cancelled: every
  // server still out has then failed (the connections flushed what was
  // queued, as run_all does), and the run is over.
  bool wait(std::vector<Pending>& out, std::optional<TimePoint> until) {
    std::vector<Connection*> flying;
    std::optional<TimePoint> wake = until;
    for (auto& p : out) {
      if (p.resend_at) {
        wake = wake ? std::min(*wake, *p.resend_at) : *p.resend_at;
      } else {
        flying.push_back(&target(p));
      }
    }
    const auto any_in = [&flying] {
      return std::any_of(flying.begin(), flying.end(), [](const Connection* c) { return c->settled(); });
    };
    const bool cancelled = flying.empty() ? !m_call.cancel.sleep_until(*wake)
                                          : run_until(flying, any_in, wake, m_call.cancel) == RunResult::k_cancelled;
    if (!cancelled) {
      return true;
    }
    for (auto& p : out) {
      // Failed by the cancellation, unless its reply was in (one that asks
      // for another try is not asked again)
      if (p.resend_at || collect(p) != Step::k_done) {
        m_answers[p.index].failure = Failure{
            ExitStatus::k_unavailable, fmt::format("gave up waiting for Redis at {}", target(p).endpoint().display())};
      }
      take_in(p.index);
    }
    out.clear();
    return false;
  }

  // Takes in the answers that came, and asks again the servers whose
  // answer asks for it (at once, or after a TRYAGAIN's backoff).
  void step(std::vector<Pending>& out, TimePoint deadline) {
    std::vector<Pending> still;
    const TimePoint now = Clock::now();
    for (auto& p : out) {
      if (p.resend_at) {
        if (*p.resend_at <= now) {
          p.resend_at.reset();
          send(p);
        }
        still.push_back(std::move(p));
        continue;
      }
      if (!target(p).settled()) {
        still.push_back(std::move(p));
        continue;
      }
      switch (collect(p)) {
        case Step::k_done:
          take_in(p.index);
          break;
        case Step::k_again:
          send(p);
          still.push_back(std::move(p));
          break;
        case Step::k_tryagain:
          if (!m_call.retry_tryagain || now + p.backoff >= deadline) {
            m_answers[p.index].failure = Failure{
                ExitStatus::k_unavailable,
                fmt::format("Redis Cluster at {} kept answering TRYAGAIN to {} for {}: the lock's slot is moving "
                            "between nodes",
                            m_conns[p.index]->endpoint().display(), m_call.script->name,
                            format_duration(m_call.timeouts.command)),
                true};  // the node is there: a wait (--wait) waits the migration out
            take_in(p.index);
            break;
          }
          p.resend_at = now + p.backoff;
          p.backoff = std::min(p.backoff * 2, Millis(100));
          still.push_back(std::move(p));
          break;
      }
    }
    out = std::move(still);
  }

  // The round is decided without the servers still out: their requests
  // are given up as on a timeout (Connection::abandon), and whatever they
  // still answer is dropped, never read as the reply to a later command.
  // The next request to them reconnects, within that round's own loop.
  void abandon(std::vector<Pending>& out) {
    for (auto& p : out) {
      Connection& conn = target(p);
      if (!p.resend_at) {
        conn.abandon();  // (one waiting out a TRYAGAIN has nothing in flight)
      }
      conn.reset();
      m_answers[p.index].failure =
          Failure{ExitStatus::k_unavailable, fmt::format("Redis at {} had not answered {} when the round was decided",
                                                         m_conns[p.index]->endpoint().display(), m_call.script->name)};
      log_debug("{}", m_answers[p.index].failure->message);
      m_in[p.index] = true;
    }
    out.clear();
  }

  void send(Pending& p) {
    Connection& conn = target(p);
    if (p.ask) {
      conn.queue({"ASKING"});
    }
    // The body and the arguments are not copied but into the socket's buffer.
    std::vector<std::string_view> argv{p.by_body ? "EVAL" : "EVALSHA",
                                       p.by_body ? m_call.script->body : m_call.script->sha1};
    argv.insert(argv.end(), m_call.args.begin(), m_call.args.end());
    std::string keys;  // numkeys without the optional keys, where it changes
    if (m_call.script->optional_keys > 0 && conn.refuses_optional_keys()) {
      drop_optional_keys(argv, keys);
    }
    conn.queue(std::span<const std::string_view>(argv));
    if (m_call.min_replicas > 0) {
      conn.queue({"WAIT", std::to_string(m_call.min_replicas),
                  std::to_string(std::max<long long>(1, m_call.timeouts.command.count() / 2))});
    }
  }

  // Takes the replies of one server; says whether it must be asked again.
  Step collect(Pending& p) {
    Connection& conn = target(p);
    ScriptAnswer& answer = m_answers[p.index];
    if (conn.failure()) {
      answer.failure = conn.failure();
      conn.reset();
      return Step::k_done;
    }
    std::vector<Reply> replies = conn.take_replies();
    answer.node = peer_address(conn.fd());
    size_t first = 0;
    if (p.ask && !replies.empty() && !replies[0].is_error()) {
      first = 1;  // ASKING's OK
    }
    Reply reply = first < replies.size() ? std::move(replies[first]) : Reply{};
    if (reply.is_error()) {
      const Step step = redirect(p, reply.str);
      if (step != Step::k_done) {
        if (step == Step::k_tryagain) {
          answer.reply = std::move(reply);  // the answer, should no other try follow
        }
        return step;
      }
    }
    p.ask.reset();
    answer.replicas_short =
        m_call.min_replicas > 0 && replies.size() > first + 1 && replies[first + 1].integer < m_call.min_replicas;
    if (answer.replicas_short && replies[first + 1].is_error()) {
      answer.wait_refused = mask_secrets(replies[first + 1].str);
    }
    answer.reply = std::move(reply);
    return Step::k_done;
  }

  // EVALSHA's arguments without the script's optional keys: argv is
  // EVALSHA, the SHA-1, numkeys, the keys, then ARGV.
  // `numkeys` keeps the new count that argv[2] then points at.
  void drop_optional_keys(std::vector<std::string_view>& argv, std::string& numkeys) const {
    const auto keys = parse_integer(argv.size() > 2 ? argv[2] : std::string_view());
    const long long optional = m_call.script->optional_keys;
    if (!keys || *keys < optional || argv.size() < static_cast<size_t>(3 + *keys)) {
      return;
    }
    numkeys = std::to_string(*keys - optional);
    argv[2] = numkeys;
    argv.erase(argv.begin() + 3 + (*keys - optional), argv.begin() + 3 + *keys);
  }

  // Whether an error reply asks for another try: NOSCRIPT, MOVED, ASK, TRYAGAIN,
  // READONLY from a Sentinel's master, and the refusal of optional keys.
  Step redirect(Pending& p, const std::string& error) {
    if (error.rfind("NOSCRIPT", 0) == 0 && !p.by_body) {
      p.by_body = true;  // to the same node, ASKING again if it was an ASK's
      return Step::k_again;
    }
    // A command is refused before it runs: nothing was written. CROSSSLOT
    // is a Redis Cluster; NOPERM about keys, an ACL that does not cover
    // them (if it is about the lock's own keys, the next answer says so).
    Connection& conn = target(p);
    // (Redis 7.0 says "one of the keys", 7.2 and later "a key".)
    const bool keys_refused = error.rfind("CROSSSLOT", 0) == 0 ||
                              (error.rfind("NOPERM", 0) == 0 && (error.find(" keys ") != std::string::npos ||
                                                                 error.find("access a key") != std::string::npos));
    if (keys_refused && m_call.script->optional_keys > 0 && !conn.refuses_optional_keys()) {
      log_debug("{} refuses {}'s optional keys: {}", conn.endpoint().display(), m_call.script->name, error);
      conn.refuse_optional_keys();
      m_conns[p.index]->refuse_optional_keys();
      return Step::k_again;
    }
    // A master demoted under an open connection (a Sentinel failover): the
    // script wrote nothing there. The connection asks the sentinels again.
    if (error.rfind("READONLY", 0) == 0 && m_conns[p.index]->endpoint().kind == Endpoint::Kind::k_sentinel &&
        ++p.redirects <= k_max_redirects) {
      log_debug("{} is a replica now; asking its sentinels for the master", m_conns[p.index]->endpoint().display());
      m_conns[p.index]->reset();
      return Step::k_again;
    }
    if (error.rfind("TRYAGAIN", 0) == 0) {
      log_debug("{}: {} is moving between nodes; trying {} again", m_conns[p.index]->endpoint().display(),
                m_call.args.size() > 1 ? m_call.args[1] : "the key", m_call.script->name);
      p.ask.reset();    // an ASK holds for one try: the next goes to the slot's owner
      p.redirects = 0;  // a new try, within --timeout: the ASK that led here may come again
      return Step::k_tryagain;
    }
    const auto to = redirect_of(error);
    if (!to || ++p.redirects > k_max_redirects) {
      return Step::k_done;
    }
    const Endpoint ep = redirected(m_conns[p.index]->endpoint(), *to);
    if (to->kind == Redirect::Kind::k_moved) {
      log_debug("{} moved the lock's slot to {}", m_conns[p.index]->endpoint().display(), ep.display());
      p.ask.reset();
      m_conns[p.index] = std::make_unique<Connection>(ep, m_call.timeouts, m_call.tls, m_call.cancel);
    } else {
      log_debug("{} sent {} to {} (the slot is moving)", m_conns[p.index]->endpoint().display(), m_call.script->name,
                ep.display());
      p.ask = std::make_unique<Connection>(ep, m_call.timeouts, m_call.tls, m_call.cancel);
    }
    // A redirection comes from a Redis Cluster: the index has no place there.
    m_conns[p.index]->refuse_optional_keys();
    if (p.ask) {
      p.ask->refuse_optional_keys();
    }
    return Step::k_again;
  }

  std::span<std::unique_ptr<Connection>> m_conns;
  const ScriptCall& m_call;
  std::vector<ScriptAnswer> m_answers;
  std::vector<bool> m_in;  // per server: its answer is in
};

}  // namespace

std::vector<ScriptAnswer> run_script(std::span<std::unique_ptr<Connection>> conns, const ScriptCall& call,
                                     const std::vector<bool>& targets) {
  return Run(conns, call).go(targets);
}

namespace {

// Queues the calls of one server named in `pending`. Commands run in order:
// once one EVAL has loaded a script, the EVALSHAs behind it find it. The
// first call of each script is an EVAL, so that a server that does not know
// it yet answers all in one round trip, not every call with NOSCRIPT.
void queue_calls(Connection& conn, const std::vector<PipelinedCall>& calls, const std::vector<size_t>& pending) {
  std::vector<const Script*> loaded;
  for (const size_t k : pending) {
    const PipelinedCall& call = calls[k];
    const bool eval = std::find(loaded.begin(), loaded.end(), call.script) == loaded.end();
    if (eval) {
      loaded.push_back(call.script);
    }
    std::vector<std::string_view> argv{eval ? "EVAL" : "EVALSHA", eval ? call.script->body : call.script->sha1};
    argv.insert(argv.end(), call.args.begin(), call.args.end());
    conn.queue(std::span<const std::string_view>(argv));
  }
}

// Files one server's replies to the calls in `pending` under their answers,
// and returns the calls to send again: those answered NOSCRIPT on a first
// try (`retry` false), which only a script cache flushed while they ran does.
std::vector<size_t> take_calls(Connection& conn, std::vector<ScriptAnswer>& answers, const std::vector<size_t>& pending,
                               bool retry) {
  if (conn.failure()) {
    for (const size_t k : pending) {
      answers[k].failure = conn.failure();
    }
    conn.reset();
    return {};
  }
  std::vector<Reply> replies = conn.take_replies();
  const std::string node = peer_address(conn.fd());
  std::vector<size_t> noscript;
  for (size_t n = 0; n < pending.size(); ++n) {
    ScriptAnswer& a = answers[pending[n]];
    a.node = node;
    if (n >= replies.size()) {
      a.failure = Failure{ExitStatus::k_protocol,
                          fmt::format("Redis at {} sent fewer replies than commands", conn.endpoint().display())};
    } else if (!retry && replies[n].is_error() && replies[n].str.rfind("NOSCRIPT", 0) == 0) {
      noscript.push_back(pending[n]);
    } else {
      a.reply = std::move(replies[n]);
    }
  }
  return noscript;
}

}  // namespace

std::vector<std::vector<ScriptAnswer>> run_pipelined(std::span<std::unique_ptr<Connection>> conns,
                                                     const std::vector<std::vector<PipelinedCall>>& calls,
                                                     const Cancel& cancel) {
  std::vector<std::vector<ScriptAnswer>> answers(conns.size());
  // Per server, the calls still to send: all at first, then those it
  // answered NOSCRIPT.
  std::vector<std::vector<size_t>> pending(conns.size());
  for (size_t i = 0; i < conns.size(); ++i) {
    answers[i].resize(i < calls.size() ? calls[i].size() : 0);
    for (size_t k = 0; k < answers[i].size(); ++k) {
      pending[i].push_back(k);
    }
  }
  for (const bool retry : {false, true}) {
    std::vector<Connection*> asked;
    for (size_t i = 0; i < conns.size(); ++i) {
      if (!pending[i].empty()) {
        queue_calls(*conns[i], calls[i], pending[i]);
        asked.push_back(conns[i].get());
      }
    }
    if (asked.empty()) {
      break;
    }
    run_all(asked, cancel);
    for (size_t i = 0; i < conns.size(); ++i) {
      if (!pending[i].empty()) {
        pending[i] = take_calls(*conns[i], answers[i], pending[i], retry);
      }
    }
  }
  for (size_t i = 0; i < conns.size(); ++i) {
    for (size_t k = 0; k < answers[i].size(); ++k) {
      describe_error(answers[i][k], conns[i]->endpoint().display(), calls[i][k].script->name);
    }
  }
  return answers;
}

}  // namespace redlock::redis
