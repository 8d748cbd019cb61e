#pragma once

// acquire --while-pid PID: a keeper process that renews the lock for as
// long as PID lives, so that a script holding a lock across its steps has
// exec's safety net. The keeper is detached from the caller: a session of
// its own, its working directory /, and none of the caller's descriptors
// (0, 1 and 2 are /dev/null), so that `tok=$(redlock acquire --while-pid
// $$ NAME)` returns at once and a daemon the script starts inherits nothing
// of it. `redlock release --token T` finds it by the token
// (stop_keepers) and ends it before it releases.

#include <sys/types.h>

#include <functional>
#include <string>

#include "exec/renewer.hpp"
#include "util/signals.hpp"

namespace redlock::exec {

// Starts the keeper: a process detached as above that runs `body` and
// exits with what it returns. The caller gets the keeper's pid once it is
// running (it never waits for it: the keeper is not its child). Throws
// Error when no process can be started.
[[nodiscard]] pid_t start_keeper(const std::function<int()>& body);

// Why keep_while returned.
enum class KeptEnd {
  k_watched_gone,  // PID exited (or was never there): release the lock
  k_lost,          // the lock is no longer ours: tell PID
  k_handed_over,   // SIGUSR1: a release by the token takes over; release nothing
  k_stopped,       // SIGTERM, SIGINT or SIGHUP: release the lock
};

// The keeper's loop: waits until `watched` exits, `renewer` finds the lock
// gone (or its validity runs out unconfirmed), or one of `signals` comes
// (SIGUSR1, SIGTERM, SIGINT, SIGHUP). `renewer` is running.
[[nodiscard]] KeptEnd keep_while(pid_t watched, const Renewer& renewer, SignalFd& signals);

// The lock kept for `watched` was lost: `line` ("redlock: ..." and a
// newline) on its standard error, where its own errors go (reopened by
// /proc; nowhere if it cannot be), then SIGTERM to its process group when
// it leads one, else to it alone.
void tell_lost(pid_t watched, const std::string& line);

// Where release finds the keepers of a token on this host: a file per
// keeper in a directory of the user's own ($XDG_RUNTIME_DIR/redlock, else
// /tmp/redlock-UID), named by a hash of the token (never the token) and
// the keeper's pid. note_keeper throws Error when it cannot write it.
void note_keeper(const std::string& token, pid_t keeper);
void forget_keeper(const std::string& token, pid_t keeper);

// Ends every keeper of `token` on this host without a release of its own
// (SIGUSR1) and waits, up to two seconds, for each to be gone; the number
// of keepers ended.
int stop_keepers(const std::string& token);

}  // namespace redlock::exec
