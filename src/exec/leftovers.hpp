#pragma once

// What CMD leaves behind: processes of its process group, and descendants
// that left the group (setsid, setpgid, a daemon). redlock is a child
// subreaper while CMD runs, so those become its children when their parents
// die, and it finds them by walking its own descendants.

#include <sys/types.h>

#include <string>
#include <vector>

namespace redlock::exec {

// Makes redlock a child subreaper (PR_SET_CHILD_SUBREAPER): orphans of its
// descendants become its children instead of init's. False if the kernel
// refused.
bool adopt_orphans();

// How many processes of group `pgid` still run. Zombies do not count.
[[nodiscard]] size_t live_members(pid_t pgid);

// A process of the command's that left its process group.
struct Escaped {
  pid_t pid = 0;
  std::string name;  // its command name (comm), as /proc shows it
};

// Live (not zombie) descendants of redlock outside process group `pgid`,
// leaving out `skip` (the guard), parents before children.
[[nodiscard]] std::vector<Escaped> escaped_from(pid_t pgid, pid_t skip);

// Reaps the adopted children that have ended, and says whether any child
// may still run (besides the guard, which is never reaped here). `child`,
// CMD itself, is left alone while `child_reaped` is false.
[[nodiscard]] bool reap_adopted(pid_t child, bool child_reaped);

// "long-job pid 812, sleep pid 815", at most `most` of them named.
[[nodiscard]] std::string describe(const std::vector<Escaped>& escaped, size_t most = 3);

}  // namespace redlock::exec
