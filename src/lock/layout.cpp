#include "lock/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>

#include "util/number.hpp"
#include "util/sha1.hpp"
#include "util/text.hpp"

namespace redlock::lock {
namespace {

long long to_ll(const std::string& s) {
  return parse_integer(s).value_or(0);
}

// A number that redlock writes either as a JSON number or, when it may need
// more than the 14 digits Redis's cjson keeps, as a string of digits.
long long json_integer(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) {
    return 0;
  }
  if (it->is_number_integer()) {
    return it->get<long long>();
  }
  if (it->is_number_float()) {
    const double d = it->get<double>();
    return d > -9e18 && d < 9e18 ? static_cast<long long>(d) : 0;
  }
  if (it->is_string()) {
    return to_ll(it->get<std::string>());
  }
  throw nlohmann::json::type_error::create(302, "not a number", it.operator->());
}

// A holder's fence in its JSON entry: a string of digits (as redlock writes
// it) or a number; 0 when it is not a usable fence.
long long json_fence(const nlohmann::json& j) {
  auto it = j.find("fence");
  if (it != j.end() && it->is_string()) {
    return parse_fence(it->get<std::string>()).value_or(0);
  }
  const long long fence = json_integer(j, "fence");
  return usable_fence(fence) ? fence : 0;
}

std::string json_text(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end()) {
    return {};
  }
  if (!it->is_string()) {
    throw nlohmann::json::type_error::create(302, "not a string", it.operator->());
  }
  return it->get<std::string>();
}

void read_shared(ServerView& v, const std::map<std::string, std::string>& fields) {
  for (const auto& [key, value] : fields) {
    if (key.rfind("h:", 0) != 0) {
      continue;
    }
    HolderView h;
    try {
      auto j = nlohmann::json::parse(value);
      if (!j.is_object()) {
        throw nlohmann::json::type_error::create(302, "not an object", &j);
      }
      h.token = key.substr(2);
      if (h.token.empty()) {
        throw nlohmann::json::other_error::create(501, "a holder without a token", &j);
      }
      h.host = json_text(j, "host");
      h.pid = json_integer(j, "pid");
      h.cmd = json_text(j, "cmd");
      h.note = json_text(j, "note");
      h.since_ms = json_integer(j, "since");
      // An expiry no server clock could give (it overflows the time
      // left) is not something redlock wrote.
      if (__builtin_sub_overflow(json_integer(j, "expiry"), v.now_ms, &h.ttl_ms)) {
        throw nlohmann::json::out_of_range::create(406, "expiry out of range", &j);
      }
      h.fence = json_fence(j);
      h.count = json_integer(j, "count");
    } catch (const nlohmann::json::exception&) {
      v.foreign = true;  // not what redlock writes
      v.holders.clear();
      return;
    }
    if (h.ttl_ms > 0) {
      v.holders.push_back(std::move(h));
    }
  }
}

}  // namespace

std::optional<long long> parse_fence(std::string_view text) {
  const std::optional<long long> fence = parse_integer(text);
  if (!fence || !usable_fence(*fence)) {
    return std::nullopt;
  }
  return fence;
}

std::string foreign_message(const std::string& name, const std::string& holds, const std::string& where) {
  if (holds.rfind(k_other_layout, 0) == 0) {
    return fmt::format(
        "the key for '{}'{} is a lock of another redlock version (layout {}; this one reads {}); redlock leaves it "
        "alone: "
        "run one redlock version on every host, or give the two versions different --prefix values",
        escape_for_terminal(name), where, escape_for_terminal(holds.substr(std::strlen(k_other_layout))), k_schema);
  }
  return fmt::format(
      "the key for '{}'{} is not a redlock lock (it holds a {}); redlock leaves it alone: remove it or use another "
      "--prefix",
      escape_for_terminal(name), where, holds);
}

std::string foreign_keys_message(const std::vector<std::pair<std::string, std::string>>& keys) {
  if (keys.size() == 1) {
    return foreign_message(keys.front().first, keys.front().second, "");
  }
  // A prefix full of someone else's keys must not make a line of megabytes.
  std::vector<std::string> named;
  named.reserve(keys.size());
  for (const auto& [key, type] : keys) {
    named.push_back(fmt::format("'{}' (a {})", escape_for_terminal(key), type));
  }
  const std::string list = spoken_list(named);
  return fmt::format(
      "the keys for {} are not redlock locks; redlock leaves them alone: remove them or use another --prefix", list);
}

void read_holders(ServerView& v, const std::vector<std::pair<std::string, std::string>>& pairs) {
  if (v.type == "none") {
    return;
  }
  if (v.type != "hash") {
    v.foreign = true;
    return;
  }
  std::map<std::string, std::string> fields(pairs.begin(), pairs.end());
  auto field = [&](const char* key) {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  };
  if (const std::string schema = field("schema"); schema != k_schema) {
    if (schema.rfind("redlock/", 0) == 0) {
      v.type = std::string(k_other_layout) + schema;  // a redlock of another version
    }
    v.foreign = true;
    return;
  }
  const Claim::Mode mode = mode_named(field("mode"));
  if (mode != Claim::Mode::k_exclusive) {
    v.mode = mode;
    v.limit = to_ll(field("limit"));
    read_shared(v, fields);
    return;
  }
  // A lock kept for its minimum hold has no token, and says when its
  // holder finished.
  const bool kept = field("token").empty() && !field("finished_ms").empty();
  if ((field("token").empty() && !kept) || field("count").empty()) {
    v.foreign = true;
    return;
  }
  v.mode = Claim::Mode::k_exclusive;
  HolderView h;
  h.kept = kept;
  h.finished_ms = kept ? to_ll(field("finished_ms")) : 0;
  h.token = field("token");
  h.host = field("host");
  h.pid = to_ll(field("pid"));
  h.cmd = field("cmd");
  h.note = field("note");
  h.since_ms = to_ll(field("since_ms"));
  h.ttl_ms = v.ttl_ms;
  h.fence = parse_fence(field("fence")).value_or(0);
  h.count = to_ll(field("count"));
  v.holders.push_back(std::move(h));
}

std::string hold_id(std::string_view token) {
  return token.empty() ? std::string() : sha1_hex(token).substr(0, 16);
}

void read_marks(ServerView& v, const std::vector<std::pair<std::string, std::string>>& suspension,
                const std::vector<std::pair<std::string, std::string>>& revoke) {
  const std::map<std::string, std::string> s(suspension.begin(), suspension.end());
  const auto at = [](const std::map<std::string, std::string>& m, const char* key) {
    auto it = m.find(key);
    return it == m.end() ? std::string() : it->second;
  };
  if (at(s, "schema") == k_schema) {
    Suspension out{at(s, "reason"),          at(s, "host"), at(s, "pid"), to_ll(at(s, "since_ms")),
                   to_ll(at(s, "until_ms")), v.now_ms};
    if (out.until_ms <= 0) {
      out.until_ms = -1;
    }
    v.suspension = std::move(out);
  }
  const std::map<std::string, std::string> r(revoke.begin(), revoke.end());
  if (at(r, "schema") != k_schema) {
    return;
  }
  for (const auto& [key, value] : r) {
    if (key.rfind("r:", 0) != 0 || key.size() == 2) {
      continue;
    }
    try {
      const auto j = nlohmann::json::parse(value);
      if (j.is_object()) {
        v.revokes.push_back({key.substr(2), json_text(j, "host"), json_text(j, "pid"), json_integer(j, "since_ms"),
                             json_integer(j, "grace_ms")});
      }
    } catch (const nlohmann::json::exception&) {
      // not what redlock writes: no revoke is shown for it
    }
  }
}

std::vector<WaiterView> read_waiters(const std::vector<std::pair<std::string, std::string>>& fields, long long now_ms) {
  std::vector<WaiterView> out;
  const auto schema = std::find_if(fields.begin(), fields.end(), [](const auto& f) { return f.first == "schema"; });
  if (schema == fields.end() || schema->second != k_schema) {
    return out;
  }
  for (const auto& [key, value] : fields) {
    if (key.rfind("w:", 0) != 0 || key.size() == 2) {
      continue;
    }
    try {
      auto j = nlohmann::json::parse(value);
      if (!j.is_object() || json_integer(j, "expiry") <= now_ms) {
        continue;  // not redlock's, or a waiter whose heartbeat lapsed
      }
      WaiterView w;
      w.id = key.substr(2);
      w.ticket = json_integer(j, "ticket");
      w.host = json_text(j, "host");
      w.pid = json_integer(j, "pid");
      w.cmd = json_text(j, "cmd");
      w.mode = mode_named(json_text(j, "mode"));
      w.since_ms = json_integer(j, "since");
      w.until_ms = json_integer(j, "deadline");
      w.age_ms = std::max(0LL, now_ms - w.since_ms);
      if (w.until_ms < 0) {
        w.until_ms = -1;
      } else {
        w.left_ms = std::max(0LL, w.until_ms - now_ms);
      }
      out.push_back(std::move(w));
    } catch (const nlohmann::json::exception&) {
      continue;  // an entry redlock would not write
    }
  }
  std::sort(out.begin(), out.end(), [](const WaiterView& a, const WaiterView& b) {
    return a.ticket != b.ticket ? a.ticket < b.ticket : a.id < b.id;
  });
  return out;
}

}  // namespace redlock::lock
