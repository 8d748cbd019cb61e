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
};

[[nodiscard]] constexpr int to_int(ExitStatus s) {
  return static_cast<int>(s);
}

// "Stop this command": thrown anywhere, caught once in main(), printed as one
// line on stderr and turned into the exit status. Expected outcomes (busy,
// not held) are return values, never this.
class Error : public std::runtime_error {
 public:
  Error(ExitStatus status, const std::string& message) : std::runtime_error(message), m_status(status) {}
  [[nodiscard]] ExitStatus status() const { return m_status; }

 private:
  ExitStatus m_status;
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(ExitStatus::k_usage, message) {}
};

}  // namespace redlock
