// redlock events [NAME...] [--json]: what happens to locks, one line each,
// until a stop signal (which ends it with 0).

#include <signal.h>

#include <cerrno>

#include "cli/commands.hpp"
#include "cli/setup/arguments.hpp"
#include "cli/setup/servers.hpp"
#include "cli/show/event_format.hpp"
#include "events/event_stream.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/output.hpp"
#include "util/signals.hpp"

namespace redlock::cli {

namespace {

// Takes every stop signal pending: a second Ctrl-C, or a TERM sent with
// the INT, is the same request to stop, and must not turn the 0 into 130.
void take_stops(SignalFd& stops) {
  while (stops.take() != 0) {
  }
}

}  // namespace

ExitCode run_events(const EventsOptions& o, const GlobalOptions& g, const Cancel& stop) {
  const std::vector<std::string> names = o.names.empty() ? std::vector<std::string>{} : named_locks(o.names);
  Resolved r = resolve(g);
  SignalFd stops({SIGINT, SIGTERM, SIGHUP});
  lock::Locker locker(r.endpoints, r.options, stop);
  events::EventStream stream(locker, names);
  say_held_warnings();
  StoppableStdout out;
  while (true) {
    const std::vector<events::Event> events = stream.next(stops.cancel());
    if (events.empty()) {
      take_stops(stops);
      return ExitStatus::k_ok;
    }
    std::string text;
    for (const auto& e : events) {
      text += o.json ? event_json(e) : event_line(e);
    }
    switch (out.write(text, stops.cancel())) {
      case StoppableStdout::Outcome::k_written:
        break;
      case StoppableStdout::Outcome::k_stopped:
        take_stops(stops);
        return ExitStatus::k_ok;
      case StoppableStdout::Outcome::k_failed:
        if (errno == EPIPE) {
          return reader_gone();  // `events | head -1`: quietly, as status ends
        }
        log_warning("could not write the events to standard output");
        return ExitStatus::k_output;
    }
  }
}

}  // namespace redlock::cli
