#include "exec/revocation.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "lock/keys.hpp"
#include "lock/layout.hpp"
#include "redis/fanout.hpp"
#include "util/cancel.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

// How soon a failed subscriber is made again.
constexpr Millis k_resubscribe{1000};

std::vector<redis::Connection*> live(const std::vector<std::unique_ptr<redis::Connection>>& conns) {
  std::vector<redis::Connection*> out;
  for (const auto& c : conns) {
    if (!c->failure() && !c->closed()) {
      out.push_back(c.get());
    }
  }
  return out;
}

std::string text_of(const nlohmann::json& j) {
  if (j.is_string()) {
    return j.get<std::string>();
  }
  if (j.is_number_integer()) {
    return std::to_string(j.get<long long>());
  }
  return "";
}

}  // namespace

std::string broken_reason(const RevokeNotice& n) {
  const std::string name = n.name.empty() ? std::string("the lock") : escape_for_terminal(n.name);
  if (n.host.empty()) {
    return fmt::format("{} was broken (redlock break)", name);
  }
  return fmt::format("{} was broken by {} (pid {}; redlock break)", name, escape_for_terminal(n.host),
                     n.pid.empty() ? std::string("not known") : escape_for_terminal(n.pid));
}

RevokeListener::RevokeListener(const lock::Locker& locker, const std::vector<std::string>& names,
                               const std::string& token)
    : m_locker(locker),
      m_stop(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)),
      m_revoked(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  m_run = lock::run_of(token);
  for (const auto& name : names) {
    const lock::Keys keys = lock::keys_for(locker.options().prefix, name);
    m_names.push_back(name);
    m_channels.push_back(keys.revoke_channel);
    m_channels.push_back(keys.revoke_channel + ":" + m_run);
    m_marks.push_back(keys.revoke);
  }
}

RevokeListener::~RevokeListener() {
  if (m_thread.joinable()) {
    uint64_t one = 1;
    (void)!write(m_stop.get(), &one, sizeof(one));
    m_thread.join();
  }
}

void RevokeListener::start() {
  if (!m_thread.joinable()) {
    m_thread = std::thread([this] { loop(); });
  }
}

RevokeNotice RevokeListener::notice() const {
  std::lock_guard<std::mutex> guard(m_mutex);
  return m_notice;
}

bool RevokeListener::take_notice(const std::string& text, const std::string& name, bool from_mark) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return false;
  }
  if (!from_mark) {
    const auto runs = j.find("runs");
    if (runs == j.end() || !runs->is_array() ||
        std::none_of(runs->begin(), runs->end(), [this](const nlohmann::json& r) { return text_of(r) == m_run; })) {
      return false;
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
  {
    std::lock_guard<std::mutex> guard(m_mutex);
    m_notice = std::move(n);
  }
  uint64_t one = 1;
  (void)!write(m_revoked.get(), &one, sizeof(one));
  return true;
}

std::vector<std::unique_ptr<redis::Connection>> RevokeListener::send_to_all(const std::vector<std::string>& argv) {
  const Cancel stop(m_stop.get());
  const auto& options = m_locker.options();
  std::vector<std::unique_ptr<redis::Connection>> conns;
  for (const auto& ep : m_locker.endpoints()) {
    conns.push_back(std::make_unique<redis::Connection>(ep, options.timeouts, options.tls, stop));
    conns.back()->queue(argv);
  }
  (void)redis::run_all(live(conns), stop);
  return conns;
}

bool RevokeListener::read_mark() {
  for (size_t i = 0; i < m_marks.size(); ++i) {
    for (auto& c : send_to_all({"HGET", m_marks[i], "r:" + m_run})) {
      for (const auto& r : c->take_replies()) {
        if (r.type == redis::Reply::Type::k_string && take_notice(r.str, m_names[i], true)) {
          return true;
        }
      }
    }
  }
  return false;
}

bool RevokeListener::listen_once() {
  const Cancel stop(m_stop.get());
  std::vector<std::string> subscribe = {"SUBSCRIBE"};
  subscribe.insert(subscribe.end(), m_channels.begin(), m_channels.end());
  std::vector<std::unique_ptr<redis::Connection>> subs = send_to_all(subscribe);
  for (auto& c : subs) {
    (void)c->take_replies();
  }
  // A revoke before the subscription is in the mark.
  if (stop.requested() || read_mark()) {
    return true;
  }
  while (true) {
    std::vector<redis::Connection*> listening = live(subs);
    if (listening.empty()) {
      return false;
    }
    const redis::RunResult r = redis::wait_any(listening, std::nullopt, stop);
    if (r == redis::RunResult::k_cancelled || stop.requested()) {
      return true;
    }
    for (auto* c : listening) {
      for (const auto& msg : c->take_replies()) {
        if (!msg.is_array() || msg.elements.size() < 3 || msg.elements[0].str != "message") {
          continue;
        }
        const auto on = std::find(m_channels.begin(), m_channels.end(), msg.elements[1].str);
        const std::string& name = on == m_channels.end() ? m_names.front() : m_names[(on - m_channels.begin()) / 2];
        if (take_notice(msg.elements[2].str, name, false)) {
          return true;
        }
      }
    }
  }
}

void RevokeListener::loop() {
  // As the renewer's: job-control stops and SIGCONT are the supervisor's.
  sigset_t stops;
  sigemptyset(&stops);
  sigaddset(&stops, SIGTSTP);
  sigaddset(&stops, SIGCONT);
  pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  const Cancel stop(m_stop.get());
  while (!listen_once()) {
    log_debug("listening for a revoke failed; subscribing again in {}", format_duration(k_resubscribe));
    if (!stop.sleep_until(Clock::now() + k_resubscribe)) {
      return;
    }
  }
}

}  // namespace redlock::exec
