// Where a lock lives (lock/keys.hpp): one key per (prefix, name), every key
// of a lock in one Redis Cluster hash slot, names read back as given.

#include "lock/keys.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace redlock::lock {
namespace {

// What Redis Cluster hashes of a key: from the first '{' to the first '}'
// after it when that is not empty, else the whole key.
std::string hashed_part(const std::string& key) {
  const size_t open = key.find('{');
  if (open == std::string::npos) {
    return key;
  }
  const size_t close = key.find('}', open + 1);
  if (close == std::string::npos || close == open + 1) {
    return key;
  }
  return key.substr(open + 1, close - open - 1);
}

const std::vector<std::string> k_prefixes = {"redlock:", "a", "a{b}", "app{1}:", "en{v", "x}y:", "", "{"};
const std::vector<std::string> k_names = {"a", "c",  "b}{c", "{a}", "a}",     "a}:fence", "x{",   "job{1}",
                                          "}", "}x", "}{x}", "{}",  "{b}{c}", "b",        "ünï}", "a\\}"};

TEST(Keys, PlainNamesKeepTheirKeys) {
  EXPECT_EQ(lock_key("redlock:", "nightly"), "redlock:{nightly}");
  const Keys k = keys_for("redlock:", "nightly");
  EXPECT_EQ(k.fence, "redlock:{nightly}:fence");
  EXPECT_EQ(k.channel, "redlock:{nightly}:released");
  EXPECT_EQ(k.line, "redlock:{nightly}:line");
}

TEST(Keys, ThePrefixAndNameThatUsedToMeetAreTwoKeys) {
  // Prefix 'a' with name 'b}{c' and prefix 'a{b}' with name 'c' were both
  // the key 'a{b}{c}': two locks in one key.
  EXPECT_NE(lock_key("a", "b}{c"), lock_key("a{b}", "c"));
  EXPECT_NE(lock_key("x", "{y"), lock_key("x{", "y"));
}

TEST(Keys, EveryPrefixAndNameHasAKeyOfItsOwn) {
  std::map<std::string, std::pair<std::string, std::string>> seen;
  for (const auto& prefix : k_prefixes) {
    for (const auto& name : k_names) {
      for (const std::string& key : {lock_key(prefix, name), keys_for(prefix, name).fence, keys_for(prefix, name).line,
                                     keys_for(prefix, name).waiters}) {
        const auto [at, fresh] = seen.emplace(key, std::make_pair(prefix, name));
        EXPECT_TRUE(fresh) << "'" << prefix << "' + '" << name << "' and '" << at->second.first << "' + '"
                           << at->second.second << "' share " << key;
      }
    }
  }
}

TEST(Keys, AllOfALocksKeysHashToOneSlotUnderATag) {
  for (const auto& prefix : k_prefixes) {
    if (prefix.find('{') != std::string::npos) {
      continue;  // a prefix with a tag of its own puts every lock in that tag's slot
    }
    for (const auto& name : k_names) {
      SCOPED_TRACE(prefix + " " + name);
      const Keys k = keys_for(prefix, name);
      const std::string tag = hashed_part(k.lock);
      EXPECT_NE(tag, k.lock) << "the lock's key has no hash tag";
      for (const auto& key : {k.fence, k.channel, k.line, k.beats, k.waiters, k.writers}) {
        EXPECT_EQ(hashed_part(key), tag) << key;
      }
    }
  }
}

TEST(Keys, ANameIsReadBackFromItsKeyAsGiven) {
  for (const auto& prefix : k_prefixes) {
    for (const auto& name : k_names) {
      SCOPED_TRACE(prefix + " " + name);
      EXPECT_EQ(name_of_key(prefix, lock_key(prefix, name)), name);
      EXPECT_EQ(name_of_key(prefix, keys_for(prefix, name).fence), std::nullopt);
      EXPECT_EQ(name_of_key(prefix, keys_for(prefix, name).waiters), std::nullopt);
    }
  }
}

TEST(Keys, KeysThisLayoutDoesNotWriteHaveNoName) {
  EXPECT_EQ(name_of_key("redlock:", "redlock:{a{b}c}"), std::nullopt) << "braces inside the tag: an older layout";
  EXPECT_EQ(name_of_key("redlock:", "redlock:{}"), std::nullopt);
  EXPECT_EQ(name_of_key("redlock:", "other:{a}"), std::nullopt);
  EXPECT_EQ(name_of_key("redlock:", "redlock:a"), std::nullopt);
  EXPECT_EQ(name_of_key("redlock:", "redlock:{a"), std::nullopt);
}

}  // namespace
}  // namespace redlock::lock
