// status --format prometheus: the locks' and the servers' gauges in the
// text exposition format.

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "cli/show/status_format.hpp"
#include "cli/show/status_parts.hpp"
#include "util/text.hpp"

namespace redlock::cli {

namespace {

using Verdict = status::Verdict;
using State = status::Verdict::State;

// Whether `name` is one redlock would accept: valid UTF-8 without control
// characters (C0, DEL, C1). Only a key another program wrote can hold
// another.
bool plain_name(std::string_view name) {
  if (!is_valid_utf8(name)) {
    return false;
  }
  for (size_t i = 0; i < name.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    const bool c1 = c == 0xc2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) < 0xa0;
    if (c < 0x20 || c == 0x7f || c1) {
      return false;
    }
  }
  return true;
}

// A label value: backslash, double quote and newline escaped, as the
// exposition format asks.
std::string label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

// The labels of a lock's samples. The name label reads back as the name:
// only the exposition format's own escapes (\\, \" and \n). A name redlock
// would not accept (bytes that are not UTF-8, which the format cannot
// carry, or control characters) is spelt as the table shows it ("\xff",
// "\x1b", a backslash doubled) and marked name_escaped="true", so that it
// never reads as, or collides with, a name that spells those escapes out.
std::string labels_for(const std::string& name) {
  const bool plain = plain_name(name);
  std::string out = "name=\"" + label_value(plain ? name : escape_for_terminal(name)) + '"';
  if (!plain) {
    out += ",name_escaped=\"true\"";
  }
  return out;
}

// The gauges of a name's runs (the run ledger), when it has them.
std::optional<double> last_success_seconds(const Verdict& v) {
  if (!v.runs.last_ok || !v.runs.last_ok->end_ms) {
    return std::nullopt;
  }
  return static_cast<double>(*v.runs.last_ok->end_ms) / 1000;
}

std::optional<double> last_run_seconds(const Verdict& v) {
  const auto took = v.runs.last ? v.runs.last->duration() : std::nullopt;
  if (!took) {
    return std::nullopt;
  }
  return static_cast<double>(took->count()) / 1000;
}

std::optional<double> last_run_exit_status(const Verdict& v) {
  if (!v.runs.last || !v.runs.last->exit) {
    return std::nullopt;
  }
  return static_cast<double>(*v.runs.last->exit);
}

}  // namespace

std::string status_prometheus(const std::vector<Verdict>& verdicts) {
  struct Family {
    const char* name;
    const char* help;
    std::function<std::optional<double>(const Verdict&)> value;
  };
  const auto held = [](const Verdict& v) { return v.state == State::k_held; };
  const std::vector<Family> families = {
      {"redlock_lock_held", "1 while the lock is held, 0 while it is free.",
       [&](const Verdict& v) { return std::optional<double>(held(v) ? 1 : 0); }},
      {"redlock_lock_holders", "How many hold the lock (a semaphore's places taken, readers sharing it).",
       [](const Verdict& v) { return std::optional<double>(static_cast<double>(v.holders.size())); }},
      {"redlock_lock_waiters", "How many wait in the lock's line.",
       [](const Verdict& v) {
         return std::optional<double>(
             static_cast<double>(std::max<long long>(v.waiting, static_cast<long long>(v.waiters.size()))));
       }},
      {"redlock_lock_ttl_seconds", "Time left before the lock frees itself unless renewed (its soonest holder's).",
       [&](const Verdict& v) -> std::optional<double> {
         if (!held(v)) {
           return std::nullopt;
         }
         long long ttl = v.holders.front().ttl_ms;
         for (const auto& h : v.holders) {
           ttl = std::min(ttl, h.ttl_ms);
         }
         return static_cast<double>(std::max(0LL, ttl)) / 1000;
       }},
      {"redlock_lock_age_seconds", "How long the lock has been held (its oldest holder's).",
       [&](const Verdict& v) -> std::optional<double> {
         if (!held(v)) {
           return std::nullopt;
         }
         return static_cast<double>(age_of(v, v.holders.front())) / 1000;
       }},
      // Only for the names they concern: ten thousand zeros are no news.
      {"redlock_lock_suspended", "1 while the name is suspended (redlock suspend); absent otherwise.",
       [](const Verdict& v) { return v.suspension ? std::optional<double>(1) : std::nullopt; }},
      {"redlock_lock_revoke_pending",
       "How many of the lock's holders were asked to give it back (redlock break --grace); absent when none.",
       [](const Verdict& v) {
         return v.revokes.empty() ? std::nullopt : std::optional<double>(static_cast<double>(v.revokes.size()));
       }},
      {"redlock_last_success_timestamp_seconds", "When the last ok run of the name ended (Unix time, server clock).",
       last_success_seconds},
      {"redlock_last_run_duration_seconds", "How long the last run of the name took, once it ended.", last_run_seconds},
      {"redlock_last_run_exit_status", "The exit status of the last run of the name, once it ended.",
       last_run_exit_status},
  };
  std::string out;
  for (const auto& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& v : verdicts) {
      if (v.state == State::k_foreign) {
        continue;
      }
      if (const auto value = f.value(v)) {
        out += fmt::format("{}{{{}}} {}\n", f.name, labels_for(v.name), *value);
      }
    }
  }
  return out;
}

std::string servers_prometheus(const std::vector<ServerGauges>& servers) {
  struct Family {
    const char* name;
    const char* help;
    std::function<std::optional<bool>(const ServerGauges&)> value;
  };
  const std::vector<Family> families = {
      {"redlock_up", "1 when the server answered, 0 when it could not be reached or refused redlock.",
       [](const ServerGauges& s) { return std::optional<bool>(s.up); }},
      {"redlock_server_evicts_locks",
       "1 when the server can evict a held lock (a maxmemory limit with a policy other than noeviction).",
       [](const ServerGauges& s) { return s.evicts_locks; }},
      {"redlock_server_restart_forgets_locks",
       "1 when a restart or crash of the server can forget held locks (not appendonly yes, appendfsync always).",
       [](const ServerGauges& s) { return s.restart_forgets_locks; }},
  };
  std::string out;
  for (const auto& f : families) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const auto& s : servers) {
      if (const auto value = f.value(s)) {
        out += fmt::format("{}{{server=\"{}\"}} {}\n", f.name, label_value(s.server), *value ? 1 : 0);
      }
    }
  }
  return out;
}

}  // namespace redlock::cli
