#include "doctor/audit.hpp"

#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "lock/keys.hpp"
#include "lock/lua_scripts.hpp"  // made from src/lock/lua/ at build time
#include "redis/connection.hpp"
#include "redis/fanout.hpp"
#include "util/log.hpp"

namespace redlock::doctor {

namespace {

using redis::Connection;
using redis::Reply;

// The name whose keys the rights are checked on: any name would do, as an
// ACL grants keys by pattern; nothing is written to them.
constexpr const char* k_probe_name = "doctor";

// On a Redis Cluster the rights check runs on the node of its key's slot:
// a node that answers MOVED is asked again with this many other names at
// once, one of which its slots almost surely hold.
constexpr int k_probe_names = 32;

// The rights check (lua/rights-1.lua) on the keys of lock `name`.
std::vector<std::string> rights_check(const std::string& prefix, const std::string& name) {
  const lock::Keys keys = lock::keys_for(prefix, name);
  return {"EVAL",       std::string(lock::lua::k_rights.text),
          "1",          keys.lock,
          keys.fence,   keys.channel,
          keys.line,    keys.beats,
          keys.waiters, keys.writers,
          keys.runs,    keys.index};
}

bool moved(const Reply& r) {
  return r.is_error() && r.str.rfind("MOVED ", 0) == 0;
}

// The CONFIG values the checks read, one CONFIG GET each (several names in
// one CONFIG GET need Redis 7).
constexpr const char* k_config[] = {"maxmemory", "maxmemory-policy",      "appendonly", "appendfsync",
                                    "save",      "min-replicas-to-write", "maxclients"};

// A server's error, on one line and without the space Redis leaves after
// "with args beginning with:".
std::string server_words(const Reply& r) {
  std::string words = one_line(mask_secrets(r.str));
  words.erase(words.find_last_not_of(' ') + 1);
  return words;
}

// Drives `conns` (those not failed yet) until each has its replies; a
// connection that fails marks its server's facts.
void run_live(std::vector<std::unique_ptr<Connection>>& conns, std::vector<ServerFacts>& facts, const Cancel& cancel) {
  std::vector<Connection*> live;
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!facts[i].failure) {
      live.push_back(conns[i].get());
    }
  }
  redis::run_all(live, cancel);
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!facts[i].failure && conns[i]->failure()) {
      facts[i].failure = conns[i]->failure();
      conns[i]->reset();
    }
  }
}

// Whether PING's reply (the first of `replies`) refused: then f.failure
// says so.
bool ping_refused(const std::vector<Reply>& replies, ServerFacts& f) {
  if (replies.empty() || !replies[0].is_error()) {
    return false;
  }
  f.failure = redis::Failure{redis::classify_error(replies[0].str),
                             fmt::format("Redis at {} answered PING with: {}{}", f.server, server_words(replies[0]),
                                         redis::error_hint(replies[0].str)),
                             true};
  return true;
}

// PING: whether it answers, and accepts the credentials the connection
// sent first.
void reach(std::vector<std::unique_ptr<Connection>>& conns, std::vector<ServerFacts>& facts, const Cancel& cancel) {
  for (auto& c : conns) {
    c->queue({"PING"});
  }
  run_live(conns, facts, cancel);
  for (size_t i = 0; i < conns.size(); ++i) {
    if (facts[i].failure) {
      continue;
    }
    (void)ping_refused(conns[i]->take_replies(), facts[i]);
  }
}

// The shortest of three round trips of TIME, alone on the connection, and
// the server's clock against this host's at the middle of that one.
void time_server(Connection& conn, ServerFacts& f) {
  for (int k = 0; k < 3; ++k) {
    const auto wall_before = std::chrono::system_clock::now();
    const auto before = Clock::now();
    Reply r;
    try {
      r = redis::call(conn, {"TIME"});
    } catch (const Error& e) {
      f.failure = redis::Failure{e.status(), e.what(), false};
      return;
    }
    const auto rtt = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - before);
    if (!r.is_array() || r.elements.size() != 2) {
      return;
    }
    if (f.rtt && *f.rtt <= rtt) {
      continue;
    }
    f.rtt = rtt;
    try {
      const auto server = std::chrono::seconds(std::stoll(r.elements[0].text())) +
                          std::chrono::microseconds(std::stoll(r.elements[1].text()));
      const auto middle = wall_before.time_since_epoch() + rtt / 2;
      f.clock_offset = std::chrono::duration_cast<Millis>(server - middle);
    } catch (const std::exception&) {
      f.clock_offset.reset();
    }
  }
}

// The rights check's reply: the refusals, or nullopt with the reason. The
// script's key is `key`: a user whose keys leave it out is refused EVAL on
// it before the script runs.
void read_rights(const Reply& r, ServerFacts& f, const std::string& key) {
  if (r.is_error()) {
    if (redis::classify_error(r.str) == ExitStatus::k_refused) {
      const bool on_key = !key.empty() && r.str.find(" key") != std::string::npos;
      f.refused = std::vector<Refusal>{{"lock", on_key ? "EVAL " + key : "EVAL"}};
    } else {
      f.rights_error = fmt::format("EVAL answered: {}", server_words(r));
    }
    return;
  }
  if (!r.is_array()) {
    f.rights_error = "the server cannot check them before Redis 7.0";
    return;
  }
  std::vector<Refusal> refused;
  for (size_t k = 0; k + 2 < r.elements.size(); k += 3) {
    const std::string name = r.elements[k + 2].text();
    refused.push_back({r.elements[k].text(), r.elements[k + 1].text() + (name.empty() ? "" : " " + name)});
  }
  f.refused = std::move(refused);
}

// The CONFIG GET replies from `replies[from]` on, into `f`.
void read_config(const std::vector<Reply>& replies, size_t from, ServerFacts& f) {
  for (size_t k = 0; k < std::size(k_config) && from + k < replies.size(); ++k) {
    const Reply& r = replies[from + k];
    if (r.is_error()) {
      f.config_error = fmt::format("CONFIG GET answered: {}", server_words(r));
    } else if (r.is_array() && r.elements.size() == 2) {
      f.config[r.elements[0].text()] = r.elements[1].text();
    }
  }
}

// The facts of `endpoints` before anything is asked: their names.
std::vector<ServerFacts> named(const std::vector<redis::Endpoint>& endpoints) {
  std::vector<ServerFacts> facts(endpoints.size());
  for (size_t i = 0; i < endpoints.size(); ++i) {
    facts[i].server = endpoints[i].display();
    facts[i].user = endpoints[i].user;
    facts[i].sentinel = endpoints[i].kind == redis::Endpoint::Kind::k_sentinel;
    if (endpoints[i].kind == redis::Endpoint::Kind::k_tcp) {
      facts[i].host = endpoints[i].host;
      facts[i].port = endpoints[i].port;
    }
  }
  return facts;
}

std::vector<std::unique_ptr<Connection>> connections(const std::vector<redis::Endpoint>& endpoints,
                                                     const lock::Options& options, const Cancel& cancel) {
  std::vector<std::unique_ptr<Connection>> conns;
  conns.reserve(endpoints.size());
  for (const auto& ep : endpoints) {
    conns.push_back(std::make_unique<Connection>(ep, options.timeouts, options.tls, cancel));
  }
  return conns;
}

// The rights check again on the Cluster nodes that did not hold the first
// name's slot, with other names: the first reply that is not MOVED counts.
void ask_rights_again(std::vector<std::unique_ptr<Connection>>& conns, std::vector<ServerFacts>& facts,
                      const lock::Options& options, const Cancel& cancel) {
  std::vector<size_t> again;
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!facts[i].failure && facts[i].rights_error == "moved") {
      again.push_back(i);
      for (int k = 1; k <= k_probe_names; ++k) {
        conns[i]->queue(rights_check(options.prefix, fmt::format("{}-{}", k_probe_name, k)));
      }
    }
  }
  if (again.empty()) {
    return;
  }
  run_live(conns, facts, cancel);
  for (size_t i : again) {
    auto& f = facts[i];
    if (f.failure) {
      continue;
    }
    f.rights_error = "no name on this node's slots could be checked";
    for (const Reply& r : conns[i]->take_replies()) {
      if (!moved(r)) {
        f.rights_error.clear();
        read_rights(r, f, "");
        break;
      }
    }
  }
}

// INFO, CONFIG GET, the rights check and CLUSTER INFO, pipelined.
void ask(std::vector<std::unique_ptr<Connection>>& conns, std::vector<ServerFacts>& facts, const lock::Options& options,
         const Cancel& cancel) {
  for (size_t i = 0; i < conns.size(); ++i) {
    if (facts[i].failure) {
      continue;
    }
    auto& c = *conns[i];
    c.queue({"INFO"});
    for (const char* name : k_config) {
      c.queue({"CONFIG", "GET", name});
    }
    c.queue(rights_check(options.prefix, k_probe_name));
    c.queue({"CLUSTER", "INFO"});
  }
  run_live(conns, facts, cancel);
  for (size_t i = 0; i < conns.size(); ++i) {
    auto& f = facts[i];
    if (f.failure) {
      continue;
    }
    const auto replies = conns[i]->take_replies();
    const size_t n_config = std::size(k_config);
    if (replies.size() != n_config + 3) {
      f.failure = redis::Failure{ExitStatus::k_protocol, fmt::format("Redis at {} sent too few replies", f.server)};
      continue;
    }
    if (replies[0].is_error()) {
      f.info_error = fmt::format("INFO answered: {}", server_words(replies[0]));
    } else {
      f.info = parse_info(replies[0].str);
    }
    read_config(replies, 1, f);
    if (moved(replies[1 + n_config])) {
      f.rights_error = "moved";  // asked again below
    } else {
      read_rights(replies[1 + n_config], f, lock::keys_for(options.prefix, k_probe_name).lock);
    }
    if (!replies[2 + n_config].is_error()) {
      f.cluster = parse_info(replies[2 + n_config].str);
    }
  }
  ask_rights_again(conns, facts, options, cancel);
}

// Sentinel's down-after-milliseconds for the master of a redis+sentinel://
// endpoint, from the first sentinel that says.
void ask_sentinels(const redis::Endpoint& ep, const lock::Options& options, const Cancel& cancel, ServerFacts& f) {
  for (const auto& [host, port] : ep.sentinels) {
    redis::Endpoint sentinel;
    sentinel.host = host;
    sentinel.port = port;
    sentinel.password = ep.sentinel_password;
    Connection conn(sentinel, options.timeouts, nullptr, cancel);
    Reply r;
    try {
      r = redis::call(conn, {"SENTINEL", "MASTER", ep.master});
    } catch (const Error& e) {
      f.sentinel_error = e.what();
      continue;
    }
    if (r.is_error()) {
      f.sentinel_error = fmt::format("sentinel {} answered: {}", sentinel.display(), server_words(r));
      continue;
    }
    for (size_t k = 0; k + 1 < r.elements.size(); k += 2) {
      if (r.elements[k].text() == "down-after-milliseconds") {
        try {
          f.down_after = Millis(std::stoll(r.elements[k + 1].text()));
          return;
        } catch (const std::exception&) {
          break;
        }
      }
    }
    f.sentinel_error = fmt::format("sentinel {} did not say", sentinel.display());
  }
}

}  // namespace

std::vector<ServerFacts> audit(const std::vector<redis::Endpoint>& endpoints, const lock::Options& options,
                               const Cancel& cancel) {
  auto conns = connections(endpoints, options, cancel);
  std::vector<ServerFacts> facts = named(endpoints);
  reach(conns, facts, cancel);
  for (size_t i = 0; i < conns.size(); ++i) {
    if (!facts[i].failure) {
      time_server(*conns[i], facts[i]);
    }
  }
  ask(conns, facts, options, cancel);
  for (size_t i = 0; i < endpoints.size(); ++i) {
    if (!facts[i].failure && facts[i].sentinel) {
      ask_sentinels(endpoints[i], options, cancel, facts[i]);
    }
  }
  return facts;
}

std::vector<ServerFacts> probe(const std::vector<redis::Endpoint>& endpoints, const lock::Options& options,
                               const Cancel& cancel) {
  auto conns = connections(endpoints, options, cancel);
  std::vector<ServerFacts> facts = named(endpoints);
  for (auto& c : conns) {
    c->queue({"PING"});
    for (const char* name : k_config) {
      c->queue({"CONFIG", "GET", name});
    }
  }
  run_live(conns, facts, cancel);
  for (size_t i = 0; i < conns.size(); ++i) {
    if (facts[i].failure) {
      continue;
    }
    const auto replies = conns[i]->take_replies();
    if (!ping_refused(replies, facts[i])) {
      read_config(replies, 1, facts[i]);
    }
  }
  return facts;
}

}  // namespace redlock::doctor
