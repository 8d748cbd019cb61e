#pragma once

// `redlock events`' reading of the servers: a subscriber connection to each
// server on the events channels of the locks followed (or, for every lock
// under the prefix, on their pattern), what arrives read into events
// (events.hpp), holds read back when their leases should end, and a server
// that goes away subscribed to again until it is back.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "events/events.hpp"
#include "lock/locker.hpp"
#include "util/cancel.hpp"

namespace redlock::redis {
class Subscriber;
}

namespace redlock::events {

class EventStream {
 public:
  // Follows `names` (every lock under the prefix when empty) on every
  // server of `locker`. Subscribes at once: fewer than a majority of the
  // servers subscribed to is an Error (69 or 77), before any event.
  EventStream(lock::Locker& locker, std::vector<std::string> names);
  ~EventStream();
  EventStream(const EventStream&) = delete;
  EventStream& operator=(const EventStream&) = delete;

  // Waits for what happens next: the events to show, in the order they
  // came (never empty), or nothing once `cancel` has come. A server that
  // goes away is said on stderr and subscribed to again, every few
  // seconds, until it is back (said too).
  [[nodiscard]] std::vector<Event> next(const Cancel& cancel);

 private:
  struct Feed;
  // (Re)subscribes feed `i`; false when the server cannot be reached.
  bool subscribe(size_t i);
  // Subscribes again to the servers that are down and whose time has come.
  void retry_down(TimePoint now);
  // Pings the feeds that are up and whose time has come.
  void ping_due(TimePoint now);
  // One message that feed `i` brought on `channel`.
  void take_message(size_t i, const std::string& channel, const std::string& payload);
  // Reads what arrived on the live feeds into m_ready; marks failed ones down.
  void take_arrived();
  // Reads back the holds whose time has come.
  void check_due();
  // Follows the holds the servers have now, telling nothing.
  void seed();
  // Adds what the merger lets through to what next() returns.
  void show(std::vector<Event> events);
  // Passes one server's event through the tracker and the merger.
  void told(size_t server, Event e);
  // When the loop must next wake up by itself.
  [[nodiscard]] std::optional<TimePoint> next_wake() const;

  lock::Locker& m_locker;
  std::vector<std::string> m_names;  // empty: every lock under the prefix
  std::string m_prefix;
  std::vector<std::unique_ptr<Feed>> m_feeds;
  HoldTracker m_tracker;
  EventMerger m_merger;
  std::unique_ptr<redis::Subscriber> m_sub;  // one subscriber connection per feed
  std::vector<Event> m_ready;
  // The holds told lost lately (name and holder), and when: exec's renewal
  // and then its release both find a lost lock, and a loss is told once.
  std::map<std::string, TimePoint> m_lost;
  bool m_reseed = false;
};

}  // namespace redlock::events
