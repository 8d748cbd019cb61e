#include "line_model.hpp"

#include <algorithm>

#include "server.hpp"

namespace redlock::test::line_model {

using lock::ScriptName;

std::string code_of(const Step& s) {
  const std::string c = std::to_string(s.client);
  const std::string cm = c + (s.mode == k_reader ? ", k_reader" : "");
  switch (s.op) {
    case Op::k_join:
      return "join(" + cm + ")";
    case Op::k_stop:
      return "stop(" + cm + ")";
    case Op::k_crash: {
      std::string out;
      for (int i = 0; i < k_clients; ++i) {
        if (s.client & (1 << i)) {
          out += (out.empty() ? "" : ", ") + std::to_string(i);
        }
      }
      return "crash({" + out + "})";
    }
    case Op::k_leave:
      return "leave(" + c + ")";
    case Op::k_take:
      return "take(" + cm + ")";
    case Op::k_brief:
      return "brief(" + cm + ")";
    case Op::k_reenter:
      return "reenter(" + cm + ")";
    case Op::k_renew:
      return "renew(" + c + ")";
    case Op::k_release:
      return "release(" + c + ")";
    case Op::k_release_all:
      return "release_all(" + c + ")";
    case Op::k_break:
      return "break_lock()";
    case Op::k_tick:
      break;
  }
  return "tick()";
}

std::string waiter_id(int c) {
  return "W" + std::to_string(c);
}

size_t index_of(const Model& m, int c) {
  size_t i = 0;
  while (i < m.line.size() && m.line[i].client != c) {
    ++i;
  }
  return i;
}

bool waits(const Model& m, int c) {
  const size_t at = index_of(m, c);
  return at < m.line.size() && !m.line[at].dead;
}

bool holds(const Model& m, int c) {
  return std::any_of(m.holders.begin(), m.holders.end(), [c](const Holder& h) { return h.client == c; });
}

namespace {

std::string pid_of(int c) {
  return std::to_string(100 + c);
}
std::string ms(Millis d) {
  return std::to_string(d.count());
}

Holder* holder_of(Model& m, int c) {
  for (auto& h : m.holders) {
    if (h.client == c) {
      return &h;
    }
  }
  return nullptr;
}

std::optional<Mode> held_mode(const Model& m) {
  if (m.holders.empty()) {
    return std::nullopt;
  }
  return m.holders.front().mode;
}

// Whether a claim in `mode` may be granted beside the holders (in `held`).
bool admits(std::optional<Mode> held, Mode mode) {
  return !held || (*held == k_reader && mode == k_reader);
}

// The live waiters at the head that may go now: a writer alone, or the
// readers before the first writer.
std::vector<int> heads(const Model& m, std::optional<Mode> held) {
  std::vector<int> out;
  for (const auto& w : m.line) {
    if (w.dead) {
      continue;
    }
    if (!admits(held, w.mode)) {
      break;
    }
    out.push_back(w.client);
    held = w.mode;
  }
  return out;
}

// Whether c (standing at `at`: a newcomer is behind everyone) may take the
// lock in `mode` now.
bool its_turn(const Model& m, size_t at, Mode mode) {
  if (!admits(held_mode(m), mode)) {
    return false;
  }
  for (size_t i = 0; i < at && i < m.line.size(); ++i) {
    if (!m.line[i].dead && (mode == k_writer || m.line[i].mode == k_writer)) {
      return false;
    }
  }
  return true;
}

const std::string& channel() {
  return keys().channel;
}

// Drops c's entry.
void drop(Model& m, int c) {
  m.line.erase(std::remove_if(m.line.begin(), m.line.end(), [c](const Waiter& w) { return w.client == c; }),
               m.line.end());
  if (m.line.empty()) {
    m.line_lasts = false;
  }
}

// Drops the dead entries; whether there were any.
bool prune(Model& m) {
  const size_t before = m.line.size();
  m.line.erase(std::remove_if(m.line.begin(), m.line.end(), [](const Waiter& w) { return w.dead; }), m.line.end());
  if (m.line.empty()) {
    m.line_lasts = false;
  }
  return m.line.size() < before;
}

// The line moved: an entry now within k_near of the head has its far lease
// cut, and is told.
void moved(Model& m, Expect& e) {
  for (size_t i = 0; i < m.line.size() && i < k_near; ++i) {
    if (m.line[i].far) {
      m.line[i].far = false;
      const std::string id = waiter_id(m.line[i].client);
      e.published.push_back(channel() + ":" + id + " moved " + id);
    }
  }
}

// Names the heads that may go now, on the lock's channel and each one's own.
void wake(const Model& m, Expect& e) {
  const std::vector<int> ids = heads(m, held_mode(m));
  std::string msg = "released";
  for (int c : ids) {
    msg += " " + waiter_id(c);
  }
  e.published.push_back(channel() + " " + msg);
  for (int c : ids) {
    e.published.push_back(channel() + ":" + waiter_id(c) + " " + msg);
  }
}

// An acquire: with a waiter id (`wait`) or not, with the client's token to
// re-enter or not.
struct Ask {
  int client = 0;
  Mode mode = k_writer;
  bool wait = false;
  bool reenter = false;
  Millis ttl = k_long;
  Millis lease = k_long;
};

Expect acquire(Model& m, const Ask& a) {
  Expect e;
  const int c = a.client;
  const std::string token = "t" + std::to_string(++m.tokens);
  lock::AcquireArgs args;
  args.token = token;
  args.ttl = a.ttl;
  args.host = "h" + std::to_string(c);
  args.pid = 100 + c;
  args.cmd = "c" + std::to_string(c);
  args.mode = a.mode;
  args.lease = a.lease;
  Holder* mine = holder_of(m, c);
  if (a.reenter) {
    args.reenter = mine->token;
  }
  if (a.wait) {
    args.waiter = waiter_id(c);
  }
  e.call = {ScriptName::k_acquire, lock::to_args(keys(), args)};

  if (prune(m)) {
    moved(m, e);
  }
  if (a.reenter) {
    if (mine->mode == k_reader && a.mode != k_reader) {
      e.reply = "{'upgrade', 'shared', ''}";
      return e;
    }
    ++mine->count;
    e.reentered = mine->token;
    e.reply = "{'reentered', '" + mine->token + "', #, " + std::to_string(mine->count) + ", " + ms(a.ttl) + "}";
    return e;
  }
  const size_t at = index_of(m, c);
  if (its_turn(m, at, a.mode)) {
    m.lapsed.erase(c);
    m.holders.push_back({c, token, a.mode, 1, a.ttl == k_short});
    e.granted = token;
    e.reply = "{'acquired', '" + token + "', #, 1, " + ms(a.ttl) + "}";
    if (a.wait) {
      drop(m, c);
      moved(m, e);
    }
    return e;
  }

  // Busy: {'busy', ttl left, host, pid, place, ahead, ticket, cmd, holders,
  // kept, held ms (-1: nobody holds it), full}.
  e.held = held_mode(m).has_value();
  std::string who = "'', ''";
  std::string what = "'', 0, '', -1, ''";
  if (m.holders.size() == 1) {
    const int h = m.holders.front().client;
    who = "'h" + std::to_string(h) + "', '" + pid_of(h) + "'";
    what = "'c" + std::to_string(h) + "', 1, '', #, ''";
  } else if (!m.holders.empty()) {
    who = "'h#', '#'";
    what = "'c#', " + std::to_string(m.holders.size()) + ", '', #, ''";
  }
  const auto live = std::count_if(m.line.begin(), m.line.end(), [](const Waiter& w) { return !w.dead; });
  std::string place = "0, " + std::to_string(live) + ", 0";
  if (a.wait) {
    e.waiter = c;
    e.new_entry = at == m.line.size();
    if (e.new_entry) {
      for (const auto& w : m.line) {
        e.behind.push_back(w.client);
      }
      m.line.push_back({c, a.mode});
    }
    Waiter& w = m.line[at];
    w.far = a.lease.count() > k_near_lease && at >= k_near;
    w.stopping = a.lease < k_long;
    if (!w.stopping) {
      m.line_lasts = true;
    }
    place = std::to_string(at + 1) + ", " + std::to_string(at) + ", #";
  }
  e.reply = "{'busy', #, " + who + ", " + place + ", " + what + "}";
  return e;
}

Expect leave_line(Model& m, int c) {
  Expect e;
  e.call = {ScriptName::k_leave, lock::to_args(keys(), lock::LeaveArgs{waiter_id(c)})};
  const bool was = index_of(m, c) < m.line.size();
  drop(m, c);
  prune(m);
  // Whoever it held up can go now.
  if (was && !heads(m, held_mode(m)).empty()) {
    wake(m, e);
  }
  moved(m, e);
  e.reply = "{'left'}";
  return e;
}

// The token the client renews or releases with: the one it holds, or the
// one it held.
std::string token_of(Model& m, int c) {
  const Holder* h = holder_of(m, c);
  return h ? h->token : m.lapsed.at(c);
}

Expect release_lock(Model& m, int c, bool all) {
  Expect e;
  lock::ReleaseArgs args;
  args.token = token_of(m, c);
  args.levels = all ? lock::ReleaseArgs::Levels::k_all : lock::ReleaseArgs::Levels::k_one;
  e.call = {ScriptName::k_release, lock::to_args(keys(), args)};
  Holder* h = holder_of(m, c);
  if (!h) {
    e.reply = "{'notheld'}";
    return e;
  }
  if (!all && h->count > 1) {
    --h->count;
    e.reply = "{'decremented', 1, " + std::to_string(h->count) + "}";
    return e;
  }
  const int levels = h->count;
  m.lapsed[c] = h->token;
  m.holders.erase(m.holders.begin() + (h - m.holders.data()));
  if (prune(m)) {
    moved(m, e);
  }
  wake(m, e);
  e.reply = "{'released', " + std::to_string(levels) + ", " + std::to_string(m.holders.size()) + "}";
  return e;
}

Expect renew_lock(Model& m, int c) {
  Expect e;
  e.call = {ScriptName::k_renew, lock::to_args(keys(), lock::RenewArgs{token_of(m, c), k_long})};
  const Holder* h = holder_of(m, c);
  e.reply = !h                    ? "{'notheld'}"
            : h->mode == k_reader ? "{'renewed', " + ms(k_long) + ", 'shared', '0'}"
                                  : "{'renewed', " + ms(k_long) + ", 'exclusive', '1'}";
  return e;
}

Expect break_it(Model& m) {
  Expect e;
  e.call = {ScriptName::k_break, lock::to_args(keys(), lock::BreakArgs{})};
  if (m.holders.empty()) {
    e.reply = "{'free'}";
    return e;
  }
  std::vector<Holder> gone = m.holders;
  std::sort(gone.begin(), gone.end(), [](const Holder& x, const Holder& y) { return x.token < y.token; });
  std::string list;
  for (const auto& h : gone) {
    const std::string c = std::to_string(h.client);
    list += std::string(list.empty() ? "" : ", ") + "{'" + h.token + "', 'h" + c + "', '" + pid_of(h.client) + "', 'c" +
            c + "', '#', '#', '" + std::to_string(h.count) + "'}";
    m.lapsed[h.client] = h.token;
  }
  const bool readers = held_mode(m) == k_reader;
  m.holders.clear();
  if (prune(m)) {
    moved(m, e);
  }
  wake(m, e);
  e.reply = std::string("{'broken', ") + (readers ? "'shared', '0'" : "'exclusive', '1'") + ", '#', {" + list + "}}";
  return e;
}

// Time moves past every short lease and TTL.
void pass_time(Model& m) {
  for (auto& w : m.line) {
    if (w.stopping) {
      w.dead = true;
      w.stopping = false;
    }
  }
  // Keys whose every beat was short are gone with their last lease.
  if (!m.line_lasts) {
    m.line.clear();
  }
  for (const auto& h : m.holders) {
    if (h.brief) {
      m.lapsed[h.client] = h.token;
    }
  }
  m.holders.erase(std::remove_if(m.holders.begin(), m.holders.end(), [](const Holder& h) { return h.brief; }),
                  m.holders.end());
}

}  // namespace

bool allowed(const Model& m, const Step& s) {
  const bool in_line = waits(m, s.client);
  switch (s.op) {
    case Op::k_join:
    case Op::k_stop:
      // A waiter keeps the mode it joined in.
      return !holds(m, s.client) && (!in_line || m.line[index_of(m, s.client)].mode == s.mode);
    case Op::k_take:
    case Op::k_brief:
      return !holds(m, s.client) && !in_line;
    case Op::k_crash:
      for (int c = 0; c < k_clients; ++c) {
        if ((s.client & (1 << c)) && waits(m, c)) {
          return true;
        }
      }
      return false;
    case Op::k_reenter:
      return holds(m, s.client);
    case Op::k_renew:
    case Op::k_release:
    case Op::k_release_all:
      return holds(m, s.client) || m.lapsed.count(s.client) > 0;
    case Op::k_leave:
    case Op::k_break:
    case Op::k_tick:
      break;
  }
  return true;
}

Play next(Model& m, const Step& s) {
  Play p;
  switch (s.op) {
    case Op::k_join:
      p.calls.push_back(acquire(m, {s.client, s.mode, true}));
      return p;
    case Op::k_stop:
      p.calls.push_back(acquire(m, {s.client, s.mode, true, false, k_long, k_short}));
      p.pause = k_pause;
      break;
    case Op::k_crash:
      for (int c = 0; c < k_clients; ++c) {
        if ((s.client & (1 << c)) && waits(m, c)) {
          p.calls.push_back(acquire(m, {c, m.line[index_of(m, c)].mode, true, false, k_long, k_crash_lease}));
        }
      }
      p.pause = k_crash_lease + k_pause;
      break;
    case Op::k_take:
      p.calls.push_back(acquire(m, {s.client, s.mode}));
      return p;
    case Op::k_brief:
      p.calls.push_back(acquire(m, {s.client, s.mode, false, false, k_short}));
      p.pause = k_pause;
      break;
    case Op::k_reenter:
      p.calls.push_back(acquire(m, {s.client, s.mode, false, true}));
      return p;
    case Op::k_leave:
      p.calls.push_back(leave_line(m, s.client));
      return p;
    case Op::k_renew:
      p.calls.push_back(renew_lock(m, s.client));
      return p;
    case Op::k_release:
    case Op::k_release_all:
      p.calls.push_back(release_lock(m, s.client, s.op == Op::k_release_all));
      return p;
    case Op::k_break:
      p.calls.push_back(break_it(m));
      return p;
    case Op::k_tick:
      p.pause = k_pause;
      break;
  }
  pass_time(m);
  return p;
}

std::string describe(const Model& m) {
  std::string out = "line:";
  for (const auto& w : m.line) {
    out += " " + waiter_id(w.client) + (w.mode == k_reader ? "(reader)" : "") + (w.dead ? "(dead)" : "");
  }
  out += "; holders:";
  for (const auto& h : m.holders) {
    out += " " + h.token + "(client " + std::to_string(h.client) + (h.mode == k_reader ? ", reader" : "") + ", count " +
           std::to_string(h.count) + ")";
  }
  return out;
}

}  // namespace redlock::test::line_model
