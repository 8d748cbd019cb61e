#include "lock/keys.hpp"

namespace redlock::lock {

std::string tag_of(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '{') {
      c = k_open_brace;
    } else if (c == '}') {
      c = k_close_brace;
    }
  }
  return out;
}

std::string lock_key(std::string_view prefix, std::string_view name) {
  std::string key(prefix);
  key += '{';
  key += tag_of(name);
  key += '}';
  return key;
}

Keys keys_for(const std::string& prefix, const std::string& name) {
  const std::string lock = lock_key(prefix, name);
  return Keys{lock,
              lock + ":fence",
              lock + ":released",
              lock + ":line",
              lock + ":beats",
              lock + ":waiters",
              lock + ":writers",
              lock + ":runs",
              lock + ":suspended",
              lock + ":revoke",
              lock + ":revoke",
              index_key(prefix),
              ledgers_key(prefix)};
}

std::string events_channel(std::string_view prefix, std::string_view name) {
  return lock_key(prefix, name) + ":events";
}

std::string glob_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string events_pattern(std::string_view prefix) {
  return glob_escaped(prefix) + "{*}:events";
}

std::optional<std::string> name_of_events_channel(std::string_view prefix, std::string_view channel) {
  constexpr std::string_view k_suffix = ":events";
  if (channel.size() < k_suffix.size() || channel.substr(channel.size() - k_suffix.size()) != k_suffix) {
    return std::nullopt;
  }
  return name_of_key(prefix, channel.substr(0, channel.size() - k_suffix.size()));
}

std::string index_key(std::string_view prefix) {
  return std::string(prefix) + "index";
}

std::string ledgers_key(std::string_view prefix) {
  return std::string(prefix) + "ledgers";
}

std::optional<std::string> name_of_ledger(std::string_view prefix, std::string_view key) {
  constexpr std::string_view k_suffix = ":runs";
  if (!key.ends_with(k_suffix)) {
    return std::nullopt;
  }
  return name_of_key(prefix, key.substr(0, key.size() - k_suffix.size()));
}

std::optional<std::string> name_of_key(std::string_view prefix, std::string_view key) {
  if (key.size() < prefix.size() + 3 || key.substr(0, prefix.size()) != prefix || key[prefix.size()] != '{' ||
      key.back() != '}') {
    return std::nullopt;
  }
  std::string name(key.substr(prefix.size() + 1, key.size() - prefix.size() - 2));
  for (char& c : name) {
    if (c == '{' || c == '}') {
      return std::nullopt;  // not a tag this layout writes
    }
    if (c == k_open_brace) {
      c = '{';
    } else if (c == k_close_brace) {
      c = '}';
    }
  }
  return name;
}

}  // namespace redlock::lock
