#include "exec/supervisor.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "exec/leftovers.hpp"
#include "exec/wait_status.hpp"
#include "util/duration.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::exec {
namespace {

const char* signal_name(int sig) {
  const char* d = sigabbrev_np(sig);
  return d ? d : "?";
}

// Where the lock stands, as far as the supervisor knows.
enum class Hold {
  k_held,      // renewed in time so far
  k_lost,      // found lost (lost_reason says why), not yet acted upon
  k_acted_on,  // lost, and CMD's group got the --on-lost policy
};

// One poll loop over the stop signals and the renewer's "lost" descriptor,
// with deadlines for the lock's validity and for SIGKILL after SIGTERM.
// CMD's process group is `child` for as long as any member lives (the kernel
// does not hand out a group's number while it has members), so signals go to
// -child even after CMD itself has been reaped. Processes that left the
// group are found among redlock's descendants (redlock adopts orphans).
class Supervisor {
 public:
  Supervisor(pid_t child, Renewer& renewer, const Policy& policy, SignalFd& signals, int tty, Continued& continued,
             const GroupGuard& guard, Revocation* revocation)
      : m_child(child),
        m_renewer(renewer),
        m_revocation(revocation),
        m_policy(policy),
        m_signals(signals),
        m_tty(tty),
        m_continued(continued),
        m_guard(guard) {}

  Finished run() {
    while (!m_gone) {
      const auto now = Clock::now();
      TimePoint wake = now + std::chrono::hours(24);
      check_renewer(now, wake);
      check_listener(now, wake);
      check_validity(now, wake);
      act_on_loss(now);
      check_runtime(now, wake);
      check_kill_deadline(now, wake);
      if (m_reaped) {
        // Nothing says when the last of a group is gone: look again soon.
        wake = std::min(wake, now + Millis(20));
        if (m_killed) {
          kill(-m_child, SIGKILL);  // again, for any process forked meanwhile
          end_escaped(SIGKILL);
        } else if (m_kill_at != k_none) {
          end_escaped(SIGTERM);  // any adopted meanwhile, as its parent died
        }
      }
      wait_until(wake);
      reap();
    }
    // The group ended past the deadline before this loop could see it: a
    // stopped redlock, whose guard killed the group when the validity ran out.
    if (m_hold == Hold::k_held && Clock::now() >= m_renewer.validity_end() - m_policy.kill_after) {
      m_hold = Hold::k_lost;
      m_lost_reason = "no renewal was confirmed before the lock's validity ran out (redlock itself was stopped)";
    }
    m_done.lost = m_hold != Hold::k_held;
    if (m_hold == Hold::k_lost) {
      set_exit_field(static_cast<int>(ExitStatus::k_lost));
      log_warning("lost the lock: {}", m_lost_reason);  // noticed in the same instant the group ended
    }
    return m_done;
  }

 private:
  // The renewer's thread starts when it is soon needed (see start_by()):
  // a command that ends in milliseconds never creates it.
  void check_renewer(TimePoint now, TimePoint& wake) {
    if (m_renewer.started() || m_hold != Hold::k_held) {
      return;
    }
    if (now >= m_renewer.start_by()) {
      m_renewer.start();
    } else {
      wake = std::min(wake, m_renewer.start_by());
    }
  }

  // The revoke listener starts once CMD has run a moment: a command that
  // ends in milliseconds never makes its connections (a revoke made before
  // it starts is read from the lock's mark).
  void check_listener(TimePoint now, TimePoint& wake) {
    if (m_revocation == nullptr || m_revocation->started() || m_reaped) {
      return;
    }
    if (now >= m_started + k_listen_after) {
      m_revocation->start();
    } else {
      wake = std::min(wake, m_started + k_listen_after);
    }
  }

  // A revoke: CMD's group is ended as on a loss, with the revoke's grace,
  // while the lock is still held and renewed; the release follows.
  void act_on_revoke(TimePoint now) {
    const RevokeNotice n = m_revocation->notice();
    const Millis grace = n.grace.value_or(m_policy.kill_after);
    m_done.revoked = true;
    if (!m_reaped) {
      terminate(now, grace);
    }
    set_exit_field(static_cast<int>(ExitStatus::k_lost));
    log_warning(
        "{} was revoked by {} (pid {}); sending SIGTERM to the command (SIGKILL after {}), then releasing the "
        "lock (exit status 74)",
        n.name.empty() ? std::string("the lock") : escape_for_terminal(n.name), escape_for_terminal(n.host),
        escape_for_terminal(n.pid), format_duration(grace));
  }

  // No confirmed renewal by validity - kill_after counts as lost.
  void check_validity(TimePoint now, TimePoint& wake) {
    if (m_hold != Hold::k_held) {
      return;
    }
    const TimePoint deadline = m_renewer.validity_end() - m_policy.kill_after;
    if (now >= deadline) {
      m_hold = Hold::k_lost;
      m_lost_reason =
          "no renewal was confirmed before the lock's validity ran out (is Redis reachable? was redlock stopped?)";
    } else {
      wake = std::min(wake, deadline);
    }
  }

  void act_on_loss(TimePoint now) {
    if (m_hold != Hold::k_lost) {
      return;
    }
    set_exit_field(static_cast<int>(ExitStatus::k_lost));
    // Stopped (Ctrl-Z, SIGSTOP) past the validity, redlock finds on waking
    // that its guard acted meanwhile: say what happened, not what it would
    // do now.
    if (m_guard.fired() && m_policy.on_lost != OnLost::k_ignore) {
      kill_group();  // what may be left, out of the group too
      m_hold = Hold::k_acted_on;
      m_renewer.stop();
      log_warning(
          "lost the lock: redlock was stopped past the lock's validity, and its guard killed the command when the "
          "validity ran out (exit status 74)");
      return;
    }
    // The signal first, then the line that tells it: a log that cannot be
    // written at once must not delay what ends the command.
    switch (m_policy.on_lost) {
      case OnLost::k_term:
        terminate(now, m_policy.kill_after);
        log_warning("lost the lock: {}; sending SIGTERM to the command (SIGKILL after {}; exit status 74)",
                    m_lost_reason, format_duration(m_policy.kill_after));
        break;
      case OnLost::k_kill:
        kill_group();
        log_warning("lost the lock: {}; killing the command (exit status 74)", m_lost_reason);
        break;
      case OnLost::k_ignore:
        log_warning("lost the lock: {}; the command goes on (--on-lost ignore; exit status 74)", m_lost_reason);
        break;
    }
    m_hold = Hold::k_acted_on;
    m_renewer.stop();
  }

  // --warn-after: one line, once, while CMD itself runs. --max-runtime:
  // CMD's group is ended as on a loss (SIGTERM, SIGKILL after kill_after)
  // while the lock is still held; the release follows once it is gone.
  void check_runtime(TimePoint now, TimePoint& wake) {
    if (m_reaped) {
      return;
    }
    const Millis ran = std::chrono::duration_cast<Millis>(now - m_started);
    if (m_policy.warn_after && !m_warned) {
      if (ran >= *m_policy.warn_after) {
        m_warned = true;
        log_warning("the command (pid {}) still runs after {} (--warn-after {})", m_child, format_duration(ran),
                    format_duration(*m_policy.warn_after));
      } else {
        wake = std::min(wake, m_started + *m_policy.warn_after);
      }
    }
    if (!m_policy.max_runtime || m_done.timed_out || m_hold == Hold::k_acted_on) {
      return;
    }
    if (ran < *m_policy.max_runtime) {
      wake = std::min(wake, m_started + *m_policy.max_runtime);
      return;
    }
    m_done.timed_out = true;
    terminate(now, m_policy.kill_after);
    set_exit_field(static_cast<int>(ExitStatus::k_timed_out));
    log_warning(
        "the command ran for {} (--max-runtime {}); sending SIGTERM to it (SIGKILL after {}), then releasing the "
        "lock (exit status 124)",
        format_duration(ran), format_duration(*m_policy.max_runtime), format_duration(m_policy.kill_after));
  }

  void check_kill_deadline(TimePoint now, TimePoint& wake) {
    if (m_kill_at == k_none) {
      return;
    }
    if (now >= m_kill_at) {
      kill_group();
      log_warning("the command did not stop within {}; sending SIGKILL to its process group",
                  m_done.revoked ? "the revoke's grace" : "--kill-after");
    } else {
      wake = std::min(wake, m_kill_at);
    }
  }

  void terminate(TimePoint now, Millis kill_after) {
    kill(-m_child, SIGTERM);
    kill(-m_child, SIGCONT);  // a stopped process must wake up to die
    if (m_kill_at == k_none && !m_killed) {
      m_kill_at = now + kill_after;
    }
    end_escaped(SIGTERM);
  }

  void kill_group() {
    kill(-m_child, SIGKILL);
    m_killed = true;
    m_kill_at = k_none;
    end_escaped(SIGKILL);
  }

  // What left CMD's group (setsid, a daemon) must not outlive the lock
  // either: SIGTERM once each (with SIGCONT), or SIGKILL. The first time
  // any is found, one line says which.
  void end_escaped(int sig) {
    const std::vector<Escaped> escaped = escaped_from(m_child, m_guard.pid());
    for (const Escaped& e : escaped) {
      if (sig == SIGKILL) {
        kill(e.pid, SIGKILL);
      } else if (m_termed.insert(e.pid).second) {
        kill(e.pid, SIGTERM);
        kill(e.pid, SIGCONT);
      }
    }
    if (!escaped.empty() && !m_said_escaped) {
      m_said_escaped = true;
      const size_t n = escaped.size();
      const char* action = sig == SIGKILL ? "killing them" : "sending SIGTERM (SIGKILL after --kill-after)";
      if (m_reaped) {
        log_warning("the command exited but left {} process{} outside its process group ({}); {}{}", n,
                    n == 1 ? "" : "es", describe(escaped), action,
                    m_hold == Hold::k_held ? " before the lock is released" : "");
      } else {
        log_warning("{} process{} of the command run{} outside its process group ({}); {} too", n, n == 1 ? "" : "es",
                    n == 1 ? "s" : "", describe(escaped), action);
      }
    }
  }

  // Waits for a signal, the renewer's verdict, or `wake`; forwards signals.
  void wait_until(TimePoint wake) {
    const bool held = m_hold == Hold::k_held;
    const bool listening = held && !m_done.revoked && m_revocation != nullptr && m_revocation->started();
    pollfd fds[4] = {{m_signals.fd(), POLLIN, 0},
                     {m_continued.fd(), POLLIN, 0},
                     {m_renewer.lost_fd(), POLLIN, 0},
                     {listening ? m_revocation->fd() : -1, POLLIN, 0}};
    const auto ms = std::chrono::ceil<Millis>(wake - Clock::now()).count();
    const int n = ::poll(fds, held ? 4 : 2, static_cast<int>(std::clamp<long long>(ms, 0, 3600LL * 1000)));
    if (n < 0 && errno != EINTR) {
      throw Error(ExitStatus::k_unavailable, fmt::format("poll failed: {}", std::strerror(errno)));
    }
    if (listening && (fds[3].revents & POLLIN)) {
      if (const RevokeNotice notice = m_revocation->notice(); notice.broken) {
        // Broken: the lock is gone now, not at the next renewal.
        m_hold = Hold::k_lost;
        m_lost_reason = broken_reason(notice);
      } else {
        act_on_revoke(Clock::now());
      }
    }
    if ((fds[1].revents & POLLIN) && m_continued.take()) {
      resume();
    }
    if (held && (fds[2].revents & POLLIN)) {
      m_hold = Hold::k_lost;
      m_lost_reason = m_renewer.lost_reason();
    }
    if (fds[0].revents & POLLIN) {
      forward_signals();
    }
  }

  // Passes the signals redlock received on to the command's group.
  void forward_signals() {
    while (const int sig = m_signals.take()) {
      if (sig == SIGCHLD) {
        continue;
      }
      kill(-m_child, sig);
      if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
        m_done.stop_signal = sig;
      }
      if (sig != SIGUSR1 && sig != SIGUSR2) {
        kill(-m_child, SIGCONT);  // a stopped command must wake up to act on a stop signal
      }
      log_debug("forwarded SIG{} to the command's process group", signal_name(sig));
    }
  }

  // Reaps CMD on every wake-up (SIGCHLD may have been merged with another
  // signal), and then watches for the rest of its group, and what left it,
  // to be gone: once the group is empty, every process CMD started that
  // still runs is a child of redlock's (an orphan it adopted) or a
  // descendant of one. Adopted children that end are reaped here too.
  void reap() {
    if (m_reaped) {
      m_gone = live_members(m_child) == 0 && !reap_adopted(m_child, true);
      return;
    }
    (void)reap_adopted(m_child, false);
    int wstatus = 0;
    if (waitpid(m_child, &wstatus, WNOHANG | WUNTRACED) != m_child) {
      return;
    }
    if (WIFSTOPPED(wstatus)) {
      suspend_with(WSTOPSIG(wstatus));
      return;
    }
    m_done.status = exit_status_of(wstatus);
    m_done.signalled = WIFSIGNALED(wstatus);
    m_reaped = true;
    // What CMD left behind in its group must not outlive the lock: it is
    // terminated (SIGTERM, SIGKILL after --kill-after) while the lock is
    // still held and renewed.
    const size_t left = live_members(m_child);
    const bool adopted = reap_adopted(m_child, true);
    if (left == 0 && !adopted) {
      m_gone = true;
      return;
    }
    if (left == 0) {
      if (m_killed) {
        end_escaped(SIGKILL);
      } else {
        terminate(Clock::now(), m_policy.kill_after);
      }
      return;
    }
    const char* doing = m_killed              ? "waiting for them to die"
                        : m_kill_at != k_none ? "waiting for them, SIGKILL at --kill-after"
                                              : "sending SIGTERM (SIGKILL after --kill-after)";
    if (m_killed) {
      end_escaped(SIGKILL);
    } else {
      terminate(Clock::now(), m_policy.kill_after);
    }
    // After a loss there is no lock left to release: only the processes.
    log_warning("the command exited but left {} process{} in its process group; {}{}", left, left == 1 ? "" : "es",
                doing, m_hold == Hold::k_held ? " before the lock is released" : "");
  }

  // Job control. Ctrl-Z stops CMD, whose group has the terminal, and the
  // shell waits for redlock; a CMD in the background (redlock run with &,
  // or after bg) that reads the terminal, or writes to it under `stty
  // tostop`, is stopped by SIGTTIN or SIGTTOU in a group the shell does not
  // know. Either way redlock stops too, with the same signal: it hands the
  // terminal back to its own group (if CMD had it) and stops that whole
  // group, so the shell shows the job stopped and gives its prompt back.
  // Once continued (resume()), CMD is continued. While redlock is stopped
  // nothing renews the lock; past its validity the guard ends CMD's group.
  // A CMD stopped otherwise (kill -STOP), or without a terminal, stays as
  // it is.
  void suspend_with(int sig) {
    if (m_tty < 0 || (sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU)) {
      return;
    }
    // In the foreground without the terminal (fg before redlock saw the
    // SIGCONT): CMD only needs it, and goes on.
    if (sig != SIGTSTP && terminal_to_command(m_tty, m_child)) {
      kill(-m_child, SIGCONT);
      return;
    }
    log_debug("the command was stopped by SIG{}; stopping too", signal_name(sig));
    // The terminal goes back to redlock's group only if the command had it:
    // a command stopped reading in the background must not take it from
    // the shell.
    terminal_to_redlock(m_tty, m_child);
    m_stopped_along = true;
    stop_group(sig);
    // No SIGCONT: the group could not stop (it is orphaned); CMD stays
    // stopped until redlock is continued.
    if (m_continued.take()) {
      resume();
    }
  }

  // Redlock was continued (fg, bg; it may not have been stopped: fg of a
  // job started with &). In the foreground, CMD's group gets the terminal,
  // so that Ctrl-C and Ctrl-Z reach it; if redlock stopped with CMD, CMD is
  // continued (in the background, one that reads the terminal stops again,
  // and redlock with it, as any job does).
  void resume() {
    terminal_to_command(m_tty, m_child);
    if (m_stopped_along) {
      m_stopped_along = false;
      kill(-m_child, SIGCONT);
    }
  }

  // SIGKILL deadline after a SIGTERM; max() while none is due. (A
  // std::optional here trips GCC 12's -Wmaybe-uninitialized at -O2.)
  static constexpr TimePoint k_none = TimePoint::max();
  // How long CMD runs before the revoke listener starts.
  static constexpr Millis k_listen_after{50};

  pid_t m_child;
  TimePoint m_started = Clock::now();  // when CMD was started, give or take the constructor
  bool m_warned = false;               // --warn-after's line was said
  Renewer& m_renewer;
  Revocation* m_revocation;  // nullptr: nobody listens for a revoke
  const Policy& m_policy;
  SignalFd& m_signals;
  int m_tty;                     // the controlling terminal, -1 for none
  Continued& m_continued;        // SIGCONT to redlock
  bool m_stopped_along = false;  // redlock stopped because CMD did, and CMD waits to be continued
  const GroupGuard& m_guard;     // a child of redlock's that is not CMD's
  Finished m_done;
  Hold m_hold = Hold::k_held;
  std::string m_lost_reason;
  TimePoint m_kill_at = k_none;
  bool m_killed = false;        // SIGKILL was sent to the group
  bool m_reaped = false;        // CMD itself has exited
  bool m_gone = false;          // ... and so has every process left in its group, or that left it
  std::set<pid_t> m_termed;     // processes that left the group and got SIGTERM
  bool m_said_escaped = false;  // the line naming them was said
};

}  // namespace

Finished supervise(const Command& cmd, Renewer& renewer, const Policy& policy, SignalFd& signals, GroupGuard& guard,
                   Revocation* revocation) {
  // Descendants that leave CMD's group become redlock's children when their
  // parents die, instead of init's: redlock can end them before the release.
  if (!adopt_orphans()) {
    log_debug("cannot become a child subreaper: {}", std::strerror(errno));
  }
  // Job control goes by the controlling terminal, whatever standard input is.
  const Fd tty = controlling_terminal();
  Continued continued;  // before the renewer's thread, which inherits the mask
  const Spawned child = spawn(cmd, tty.get());
  // Started before the renewer's thread exists (the supervisor starts it
  // when it is soon needed). Under --on-lost ignore the command may run on
  // past the lock, so the guard keeps no deadline.
  // --max-runtime holds even while redlock is stopped: the guard ends the
  // group when its grace is over too.
  std::optional<TimePoint> hard_deadline;
  if (policy.max_runtime) {
    hard_deadline = Clock::now() + *policy.max_runtime + policy.kill_after;
  }
  if (policy.on_lost == OnLost::k_ignore) {
    (void)guard.start(child.pid, std::nullopt, hard_deadline);
  } else if (guard.start(child.pid, renewer.validity_end(), hard_deadline)) {
    renewer.on_renewed([&guard](TimePoint end) { guard.extend(end); });
  }
  Finished done = Supervisor(child.pid, renewer, policy, signals, tty.get(), continued, guard, revocation).run();
  done.started = child.started;
  guard.done();  // the group is gone
  if (guard.fired_hard() && !done.timed_out) {
    set_exit_field(static_cast<int>(ExitStatus::k_timed_out));
    log_warning("the command ran past --max-runtime while redlock was stopped, and its guard killed it");
    done.timed_out = true;
  }
  if (guard.fired() && !done.lost) {
    // A renewal once redlock ran again may have found the key still there;
    // the command was killed all the same, and for this.
    set_exit_field(static_cast<int>(ExitStatus::k_lost));
    log_warning("lost the lock: redlock was stopped past the lock's validity, and its guard killed the command");
    done.lost = true;
  }
  renewer.stop();
  // Back to redlock's group, unless someone else has the terminal now (the
  // shell, after Ctrl-Z and bg). CMD may have had it without having it
  // first (fg of a job started with &).
  terminal_to_redlock(tty.get(), child.pid);
  return done;
}

}  // namespace redlock::exec
