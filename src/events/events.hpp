#pragma once

// What happens to locks, as `redlock events` tells it: the messages the
// scripts publish on each lock's events channel (lua/includes/events.lua)
// read into events, the holds they reveal followed so that an expiry (which
// no script sees) is noticed when its lease should end, and the copies that
// the servers of a Redlock each tell merged into one. Pure: the I/O is
// event_stream's, so tests/unit/events/events_test.cpp covers this with no server.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lock/quorum.hpp"
#include "lock/view.hpp"
#include "util/clock.hpp"
#include "util/duration.hpp"

namespace redlock::events {

// One thing that happened to a lock.
struct Event {
  std::string kind;       // acquired, reentered, released, expired, lost, broken, joined, left, ...
  std::string name;       // the lock's name
  long long time_ms = 0;  // when, by the clock of the server that told it (ms since the epoch)
  // What the kind has (host, pid, fence, holder, count, ttl_ms, waiter,
  // ...), each as text, in order of name.
  std::map<std::string, std::string> fields;
  // The value of `key`, or "".
  [[nodiscard]] std::string field(const std::string& key) const;
};

// The kinds redlock tells, each with what it means (man redlock: EVENTS).
// A kind a newer redlock tells is shown all the same, with its fields.
struct EventKind {
  std::string_view kind;
  std::string_view meaning;
};
[[nodiscard]] const std::vector<EventKind>& event_kinds();

// The fields whose values are whole numbers (JSON writes them as numbers).
[[nodiscard]] bool numeric_field(std::string_view key);

// The event a script told about lock `name` in `message` (a JSON object
// with at least "event" and "ms"), or nullopt for a message that is not
// one: anyone who may PUBLISH can write to the channel, so nothing in it is
// trusted beyond its shape.
[[nodiscard]] std::optional<Event> parse_event(const std::string& name, std::string_view message);

// The holds each server's events revealed, each with the time its lease
// should end: an expiry is told by no script, so a hold whose time has come
// is read back (status::Survey::inspect) and, if it is gone unreleased, told as
// expired. A renewal is told to nobody either: a hold found still there is
// simply expected again when its lease, as read, ends.
class HoldTracker {
 public:
  explicit HoldTracker(size_t servers) : m_holds(servers) {}

  // Learns what `e` (told by server `server`, received at `now`) says of
  // the holds, and returns it with what the tracker knows of the hold that
  // it lacks (a renewal that found the lock lost does not name its host).
  [[nodiscard]] Event learn(size_t server, Event e, TimePoint now);

  // The names with a hold whose time has come by `now`.
  [[nodiscard]] std::vector<std::string> due(TimePoint now) const;
  // When the next hold's time comes, if any is followed.
  [[nodiscard]] std::optional<TimePoint> next_due() const;

  // Server `server`'s view of `name`, read at `now`: each followed hold that
  // is gone is told as expired (and forgotten); each still there is
  // expected again when its lease ends. A view that failed (`view.error`)
  // puts the check off by `retry`.
  [[nodiscard]] std::vector<Event> checked(size_t server, const std::string& name, const lock::ServerView& view,
                                           TimePoint now, Millis retry);

  // Follows the holders of `view` not followed yet (start-up and after a
  // reconnection), telling nothing.
  void seed(size_t server, const std::string& name, const lock::ServerView& view, TimePoint now);

  // Every hold of server `server` is checked at once (after a
  // reconnection: what happened meanwhile was not told).
  void recheck(size_t server, TimePoint now);

  // The key of `name` expired on server `server` (a keyspace notification):
  // its followed holds, told as expired at `time_ms` and forgotten.
  [[nodiscard]] std::vector<Event> key_expired(size_t server, const std::string& name, long long time_ms);

  // Every name with a followed hold on any server.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  struct Hold {
    std::string holder;  // lock::hold_id of its token
    std::string host, pid, fence;
    TimePoint due;
  };
  [[nodiscard]] static Event expired(const std::string& name, const Hold& h, long long time_ms);
  std::vector<std::map<std::string, std::vector<Hold>>> m_holds;  // per server, per name
  // The holds followed on `server` of `name`, nullptr if none.
  std::vector<Hold>* holds_of(size_t server, const std::string& name);
};

// The servers of a Redlock each tell their copy of an event: it is shown
// once a majority of them have told it (so that a grant a minority made
// and took back is not shown), with the largest fence among the copies.
// The other copies are waited for a moment (k_grace) after the majority,
// so that the fence shown is the holder's (the largest of all) when every
// server answers; events are shown in the order their majorities came.
// One server: every event at once.
class EventMerger {
 public:
  explicit EventMerger(size_t servers) : m_servers(servers) {}
  // Server `server` told `e` at `now`: the events to show now, in order.
  [[nodiscard]] std::vector<Event> add(size_t server, Event e, TimePoint now);
  // The events whose wait for the last copies is over by `now`, in order.
  [[nodiscard]] std::vector<Event> flush(TimePoint now);
  // When flush() next has something to show, if ever.
  [[nodiscard]] std::optional<TimePoint> next_due() const;

  // How long the last copies are waited for once a majority told an event.
  static constexpr Millis k_grace{200};

 private:
  struct Pending {
    Event event;
    std::vector<bool> told;
    size_t count = 0;
    bool queued = false;  // a majority told it: in m_order
    bool shown = false;   // kept only to swallow the copies still to come
    TimePoint first;
    TimePoint due;  // queued: shown by then
  };
  // What makes two servers' copies one event.
  [[nodiscard]] static std::string key_of(const Event& e);
  // Takes the events at the head of m_order that may be shown by `now`.
  [[nodiscard]] std::vector<Event> take(TimePoint now);
  size_t m_servers;
  std::map<std::string, Pending> m_pending;
  std::vector<std::string> m_order;  // keys that a majority told, in that order
};

}  // namespace redlock::events
