#pragma once

#include <stdexcept>
#include <string>

namespace redlock {

// Exit statuses, from sysexits.h like flock(1), so they stay clear of the
// 1-125 range that a command run under `exec` uses for itself.
enum class ExitStatus : int {
  k_ok = 0,
  k_no = 1,            // release/renew by a token that does not hold the lock; status of a free lock
  k_usage = 64,        // EX_USAGE
  k_unavailable = 69,  // EX_UNAVAILABLE: cannot reach (a quorum of) Redis
  k_lost = 74,         // EX_IOERR: exec lost the lock while the command ran
  k_output = 74,       // EX_IOERR too: output that was asked for could not be written
  k_busy = 75,         // EX_TEMPFAIL: held by someone else, or --wait ran out
  k_protocol = 76,     // EX_PROTOCOL: Redis answered with an error or something unexpected
  k_refused = 77,      // EX_NOPERM: authentication, ACL or TLS verification failed
  k_timed_out = 124,   // as timeout(1): exec's --max-runtime ended the command
};

[[nodiscard]] constexpr int to_int(ExitStatus s) {
  return static_cast<int>(s);
}

// What a command ends with: one of redlock's own statuses, or one it passes
// on: the --conflict-exit-code a caller chose, the status of exec's command,
// or the end by a stop signal N that redlock was sent (128+N to a shell).
// Only main() turns it into a number, or into death by that signal.
class ExitCode {
 public:
  // Implicit: every ExitStatus is an exit code.
  constexpr ExitCode(ExitStatus s) : m_value(static_cast<int>(s)) {}  // NOLINT(google-explicit-constructor)
  // Ending by stop signal N, which redlock was sent: main() resets it to its
  // default action and raises it once everything is cleaned up, as
  // timeout(1) does, so that a supervisor sees a clean stop and a shell
  // 128+N (the value).
  [[nodiscard]] static constexpr ExitCode for_signal(int sig) { return ExitCode(128 + sig, sig); }
  // A status from elsewhere (0..255): a command's, or one the caller chose.
  [[nodiscard]] static constexpr ExitCode passed_on(int status) { return ExitCode(status); }

  [[nodiscard]] constexpr int value() const { return m_value; }
  [[nodiscard]] constexpr bool ok() const { return m_value == 0; }
  // The signal to end by (for_signal), or 0.
  [[nodiscard]] constexpr int signal() const { return m_signal; }
  friend constexpr bool operator==(ExitCode, ExitCode) = default;

 private:
  explicit constexpr ExitCode(int value, int sig = 0) : m_value(value), m_signal(sig) {}
  int m_value;
  int m_signal = 0;
};

// "Stop this command": thrown anywhere, caught once in main(), printed as one
// line on stderr and turned into the exit status. Expected outcomes (busy,
// not held) are return values, never this.
class Error : public std::runtime_error {
 public:
  // `answered`: the server did answer (an error it will get over, such as
  // LOADING, or an answer that came too late), as against one that could
  // not be reached.
  Error(ExitStatus status, const std::string& message, bool answered = false)
      : std::runtime_error(message), m_status(status), m_answered(answered) {}
  [[nodiscard]] ExitStatus status() const { return m_status; }
  [[nodiscard]] bool answered() const { return m_answered; }

 private:
  ExitStatus m_status;
  bool m_answered;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitStatus::k_usage, message) {}
};

}  // namespace redlock
