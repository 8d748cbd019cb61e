#include "cli/show/status_format.hpp"

#include <algorithm>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/show/history_format.hpp"
#include "cli/show/status_parts.hpp"
#include "lock/layout.hpp"

namespace redlock::cli {

using Verdict = status::Verdict;
using State = status::Verdict::State;

const char* state_name(State s) {
  switch (s) {
    case State::k_held:
      return "held";
    case State::k_foreign:
      return "foreign";
    default:
      return "free";
  }
}

std::string server_state(const lock::ServerView& s) {
  if (s.error) {
    return "unreachable";
  }
  if (s.foreign) {
    return "foreign";
  }
  return s.held() ? "held" : "free";
}

long long age_of(const Verdict& v, const lock::HolderView& h) {
  return std::max(0LL, v.now_ms - h.since_ms);
}

// The revoke pending for holder `h`, if any.
const lock::PendingRevoke* revoke_of(const Verdict& v, const lock::HolderView& h) {
  if (h.kept) {
    return nullptr;
  }
  const std::string run = lock::hold_id(h.token);
  for (const auto& r : v.revokes) {
    if (r.run == run) {
      return &r;
    }
  }
  return nullptr;
}

namespace {

// A holder's fence, or null for a stored one that is not a fence (0): a
// number there would be taken for one.
nlohmann::json fence_json(long long fence) {
  return fence > 0 ? nlohmann::json(fence) : nlohmann::json(nullptr);
}

// Who set a mark, a number as every pid in the JSON (null where the mark
// holds none that reads as one).
nlohmann::json pid_json(const std::string& pid) {
  long long n = 0;
  const auto [end, ec] = std::from_chars(pid.data(), pid.data() + pid.size(), n);
  if (ec != std::errc() || end != pid.data() + pid.size() || n <= 0) {
    return nullptr;
  }
  return n;
}

nlohmann::json revoke_json(const lock::PendingRevoke* r) {
  if (r == nullptr) {
    return nullptr;
  }
  return {{"host", r->host},
          {"pid", pid_json(r->pid)},
          {"since_ms", r->since_ms},
          {"grace_ms", r->grace_ms > 0 ? nlohmann::json(r->grace_ms) : nlohmann::json(nullptr)}};
}

nlohmann::json suspension_json(const std::optional<lock::Suspension>& s) {
  if (!s) {
    return nullptr;
  }
  return {{"reason", s->reason},
          {"host", s->host},
          {"pid", pid_json(s->pid)},
          {"since_ms", s->since_ms},
          {"until_ms", s->until_ms > 0 ? nlohmann::json(s->until_ms) : nlohmann::json(nullptr)}};
}

nlohmann::json holder_json(const Verdict& v, const lock::HolderView& h) {
  nlohmann::json j = {{"host", h.host},
                      {"pid", h.pid},
                      {"cmd", h.cmd},
                      {"note", h.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(h.note)},
                      {"revoke", revoke_json(revoke_of(v, h))},
                      {"since_ms", h.since_ms},
                      {"age_ms", age_of(v, h)},
                      {"ttl_ms", h.ttl_ms},
                      {"fence", fence_json(h.fence)},
                      {"count", h.count},
                      {"kept", h.kept}};
  if (h.kept) {
    j["finished_ms"] = h.finished_ms;
  }
  return j;
}

nlohmann::json waiter_json(const lock::WaiterView& w, size_t position) {
  const std::string mode = lock::mode_name(w.mode);
  nlohmann::json j = {{"position", position}, {"host", w.host},      {"pid", w.pid},
                      {"cmd", w.cmd},         {"mode", mode},        {"since_ms", w.since_ms},
                      {"age_ms", w.age_ms},   {"until_ms", nullptr}, {"left_ms", nullptr}};
  if (w.until_ms >= 0) {
    j["until_ms"] = w.until_ms;
    j["left_ms"] = w.left_ms;
  }
  return j;
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json j = {{"name", v.name}, {"state", state_name(v.state)}, {"held", v.state == State::k_held}};
  if (v.state == State::k_foreign) {
    j["type"] = v.foreign_type;
  } else {
    j["suspended"] = suspension_json(v.suspension);
  }
  if (v.state == State::k_held) {
    j["mode"] = lock::mode_name(v.mode);
    if (v.mode == lock::Claim::Mode::k_semaphore) {
      j["limit"] = v.limit;
    }
    // The oldest holder's fields at the top level: the whole story for a plain lock.
    j.update(holder_json(v, v.holders.front()));
    nlohmann::json holders = nlohmann::json::array();
    for (const auto& h : v.holders) {
      holders.push_back(holder_json(v, h));
    }
    j["holders"] = std::move(holders);
  }
  if (v.state != State::k_foreign && v.runs.read) {
    j["last_run"] = v.runs.last ? run_json(*v.runs.last) : nlohmann::json(nullptr);
    j["last_ok"] = v.runs.last_ok ? run_json(*v.runs.last_ok) : nlohmann::json(nullptr);
  }
  if (v.state != State::k_foreign) {
    nlohmann::json waiters = nlohmann::json::array();
    for (size_t i = 0; i < v.waiters.size(); ++i) {
      waiters.push_back(waiter_json(v.waiters[i], i + 1));
    }
    j["waiters"] = std::move(waiters);
  }
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& s : v.views) {
    nlohmann::json sj = {{"url", s.endpoint}, {"state", server_state(s)}};
    if (s.error) {
      sj["error"] = *s.error;
    } else if (s.held()) {
      sj["ttl_ms"] = s.holders.front().ttl_ms;
      sj["host"] = s.holders.front().host;
      sj["pid"] = s.holders.front().pid;
      sj["fence"] = fence_json(s.holders.front().fence);
      sj["holders"] = s.holders.size();
    } else if (s.foreign) {
      sj["type"] = s.type;
    }
    servers.push_back(std::move(sj));
  }
  j["servers"] = std::move(servers);
  return j;
}

}  // namespace

void sort_verdicts(std::vector<Verdict>& verdicts, StatusSort by) {
  // The key of a held lock under `by` (smaller first); free locks have none.
  const auto key = [by](const Verdict& v) -> std::optional<long long> {
    if (v.state != State::k_held || v.holders.empty() || by == StatusSort::k_name) {
      return std::nullopt;
    }
    if (by == StatusSort::k_age) {
      long long oldest = 0;
      for (const auto& h : v.holders) {
        oldest = std::max(oldest, age_of(v, h));
      }
      return -oldest;
    }
    long long soonest = std::numeric_limits<long long>::max();
    for (const auto& h : v.holders) {
      soonest = std::min(soonest, h.ttl_ms < 0 ? std::numeric_limits<long long>::max() : h.ttl_ms);
    }
    return soonest;
  };
  std::stable_sort(verdicts.begin(), verdicts.end(), [&](const Verdict& a, const Verdict& b) {
    if (by != StatusSort::k_name) {
      const std::optional<long long> ka = key(a);
      const std::optional<long long> kb = key(b);
      if (ka.has_value() != kb.has_value()) {
        return ka.has_value();
      }
      if (ka && *ka != *kb) {
        return *ka < *kb;
      }
    }
    return a.name < b.name;
  });
}

// The array is written a lock at a time, as dump(2) would write it whole:
// ten thousand locks never live as one tree of JSON values at once.
std::string status_json(const std::vector<Verdict>& verdicts) {
  if (verdicts.empty()) {
    return "[]\n";
  }
  std::string out = "[\n";
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const std::string one = to_json(verdicts[i]).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    out += "  ";
    for (const char c : one) {
      out += c;
      if (c == '\n') {
        out += "  ";
      }
    }
    out += i + 1 < verdicts.size() ? ",\n" : "\n";
  }
  out += "]\n";
  return out;
}

}  // namespace redlock::cli
