#include "events/events.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "lock/layout.hpp"

namespace redlock::events {

namespace {

// How long after a lease should end its hold is read back: the server's
// own expiry runs on its clock, a little after ours.
constexpr Millis k_margin{250};

// How long copies of one event are waited for from the other servers.
constexpr Millis k_window{30'000};

std::optional<long long> whole(const std::string& text) {
  long long v = 0;
  const char* end = text.data() + text.size();
  auto [at, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || at != end || text.empty()) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::string Event::field(const std::string& key) const {
  auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

const std::vector<EventKind>& event_kinds() {
  // One line per kind: a kind the scripts start telling needs its line here
  // (and in man redlock: EVENTS), nothing else.
  static const std::vector<EventKind> kinds = {
      {"acquired", "a holder took the lock (host, pid, cmd, fence, mode, ttl_ms)"},
      {"reentered", "its holder's token took it once more (count: the levels now held)"},
      {"released", "a holder let go of a level (count: levels left; 0: the hold ended; held_ms, kept_ms)"},
      {"expired", "a hold's lease ran out without a release: its holder died, hung or was cut off"},
      {"lost", "a holder's renewal or release found the lock no longer its own"},
      {"broken", "an operator's break took the lock from this holder"},
      {"joined", "a waiter joined the line (waiter, host, pid, place)"},
      {"left", "a waiter left the line (reason: left, dead when its heartbeats stopped, or suspended)"},
      {"revoked", "an operator's revoke asked this holder to stop (by_host, by_pid, grace_ms); its release follows"},
      {"suspended", "an operator suspended the name: newcomers are busy (reason, by_host, by_pid, until_ms)"},
      {"resumed", "an operator lifted the suspension (by_host, by_pid)"},
  };
  return kinds;
}

bool numeric_field(std::string_view key) {
  static constexpr std::string_view k_numeric[] = {"pid",   "fence", "count",    "ttl_ms", "held_ms", "kept_ms",
                                                   "place", "limit", "grace_ms", "by_pid", "until_ms"};
  return std::find(std::begin(k_numeric), std::end(k_numeric), key) != std::end(k_numeric);
}

std::optional<Event> parse_event(const std::string& name, std::string_view message) {
  nlohmann::json j = nlohmann::json::parse(message, nullptr, false);
  if (!j.is_object()) {
    return std::nullopt;
  }
  Event e;
  e.name = name;
  for (const auto& [key, value] : j.items()) {
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_number_integer()) {
      text = std::to_string(value.get<long long>());
    } else if (value.is_number()) {
      text = std::to_string(static_cast<long long>(value.get<double>()));
    } else if (value.is_boolean()) {
      text = value.get<bool>() ? "true" : "false";
    } else {
      continue;  // nothing redlock tells
    }
    if (key == "event") {
      e.kind = text;
    } else if (key == "ms") {
      e.time_ms = whole(text).value_or(0);
    } else {
      e.fields[key] = text;
    }
  }
  if (e.kind.empty() || e.time_ms <= 0) {
    return std::nullopt;
  }
  return e;
}

Event HoldTracker::learn(size_t server, Event e, TimePoint now) {
  if (server >= m_holds.size()) {
    return e;
  }
  const std::string holder = e.field("holder");
  auto& holds = m_holds[server][e.name];
  auto it = std::find_if(holds.begin(), holds.end(), [&](const Hold& h) { return h.holder == holder; });
  if (e.kind == "acquired" || e.kind == "reentered") {
    const TimePoint due = now + Millis(whole(e.field("ttl_ms")).value_or(0)) + k_margin;
    if (it == holds.end()) {
      holds.push_back(Hold{holder, e.field("host"), e.field("pid"), e.field("fence"), due});
    } else {
      it->due = std::max(it->due, due);
    }
    return e;
  }
  const bool ends = e.kind == "lost" || e.kind == "broken" || e.kind == "expired" ||
                    (e.kind == "released" && whole(e.field("count")).value_or(0) == 0);
  if (it != holds.end()) {
    // What this event does not say of its hold, the hold's own event did.
    const std::pair<const char*, std::string> known[] = {{"host", it->host}, {"pid", it->pid}, {"fence", it->fence}};
    for (const auto& [key, value] : known) {
      if (e.field(key).empty() && !value.empty()) {
        e.fields[key] = value;
      }
    }
    if (ends) {
      holds.erase(it);
    }
  }
  if (holds.empty()) {
    m_holds[server].erase(e.name);
  }
  return e;
}

std::vector<std::string> HoldTracker::due(TimePoint now) const {
  std::vector<std::string> out;
  for (const auto& server : m_holds) {
    for (const auto& [name, holds] : server) {
      const bool any = std::any_of(holds.begin(), holds.end(), [&](const Hold& h) { return h.due <= now; });
      if (any && std::find(out.begin(), out.end(), name) == out.end()) {
        out.push_back(name);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<TimePoint> HoldTracker::next_due() const {
  std::optional<TimePoint> next;
  for (const auto& server : m_holds) {
    for (const auto& [name, holds] : server) {
      for (const auto& h : holds) {
        if (!next || h.due < *next) {
          next = h.due;
        }
      }
    }
  }
  return next;
}

Event HoldTracker::expired(const std::string& name, const Hold& h, long long time_ms) {
  Event e;
  e.kind = "expired";
  e.name = name;
  e.time_ms = time_ms;
  const std::pair<const char*, std::string> known[] = {
      {"holder", h.holder}, {"host", h.host}, {"pid", h.pid}, {"fence", h.fence}};
  for (const auto& [key, value] : known) {
    if (!value.empty()) {
      e.fields[key] = value;
    }
  }
  return e;
}

std::vector<HoldTracker::Hold>* HoldTracker::holds_of(size_t server, const std::string& name) {
  if (server >= m_holds.size()) {
    return nullptr;
  }
  auto found = m_holds[server].find(name);
  return found == m_holds[server].end() ? nullptr : &found->second;
}

std::vector<Event> HoldTracker::checked(size_t server, const std::string& name, const lock::ServerView& view,
                                        TimePoint now, Millis retry) {
  std::vector<Event> out;
  std::vector<Hold>* followed = holds_of(server, name);
  if (followed == nullptr) {
    return out;
  }
  auto& holds = *followed;
  if (view.error || view.foreign) {
    for (auto& h : holds) {
      h.due = std::max(h.due, now + retry);
    }
    return out;
  }
  for (auto it = holds.begin(); it != holds.end();) {
    auto there = std::find_if(view.holders.begin(), view.holders.end(), [&](const lock::HolderView& v) {
      return !v.kept && lock::hold_id(v.token) == it->holder;
    });
    if (there == view.holders.end()) {
      out.push_back(expired(name, *it, view.now_ms));
      it = holds.erase(it);
    } else {
      it->due = now + Millis(std::max(0LL, there->ttl_ms)) + k_margin;
      ++it;
    }
  }
  if (holds.empty()) {
    m_holds[server].erase(name);
  }
  return out;
}

void HoldTracker::seed(size_t server, const std::string& name, const lock::ServerView& view, TimePoint now) {
  if (server >= m_holds.size() || !view.held()) {
    return;
  }
  auto& holds = m_holds[server][name];
  for (const auto& v : view.holders) {
    if (v.kept || v.token.empty()) {
      continue;
    }
    const std::string id = lock::hold_id(v.token);
    if (std::none_of(holds.begin(), holds.end(), [&](const Hold& h) { return h.holder == id; })) {
      holds.push_back(Hold{id, v.host, v.pid > 0 ? std::to_string(v.pid) : "",
                           v.fence > 0 ? std::to_string(v.fence) : "",
                           now + Millis(std::max(0LL, v.ttl_ms)) + k_margin});
    }
  }
  if (holds.empty()) {
    m_holds[server].erase(name);
  }
}

void HoldTracker::recheck(size_t server, TimePoint now) {
  if (server >= m_holds.size()) {
    return;
  }
  for (auto& [name, holds] : m_holds[server]) {
    for (auto& h : holds) {
      h.due = now;
    }
  }
}

std::vector<Event> HoldTracker::key_expired(size_t server, const std::string& name, long long time_ms) {
  std::vector<Event> out;
  const std::vector<Hold>* followed = holds_of(server, name);
  if (followed == nullptr) {
    return out;
  }
  for (const auto& h : *followed) {
    out.push_back(expired(name, h, time_ms));
  }
  m_holds[server].erase(name);
  return out;
}

std::vector<std::string> HoldTracker::names() const {
  std::vector<std::string> out;
  for (const auto& server : m_holds) {
    for (const auto& [name, holds] : server) {
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string EventMerger::key_of(const Event& e) {
  std::string key = e.kind + '\n' + e.name + '\n' + e.field("holder") + '\n' + e.field("waiter");
  if (e.kind == "reentered" || e.kind == "released") {
    key += '\n' + e.field("count");
  }
  return key;
}

std::vector<Event> EventMerger::add(size_t server, Event e, TimePoint now) {
  if (m_servers <= 1 || server >= m_servers) {
    return {std::move(e)};
  }
  for (auto it = m_pending.begin(); it != m_pending.end();) {
    it = !it->second.queued && now - it->second.first > k_window ? m_pending.erase(it) : std::next(it);
  }
  const std::string key = key_of(e);
  std::vector<Event> out;
  if (auto it = m_pending.find(key); it != m_pending.end() && it->second.told[server]) {
    // This server told it before: it happened again. What waits to be
    // shown goes first.
    if (it->second.queued) {
      for (const auto& k : m_order) {
        m_pending.at(k).due = now;
      }
      out = take(now);
    }
    m_pending.erase(key);
  }
  auto it = m_pending.find(key);
  if (it == m_pending.end()) {
    it = m_pending.emplace(key, Pending{e, std::vector<bool>(m_servers, false), 0, false, false, now, now}).first;
  }
  Pending& p = it->second;
  p.told[server] = true;
  ++p.count;
  const auto fence = whole(e.field("fence"));
  if (fence && *fence > whole(p.event.field("fence")).value_or(0)) {
    p.event.fields["fence"] = e.field("fence");
  }
  if (!p.queued && !p.shown && p.count >= lock::majority(m_servers)) {
    p.queued = true;
    p.due = now + k_grace;
    m_order.push_back(key);
  }
  if (p.queued && p.count >= m_servers) {
    p.due = now;
  }
  if (p.shown && p.count >= m_servers) {
    m_pending.erase(it);
  }
  std::vector<Event> more = take(now);
  out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  return out;
}

std::vector<Event> EventMerger::take(TimePoint now) {
  std::vector<Event> out;
  size_t done = 0;
  for (; done < m_order.size(); ++done) {
    auto it = m_pending.find(m_order[done]);
    if (it->second.due > now) {
      break;
    }
    out.push_back(it->second.event);
    if (it->second.count >= m_servers) {
      m_pending.erase(it);
    } else {
      it->second.queued = false;
      it->second.shown = true;
      it->second.first = now;
    }
  }
  m_order.erase(m_order.begin(), m_order.begin() + static_cast<std::ptrdiff_t>(done));
  return out;
}

std::vector<Event> EventMerger::flush(TimePoint now) {
  return take(now);
}

std::optional<TimePoint> EventMerger::next_due() const {
  if (m_order.empty()) {
    return std::nullopt;
  }
  auto it = m_pending.find(m_order.front());
  return it == m_pending.end() ? std::optional<TimePoint>() : it->second.due;
}

}  // namespace redlock::events
