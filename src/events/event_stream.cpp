#include "events/event_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "lock/keys.hpp"
#include "redis/fanout.hpp"
#include "redis/subscriber.hpp"
#include "status/survey.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"

namespace redlock::events {

namespace {

// A subscriber is asked for a PONG this often: a server that went away
// without closing the connection (a host that died, a cut link) is found
// out within this and the command timeout.
constexpr Millis k_ping_every{15'000};
// A server that went away is subscribed to again after this, doubling up
// to k_retry_most while it stays away.
constexpr Millis k_retry_first{500};
constexpr Millis k_retry_most{5000};
// A hold that could not be read back is read again after this.
constexpr Millis k_recheck{1000};
// How long a hold told lost is remembered, and how many at most.
constexpr Millis k_lost_memory{600'000};
constexpr size_t k_lost_most = 4096;

// The flags of notify-keyspace-events that make a server publish the
// expiry of a key on its keyspace channel: K, and x (or A, which has it).
bool tells_expiries(const std::string& flags) {
  const bool keyspace = flags.find('K') != std::string::npos;
  return keyspace && (flags.find('x') != std::string::npos || flags.find('A') != std::string::npos);
}

long long wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

// What the stream keeps of each server beside its subscription.
struct EventStream::Feed {
  redis::Endpoint endpoint;
  bool up = false;
  std::string why;  // why it is down
  TimePoint retry_at;
  Millis backoff = k_retry_first;
  TimePoint ping_at;
  // "__keyspace@<db>__:" while the server tells expiries there, else "".
  std::string keyspace;
};

EventStream::EventStream(lock::Locker& locker, std::vector<std::string> names)
    : m_locker(locker),
      m_names(std::move(names)),
      m_prefix(locker.options().prefix),
      m_tracker(locker.endpoints().size()),
      m_merger(locker.endpoints().size()),
      m_sub(std::make_unique<redis::Subscriber>(locker.endpoints(), locker.options().timeouts, locker.options().tls,
                                                locker.cancel())) {
  size_t up = 0;
  std::vector<std::string> down;
  for (const auto& ep : locker.endpoints()) {
    m_feeds.push_back(std::make_unique<Feed>());
    m_feeds.back()->endpoint = ep;
  }
  for (size_t i = 0; i < m_feeds.size(); ++i) {
    if (subscribe(i)) {
      ++up;
    } else {
      down.push_back(fmt::format("{}: {}", m_feeds[i]->endpoint.display(), m_feeds[i]->why));
      m_feeds[i]->retry_at = Clock::now() + k_retry_first;
    }
  }
  if (up < lock::majority(m_feeds.size())) {
    throw Error(ExitStatus::k_unavailable, fmt::format("cannot subscribe to the events: {}", fmt::join(down, "; ")));
  }
  for (const auto& line : down) {
    log_warning("cannot subscribe to {}; trying again", line);
  }
  seed();
}

EventStream::~EventStream() = default;

bool EventStream::subscribe(size_t i) {
  Feed& f = *m_feeds[i];
  redis::Connection& conn = m_sub->open(i);
  f.up = false;
  f.keyspace.clear();
  try {
    // Keyspace notifications tell an expiry as it happens, where the
    // server is set to send them; a user that may not read the
    // configuration goes without (the leases are read back instead).
    const redis::Reply flags = redis::call(conn, {"CONFIG", "GET", "notify-keyspace-events"});
    if (flags.is_array() && flags.elements.size() == 2 && tells_expiries(flags.elements[1].str)) {
      f.keyspace = fmt::format("__keyspace@{}__:", f.endpoint.db);
    }
  } catch (const Error& e) {
    f.why = e.what();
    return false;
  }
  std::vector<std::string> channels;
  std::vector<std::string> patterns;
  if (m_names.empty()) {
    patterns.push_back(lock::events_pattern(m_prefix));
    if (!f.keyspace.empty()) {
      patterns.push_back(lock::glob_escaped(f.keyspace + m_prefix) + "{*}");
    }
  } else {
    for (const auto& name : m_names) {
      channels.push_back(lock::events_channel(m_prefix, name));
      if (!f.keyspace.empty()) {
        channels.push_back(f.keyspace + lock::lock_key(m_prefix, name));
      }
    }
  }
  m_sub->start(i, channels, patterns);
  m_sub->confirm(m_locker.cancel());
  if (!m_sub->up(i)) {
    f.why = m_sub->why(i);
    return false;
  }
  if (const auto& refusal = m_sub->refusal(i)) {
    // An ACL without the channels: no use trying again.
    throw Error(redis::classify_error(*refusal), fmt::format("{} refuses to let redlock subscribe to the events: {}",
                                                             f.endpoint.display(), mask_secrets(*refusal)));
  }
  f.up = true;
  f.ping_at = Clock::now() + k_ping_every;
  return true;
}

void EventStream::seed() {
  try {
    const std::vector<std::string> names = m_names.empty() ? status::Survey(m_locker.servers()).list() : m_names;
    if (names.empty()) {
      return;
    }
    const auto views = status::Survey(m_locker.servers()).inspect(names);
    const TimePoint now = Clock::now();
    for (size_t k = 0; k < names.size() && k < views.size(); ++k) {
      for (size_t i = 0; i < views[k].size(); ++i) {
        m_tracker.seed(i, names[k], views[k][i], now);
      }
    }
  } catch (const Error& e) {
    // The holds will be learned from their events.
    log_debug("cannot read the locks held now: {}", e.what());
  }
}

void EventStream::show(std::vector<Event> events) {
  const TimePoint now = Clock::now();
  for (auto& e : events) {
    if (e.kind == "lost" && !e.field("holder").empty()) {
      if (m_lost.size() >= k_lost_most) {
        std::erase_if(m_lost, [&](const auto& told) { return now - told.second > k_lost_memory; });
        if (m_lost.size() >= k_lost_most) {
          m_lost.clear();
        }
      }
      const auto [at, fresh] = m_lost.try_emplace(e.name + '\n' + e.field("holder"), now);
      if (!fresh && now - at->second <= k_lost_memory) {
        continue;  // told already
      }
      at->second = now;
    }
    m_ready.push_back(std::move(e));
  }
}

void EventStream::told(size_t server, Event e) {
  const TimePoint now = Clock::now();
  show(m_merger.add(server, m_tracker.learn(server, std::move(e), now), now));
}

void EventStream::take_message(size_t i, const std::string& channel, const std::string& payload) {
  const Feed& f = *m_feeds[i];
  if (!f.keyspace.empty() && channel.rfind(f.keyspace, 0) == 0) {
    std::optional<std::string> name = lock::name_of_key(m_prefix, std::string_view(channel).substr(f.keyspace.size()));
    if (payload == "expired" && name) {
      const TimePoint now = Clock::now();
      for (auto& e : m_tracker.key_expired(i, *name, wall_ms())) {
        show(m_merger.add(i, std::move(e), now));
      }
    }
    return;
  }
  std::optional<std::string> name = lock::name_of_events_channel(m_prefix, channel);
  if (!name || (!m_names.empty() && std::find(m_names.begin(), m_names.end(), *name) == m_names.end())) {
    return;
  }
  if (std::optional<Event> e = parse_event(*name, payload)) {
    told(i, std::move(*e));
  } else {
    log_debug("not an event on {}: {}", one_line(channel), one_line(payload));
  }
}

void EventStream::take_arrived() {
  redis::Subscriber::Arrived arrived = m_sub->take();
  for (const auto& m : arrived.messages) {
    take_message(m.server, m.channel, m.payload);
  }
  for (const size_t i : arrived.lost) {
    Feed& f = *m_feeds[i];
    f.up = false;
    f.why = m_sub->why(i);
    f.retry_at = Clock::now() + f.backoff;
    log_warning("lost the events of {}: {}; subscribing again", f.endpoint.display(), f.why);
  }
}

void EventStream::check_due() {
  const TimePoint now = Clock::now();
  const std::vector<std::string> names = m_tracker.due(now);
  if (names.empty()) {
    return;
  }
  std::vector<std::vector<lock::ServerView>> views;
  try {
    views = status::Survey(m_locker.servers()).inspect(names);
  } catch (const Error& e) {
    log_debug("cannot read back {} lock(s): {}", names.size(), e.what());
  }
  for (size_t k = 0; k < names.size(); ++k) {
    for (size_t i = 0; i < m_feeds.size(); ++i) {
      lock::ServerView view;
      if (k < views.size() && i < views[k].size()) {
        view = views[k][i];
      } else {
        view.error = "not read";
      }
      for (auto& e : m_tracker.checked(i, names[k], view, now, k_recheck)) {
        show(m_merger.add(i, std::move(e), now));
      }
    }
  }
}

std::optional<TimePoint> EventStream::next_wake() const {
  std::optional<TimePoint> next = m_tracker.next_due();
  if (const auto merged = m_merger.next_due(); merged && (!next || *merged < *next)) {
    next = merged;
  }
  for (const auto& f : m_feeds) {
    const TimePoint t = f->up ? f->ping_at : f->retry_at;
    if (!next || t < *next) {
      next = t;
    }
  }
  return next;
}

void EventStream::retry_down(TimePoint now) {
  for (size_t i = 0; i < m_feeds.size(); ++i) {
    Feed& f = *m_feeds[i];
    if (f.up || f.retry_at > now) {
      continue;
    }
    if (subscribe(i)) {
      log_warning(
          "subscribed to the events of {} again; what happened while it was away is not told, and the "
          "holds known before are read back now",
          f.endpoint.display());
      f.backoff = k_retry_first;
      m_tracker.recheck(i, now);
      m_reseed = true;
    } else {
      f.backoff = std::min(f.backoff * 2, k_retry_most);
      f.retry_at = Clock::now() + f.backoff;
      log_debug("cannot subscribe to {} yet: {}", f.endpoint.display(), f.why);
    }
  }
}

void EventStream::ping_due(TimePoint now) {
  for (size_t i = 0; i < m_feeds.size(); ++i) {
    Feed& f = *m_feeds[i];
    if (f.up && f.ping_at <= now) {
      m_sub->ping(i);
      f.ping_at = now + k_ping_every;
    }
  }
}

std::vector<Event> EventStream::next(const Cancel& cancel) {
  while (m_ready.empty()) {
    if (cancel.requested()) {
      return {};
    }
    const TimePoint now = Clock::now();
    retry_down(now);
    check_due();
    show(m_merger.flush(now));
    if (m_reseed) {
      m_reseed = false;
      seed();
    }
    ping_due(now);
    if (!m_ready.empty()) {
      break;
    }
    if (m_sub->wait(next_wake(), cancel) == redis::RunResult::k_cancelled) {
      return {};
    }
    take_arrived();
  }
  return std::exchange(m_ready, {});
}

}  // namespace redlock::events
