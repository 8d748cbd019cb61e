#include "table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>

#include "server.hpp"

namespace redlock::test {
namespace {

// A JSON value with its keys in order of name; anything else as it is.
std::string normal(const std::string& value) {
  if (value.empty() || value.front() != '{') {
    return value;
  }
  try {
    return nlohmann::json::parse(value).dump();
  } catch (const nlohmann::json::exception&) {
    return value;
  }
}

// The table's rows on the binary's one server (server.hpp).
class Table {
 public:
  // What SCRIPT LOAD named each script.
  [[nodiscard]] const std::string& loaded(lock::ScriptName name) const { return m_server.loaded(name); }

  void reset() { m_server.reset(); }

  long long now_ms() { return m_server.now_ms(); }

  // Writes one "KEY = TYPE VALUE [(px MS)]" line.
  void load(std::string line, long long now) {
    line = with_now(line, now);

    std::string px;
    if (const auto at = line.rfind(" (px "); at != std::string::npos && line.back() == ')') {
      px = line.substr(at + 5, line.size() - at - 6);
      line.erase(at);
    }
    const auto eq = line.find(" = ");
    ASSERT_NE(eq, std::string::npos) << line;
    const std::string key = line.substr(0, eq);
    const std::string rest = line.substr(eq + 3);
    const auto space = rest.find(' ');
    const std::string type = rest.substr(0, space);
    const std::string value = space == std::string::npos ? "" : rest.substr(space + 1);
    std::vector<std::string> words;
    for (size_t i = 0; i < value.size();) {
      const size_t j = std::min(value.find(' ', i), value.size());
      words.push_back(value.substr(i, j - i));
      i = j + 1;
    }
    if (type == "string") {
      (void)m_server.cmd({"SET", key, value});
    } else if (type == "hash") {
      std::vector<std::string> argv{"HSET", key};
      for (const auto& w : words) {
        const auto at = w.find('=');
        argv.push_back(w.substr(0, at));
        argv.push_back(at == std::string::npos ? "" : w.substr(at + 1));
      }
      (void)m_server.cmd(argv);
    } else if (type == "list") {
      std::vector<std::string> argv{"RPUSH", key};
      argv.insert(argv.end(), words.begin(), words.end());
      (void)m_server.cmd(argv);
    } else if (type == "zset") {
      std::vector<std::string> argv{"ZADD", key};
      for (const auto& w : words) {
        const auto at = w.find('=');
        argv.push_back(w.substr(at + 1));
        argv.push_back(w.substr(0, at));
      }
      (void)m_server.cmd(argv);
    } else if (type == "stream") {
      // Entries "f=v f=v | f=v ...", oldest first, each added with XADD.
      std::vector<std::string> argv{"XADD", key, "*"};
      for (size_t i = 0; i <= words.size(); ++i) {
        if (i == words.size() || words[i] == "|") {
          (void)m_server.cmd(argv);
          argv.resize(3);
          continue;
        }
        const auto at = words[i].find('=');
        argv.push_back(words[i].substr(0, at));
        argv.push_back(at == std::string::npos ? "" : words[i].substr(at + 1));
      }
    } else {
      FAIL() << "a key before must be a string, hash, list, zset or stream: " << line;
    }
    if (!px.empty()) {
      (void)m_server.cmd({"PEXPIRE", key, px});
    }
  }

  // Every key on the server, one a line, in order of name.
  std::vector<std::string> dump() {
    std::vector<std::string> keys;
    for (const auto& name : m_server.cmd({"KEYS", "*"}).items) {
      keys.push_back(name.text);
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> out;
    for (const auto& key : keys) {
      const std::string type = m_server.cmd({"TYPE", key}).text;
      std::string line = key + " = " + type;
      if (type == "string") {
        line += " " + m_server.cmd({"GET", key}).text;
      } else if (type == "hash") {
        const Value all = m_server.cmd({"HGETALL", key});
        std::map<std::string, std::string> fields;
        for (size_t i = 0; i + 1 < all.items.size(); i += 2) {
          fields[all.items[i].text] = normal(all.items[i + 1].text);
        }
        for (const auto& [f, v] : fields) {
          line += " " + f + "=" + v;
        }
      } else if (type == "list") {
        for (const auto& item : m_server.cmd({"LRANGE", key, "0", "-1"}).items) {
          line += " " + item.text;
        }
      } else if (type == "zset") {
        const Value items = m_server.cmd({"ZRANGE", key, "0", "-1", "WITHSCORES"});
        for (size_t i = 0; i + 1 < items.items.size(); i += 2) {
          line += " " + items.items[i].text + "=" + items.items[i + 1].text;
        }
      } else if (type == "stream") {
        // Entries oldest first, their fields in the order written, "|" between.
        const Value entries = m_server.cmd({"XRANGE", key, "-", "+"});
        for (size_t e = 0; e < entries.items.size(); ++e) {
          line += e > 0 ? " |" : "";
          const Value& fields = entries.items[e].items.at(1);
          for (size_t i = 0; i + 1 < fields.items.size(); i += 2) {
            line += " " + fields.items[i].text + "=" + fields.items[i + 1].text;
          }
        }
      }
      if (const long long pttl = m_server.cmd({"PTTL", key}).integer; pttl >= 0) {
        line += " (px " + std::to_string(pttl) + ")";
      }
      out.push_back(line);
    }
    return out;
  }

  // Runs the script by the SHA-1 redlock computed; its reply as show() writes it.
  std::string eval(const Row& row) { return show(m_server.eval(row.script, row.args)); }

  // The messages published since the last call: "channel message".
  std::vector<std::string> published() { return m_server.published(); }

 private:
  ScriptServer& m_server = script_server();
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

std::string with_now(const std::string& text, long long now) {
  static const std::regex k_now("NOW([+-][0-9]+)?");
  std::string filled;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), k_now), end; it != end; ++it) {
    filled.append(last, (*it)[0].first);
    filled += std::to_string(now + ((*it)[1].matched ? std::stoll((*it)[1].str()) : 0));
    last = (*it)[0].second;
  }
  filled.append(last, text.cend());
  return filled;
}

namespace {

std::string lines(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& l : v) {
    out += "\n  " + l;
  }
  return out.empty() ? "\n  (none)" : out;
}

// Reads an integer at `at` of `text`; false if there is none.
bool integer_at(const std::string& text, size_t& at, long long& value) {
  const size_t start = at;
  if (at < text.size() && text[at] == '-') {
    ++at;
  }
  const size_t digits = at;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
    ++at;
  }
  if (at == digits) {
    at = start;
    return false;
  }
  value = std::stoll(text.substr(start, at - start));
  return true;
}

bool match_from(const std::string& p, size_t i, const std::string& t, size_t j) {
  while (i < p.size()) {
    if (p[i] == '*') {
      for (size_t k = j; k <= t.size(); ++k) {
        if (match_from(p, i + 1, t, k)) {
          return true;
        }
      }
      return false;
    }
    long long value = 0;
    if (p[i] == '#') {
      if (!integer_at(t, j, value)) {
        return false;
      }
      ++i;
      continue;
    }
    long long most = 0;
    size_t n = i + 1;
    if (p[i] == '~' && integer_at(p, n, most)) {
      if (!integer_at(t, j, value) || value < most - 1000 || value > most) {
        return false;
      }
      i = n;
      continue;
    }
    if (j >= t.size() || p[i] != t[j]) {
      return false;
    }
    ++i;
    ++j;
  }
  return j == t.size();
}

}  // namespace

bool matches(const std::string& pattern, const std::string& text) {
  return match_from(pattern, 0, text, 0);
}

void PrintTo(const Row& row, std::ostream* out) {
  *out << row.name;
}

std::string row_name(const testing::TestParamInfo<Row>& row) {
  return row.param.name;
}

namespace {

// A row's keys, one a line: an entry may hold several (the line of waiters
// is four keys).
std::vector<std::string> one_a_line(const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const auto& k : keys) {
    for (size_t i = 0; i <= k.size();) {
      const size_t j = std::min(k.find('\n', i), k.size());
      out.push_back(k.substr(i, j - i));
      i = j + 1;
    }
  }
  return out;
}

}  // namespace

void run(const Row& row) {
  Table& t = table();
  ASSERT_EQ(t.loaded(row.script), lock::script(row.script).sha1) << "SCRIPT LOAD names the script otherwise";
  t.reset();
  const long long now = t.now_ms();
  for (const auto& line : one_a_line(row.before)) {
    t.load(line, now);
  }
  (void)t.published();

  const std::string reply = t.eval(row);
  EXPECT_TRUE(matches(row.reply, reply)) << "reply:    " << reply << "\nexpected: " << row.reply;

  const std::vector<std::string> after = t.dump();
  // dump() lists keys in order of name; a row may list them in any order.
  std::vector<std::string> expected = one_a_line(row.after);
  for (auto& line : expected) {
    line = with_now(line, now);
  }
  std::stable_sort(expected.begin(), expected.end(), [](const std::string& x, const std::string& y) {
    return x.substr(0, x.find(" = ")) < y.substr(0, y.find(" = "));
  });
  bool same = after.size() == expected.size();
  for (size_t i = 0; same && i < after.size(); ++i) {
    same = matches(expected[i], after[i]);
  }
  EXPECT_TRUE(same) << "keys after:" << lines(after) << "\nexpected:" << lines(expected);

  const std::vector<std::string> published = t.published();
  bool heard = published.size() == row.published.size();
  for (size_t i = 0; heard && i < published.size(); ++i) {
    heard = matches(row.published[i], published[i]);
  }
  EXPECT_TRUE(heard) << "published:" << lines(published) << "\nexpected:" << lines(row.published);
}

}  // namespace redlock::test
