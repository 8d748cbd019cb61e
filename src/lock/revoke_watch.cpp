#include "lock/revoke_watch.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "redis/fanout.hpp"
#include "redis/subscriber.hpp"

namespace redlock::lock {
namespace {

std::string text_of(const nlohmann::json& j) {
  if (j.is_string()) {
    return j.get<std::string>();
  }
  if (j.is_number_integer()) {
    return std::to_string(j.get<long long>());
  }
  return "";
}

// `text` (a message on a revoke channel, or the mark's entry) as a revoke
// of run `run`'s hold of `name`. A message names the runs it revokes; the
// mark's entry is the run's own.
std::optional<RevokeNotice> notice_of(const std::string& text, const std::string& name, const std::string& run,
                                      bool from_mark) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return std::nullopt;
  }
  if (!from_mark) {
    const auto runs = j.find("runs");
    if (runs == j.end() || !runs->is_array() ||
        std::none_of(runs->begin(), runs->end(), [&run](const nlohmann::json& r) { return text_of(r) == run; })) {
      return std::nullopt;
    }
  }
  RevokeNotice n;
  n.name = name;
  n.broken = j.contains("broken") && j["broken"].is_boolean() && j["broken"].get<bool>();
  n.host = j.contains("host") ? text_of(j["host"]) : "";
  n.pid = j.contains("pid") ? text_of(j["pid"]) : "";
  if (const auto grace = j.find("grace_ms"); grace != j.end() && grace->is_number_integer()) {
    if (const long long ms = grace->get<long long>(); ms > 0) {
      n.grace = Millis(ms);
    }
  }
  return n;
}

}  // namespace

RevokeWatch::RevokeWatch(const Locker& locker, const std::vector<std::string>& names, const std::string& token,
                         Cancel stop)
    : m_locker(locker),
      m_run(hold_id(token)),
      m_stop(stop),
      m_sub(std::make_unique<redis::Subscriber>(locker.endpoints(), locker.options().timeouts, locker.options().tls,
                                                stop)) {
  for (const auto& name : names) {
    const Keys keys = keys_for(locker.options().prefix, name);
    m_names.push_back(name);
    m_channels.push_back(keys.revoke_channel);
    m_channels.push_back(keys.revoke_channel + ":" + m_run);
    m_marks.push_back(keys.revoke);
  }
  m_sub->start(m_channels);
  m_sub->confirm(m_stop);
}

RevokeWatch::~RevokeWatch() = default;

std::optional<RevokeNotice> RevokeWatch::read_mark() {
  const auto& options = m_locker.options();
  for (size_t i = 0; i < m_marks.size(); ++i) {
    // A connection of its own to each server: the subscribers take no
    // other command.
    std::vector<std::unique_ptr<redis::Connection>> conns;
    std::vector<redis::Connection*> live;
    for (const auto& ep : m_locker.endpoints()) {
      conns.push_back(std::make_unique<redis::Connection>(ep, options.timeouts, options.tls, m_stop));
      conns.back()->queue({"HGET", m_marks[i], "r:" + m_run});
      if (!conns.back()->failure() && !conns.back()->closed()) {
        live.push_back(conns.back().get());
      }
    }
    (void)redis::run_all(live, m_stop);
    for (auto& c : conns) {
      for (const auto& r : c->take_replies()) {
        if (r.type != redis::Reply::Type::k_string) {
          continue;
        }
        if (auto n = notice_of(r.str, m_names[i], m_run, true)) {
          return n;
        }
      }
    }
  }
  return std::nullopt;
}

RevokeWatch::End RevokeWatch::wait(RevokeNotice& heard) {
  while (true) {
    bool any_up = false;
    for (size_t i = 0; i < m_sub->size(); ++i) {
      any_up = any_up || m_sub->up(i);
    }
    if (!any_up) {
      return End::k_failed;
    }
    const redis::RunResult r = m_sub->wait(std::nullopt, m_stop);
    if (r == redis::RunResult::k_cancelled || m_stop.requested()) {
      return End::k_stopped;
    }
    for (const auto& msg : m_sub->take().messages) {
      const auto on = std::find(m_channels.begin(), m_channels.end(), msg.channel);
      const std::string& name = on == m_channels.end() ? m_names.front() : m_names[(on - m_channels.begin()) / 2];
      if (auto n = notice_of(msg.payload, name, m_run, false)) {
        heard = std::move(*n);
        return End::k_heard;
      }
    }
  }
}

}  // namespace redlock::lock
