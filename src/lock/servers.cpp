// The servers and their rounds: what every operation on a lock, and every
// reading of many, goes through.

#include "lock/servers.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "lock/answers.hpp"
#include "lock/quorum.hpp"
#include "redis/cluster.hpp"
#include "redis/fanout.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::lock {

Servers::Servers(std::vector<redis::Endpoint> endpoints, Options options, Cancel cancel)
    : m_endpoints(std::move(endpoints)), m_options(std::move(options)), m_stop(cancel), m_cancel(cancel) {
  for (const auto& ep : m_endpoints) {
    m_conns.push_back(std::make_unique<redis::Connection>(ep, m_options.timeouts, m_options.tls, m_cancel));
    m_names.push_back(ep.display());
  }
  m_warned.assign(m_endpoints.size(), false);
}

void Servers::set_cancel(Cancel cancel) {
  m_cancel = cancel;
  for (auto& c : m_conns) {
    c->set_cancel(cancel);
  }
}

void Servers::warn_refused(size_t i, const redis::Failure& failure) {
  if (m_conns.size() < 2 || failure.status != ExitStatus::k_refused || m_warned[i]) {
    return;
  }
  m_warned[i] = true;
  // The message is redlock's own sentence (endpoints as display() shows
  // them, the server's error, a hint naming options): not a command line,
  // whose words after --password-file would be taken for secrets. Only a
  // URL's password could be in it, and that stays hidden.
  hold_warning(fmt::format("{}; it does not count towards the quorum of the {} servers",
                           redact_url_passwords(failure.message), m_conns.size()));
}

std::vector<bool> Servers::failed_over() {
  std::vector<bool> moved(m_conns.size(), false);
  for (size_t i = 0; i < m_conns.size(); ++i) {
    const std::string before = m_conns[i]->master_address();
    if (m_conns[i]->master_changed()) {
      moved[i] = true;
      log_warning("the sentinels of {} have failed over from {}: the lock held on the old master cannot be trusted",
                  m_names[i], before);
    }
  }
  return moved;
}

std::vector<Answer> Servers::round(const std::vector<std::string>& args, const Script& script,
                                   const std::vector<bool>& targets, const std::vector<bool>& eval_body,
                                   bool wait_out_tryagain, const Decided& decided) {
  const bool wait_replicas =
      &script == &lock::script(ScriptName::k_acquire) || &script == &lock::script(ScriptName::k_renew);
  redis::ScriptCall call;
  call.script = &script;
  call.args = args;
  call.eval_body = eval_body;
  call.min_replicas = wait_replicas ? m_options.min_replicas : 0;
  call.timeouts = m_options.timeouts;
  // status's line is news, not worth a wait
  call.retry_tryagain = wait_out_tryagain && &script != &lock::script(ScriptName::k_line);
  call.tls = m_options.tls;
  call.cancel = m_cancel;
  if (decided) {
    call.decided = [&](const std::vector<redis::ScriptAnswer>& said, const std::vector<bool>& in) {
      return decided(read_answers(said, script), in);
    };
  }
  std::vector<Answer> answers =
      read_answers(m_run_script ? m_run_script(call, targets) : redis::run_script(m_conns, call, targets), script);
  for (size_t i = 0; i < answers.size(); ++i) {
    const Answer& a = answers[i];
    if (a.failure) {
      warn_refused(i, *a.failure);
    }
    log_debug("{} {}: {}", m_names[i], script.name, a.failure ? a.failure->message : outcome_of(a.reply));
  }
  return answers;
}

std::vector<Answer> Servers::read_answers(std::vector<redis::ScriptAnswer> said, const Script& script) const {
  // Every script answers an array whose first element says what happened.
  std::vector<Answer> answers(said.size());
  for (size_t i = 0; i < said.size(); ++i) {
    auto& a = answers[i];
    a.failure = std::move(said[i].failure);
    a.reply = std::move(said[i].reply);
    a.replicas_short = said[i].replicas_short;
    a.wait_refused = std::move(said[i].wait_refused);
    a.node = std::move(said[i].node);
    if (!a.failure && outcome_of(a.reply).empty()) {
      a.failure = unexpected_reply(m_names[i], script.name);
    }
  }
  return answers;
}

void Servers::refuse_shared_node(const std::vector<Answer>& answers) const {
  if (const auto why = shared_node(answers)) {
    throw UsageError(*why);
  }
}

std::optional<std::string> Servers::shared_node(const std::vector<Answer>& answers) const {
  for (size_t i = 0; i < answers.size(); ++i) {
    for (size_t j = i + 1; j < answers.size(); ++j) {
      if (!answers[i].node.empty() && answers[i].node == answers[j].node) {
        return fmt::format(
            "{} and {} reach the same Redis node ({}): nodes of one Redis Cluster, or one server named twice, are "
            "one server, not independent Redlock masters; give it once with --redis",
            m_names[i], m_names[j], answers[i].node);
      }
    }
  }
  return std::nullopt;
}

void Servers::reconnect(size_t i, const redis::Timeouts& timeouts) {
  const bool refuses = m_conns[i]->refuses_optional_keys();
  m_conns[i] = std::make_unique<redis::Connection>(m_conns[i]->endpoint(), timeouts, m_options.tls, m_cancel);
  if (refuses) {
    m_conns[i]->refuse_optional_keys();  // no second refusal to learn it from: the first cost a round trip
  }
}

void Servers::require_majority(const std::vector<redis::Failure>& failures) const {
  if (failures.size() > m_conns.size() - quorum()) {
    throw quorum_failure(failures, m_conns.size(), quorum());
  }
}

Servers::~Servers() = default;

size_t Servers::quorum() const {
  return majority(m_conns.size());
}

std::vector<std::vector<redis::ScriptAnswer>> Servers::pipelined(
    const std::vector<std::vector<redis::PipelinedCall>>& calls) {
  return redis::run_pipelined(m_conns, calls, m_cancel);
}

redis::Reply Servers::call(size_t i, const std::vector<std::string>& argv) {
  return redis::call(*m_conns[i], argv);
}

std::vector<std::string> Servers::scan(size_t i, const std::string& pattern, std::vector<std::string>& nodes) {
  return redis::scan_keys(*m_conns[i], pattern, m_options.timeouts, m_options.tls, nodes);
}

bool names_password(std::string_view urls) {
  const std::vector<redis::Endpoint> endpoints = redis::parse_endpoint_list(urls);
  return std::any_of(endpoints.begin(), endpoints.end(), [](const redis::Endpoint& ep) {
    return (ep.password && !ep.password->empty()) || ep.sentinel_password;
  });
}

}  // namespace redlock::lock
