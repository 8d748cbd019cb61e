#include "lock/ledger.hpp"

#include <array>

#include "util/number.hpp"

namespace redlock::lock {

namespace {

constexpr std::array<std::pair<Outcome, const char*>, 8> k_names = {{{Outcome::k_running, "running"},
                                                                     {Outcome::k_ok, "ok"},
                                                                     {Outcome::k_failed, "failed"},
                                                                     {Outcome::k_signalled, "signalled"},
                                                                     {Outcome::k_lost, "lost"},
                                                                     {Outcome::k_timed_out, "timed-out"},
                                                                     {Outcome::k_revoked, "revoked"},
                                                                     {Outcome::k_abandoned, "abandoned"}}};

std::optional<long long> number(const std::string& text) {
  return text.empty() ? std::nullopt : parse_integer(text);
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  for (const auto& [o, name] : k_names) {
    if (o == outcome) {
      return name;
    }
  }
  return "running";
}

std::optional<Outcome> outcome_named(std::string_view name) {
  for (const auto& [o, n] : k_names) {
    if (name == n) {
      return o;
    }
  }
  return std::nullopt;
}

std::optional<Millis> Run::duration() const {
  if (!start_ms || !end_ms) {
    return std::nullopt;
  }
  return Millis(std::max(0LL, *end_ms - *start_ms));
}

std::optional<Run> read_run(const std::vector<std::pair<std::string, std::string>>& fields) {
  Run r;
  std::optional<Outcome> outcome;
  for (const auto& [k, v] : fields) {
    if (k == "run") {
      r.id = v;
    } else if (k == "outcome") {
      outcome = outcome_named(v);
    } else if (k == "host") {
      r.host = v;
    } else if (k == "pid") {
      r.pid = number(v).value_or(0);
    } else if (k == "cmd") {
      r.cmd = v;
    } else if (k == "fence") {
      r.fence = number(v).value_or(0);
    } else if (k == "start_ms") {
      r.start_ms = number(v);
    } else if (k == "end_ms") {
      r.end_ms = number(v);
    } else if (k == "held") {
      r.held = v == "1";
    } else if (k == "exit") {
      const std::optional<long long> e = number(v);
      if (e && *e >= 0 && *e <= 255) {
        r.exit = static_cast<int>(*e);
      }
    }
  }
  if (r.id.empty() || !outcome) {
    return std::nullopt;
  }
  r.outcome = *outcome;
  if (r.outcome == Outcome::k_running || r.outcome == Outcome::k_abandoned) {
    r.end_ms.reset();
  }
  if (r.outcome != Outcome::k_running) {
    r.held.reset();
  }
  return r;
}

Outcome outcome_of_command(int status, bool signalled, bool lost, bool timed_out) {
  if (lost) {
    return Outcome::k_lost;
  }
  if (timed_out) {
    return Outcome::k_timed_out;
  }
  if (status == 0) {
    return Outcome::k_ok;
  }
  return signalled ? Outcome::k_signalled : Outcome::k_failed;
}

}  // namespace redlock::lock
