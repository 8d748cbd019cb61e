#include "table.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <stdexcept>

#include "harness.hpp"
#include "lock/keys.hpp"
#include "lock/locker.hpp"

namespace redlock::test {
namespace {

struct FreeContext {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct FreeReply {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, FreeReply>;

// One blocking hiredis connection to the table's server.
class Client {
 public:
  explicit Client(int port) : m_ctx(redisConnect("127.0.0.1", port)) {
    if (!m_ctx || m_ctx->err) {
      throw std::runtime_error("cannot connect to the table's redis-server");
    }
    const timeval limit{5, 0};
    redisSetTimeout(m_ctx.get(), limit);
  }

  ReplyPtr cmd(const std::vector<std::string>& argv) {
    send(argv);
    return next();
  }
  void send(const std::vector<std::string>& argv) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(m_ctx.get(), static_cast<int>(argv.size()), ptrs.data(), lens.data()) != REDIS_OK) {
      throw std::runtime_error("cannot send to the table's redis-server");
    }
  }
  ReplyPtr next() {
    void* r = nullptr;
    if (redisGetReply(m_ctx.get(), &r) != REDIS_OK || r == nullptr) {
      throw std::runtime_error("no reply from the table's redis-server");
    }
    return ReplyPtr(static_cast<redisReply*>(r));
  }

 private:
  std::unique_ptr<redisContext, FreeContext> m_ctx;
};

std::string text_of(const redisReply* r) {
  return std::string(r->str, r->len);
}

// A reply as the scripts' headers write them: {'acquired', 'T1', 12, 1, 30000}.
std::string show(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
      return "'" + text_of(r) + "'";
    case REDIS_REPLY_STATUS:
      return "+" + text_of(r);
    case REDIS_REPLY_ERROR:
      return "error: " + text_of(r);
    case REDIS_REPLY_INTEGER:
      return std::to_string(r->integer);
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_ARRAY: {
      std::string out = "{";
      for (size_t i = 0; i < r->elements; ++i) {
        out += (i ? ", " : "") + show(r->element[i]);
      }
      return out + "}";
    }
    default:
      return "?";
  }
}

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

// The table's one server, with a connection for commands and one that
// hears every message on the table's channels.
class Table {
 public:
  Table() : m_client(m_server.port()), m_listener(m_server.port()) {
    (void)m_listener.cmd({"PSUBSCRIBE", "t:*"});
    for (auto name : {lock::ScriptName::k_acquire, lock::ScriptName::k_renew, lock::ScriptName::k_inspect,
                      lock::ScriptName::k_raise_fence, lock::ScriptName::k_break, lock::ScriptName::k_release,
                      lock::ScriptName::k_leave, lock::ScriptName::k_line}) {
      const auto& s = lock::script(name);
      m_loaded[name] = text_of(m_client.cmd({"SCRIPT", "LOAD", std::string(s.body)}).get());
    }
  }

  // What SCRIPT LOAD named each script.
  [[nodiscard]] const std::string& loaded(lock::ScriptName name) const { return m_loaded.at(name); }

  void reset() { (void)m_client.cmd({"FLUSHALL", "SYNC"}); }

  long long now_ms() {
    auto t = m_client.cmd({"TIME"});
    return std::stoll(text_of(t->element[0])) * 1000 + std::stoll(text_of(t->element[1])) / 1000;
  }

  // Writes one "KEY = TYPE VALUE [(px MS)]" line.
  void load(std::string line, long long now) {
    static const std::regex k_now("NOW([+-][0-9]+)?");
    std::string filled;
    auto last = line.cbegin();
    for (std::sregex_iterator it(line.begin(), line.end(), k_now), end; it != end; ++it) {
      filled.append(last, (*it)[0].first);
      filled += std::to_string(now + ((*it)[1].matched ? std::stoll((*it)[1].str()) : 0));
      last = (*it)[0].second;
    }
    filled.append(last, line.cend());
    line = filled;

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
      (void)m_client.cmd({"SET", key, value});
    } else if (type == "hash") {
      std::vector<std::string> argv{"HSET", key};
      for (const auto& w : words) {
        const auto at = w.find('=');
        argv.push_back(w.substr(0, at));
        argv.push_back(at == std::string::npos ? "" : w.substr(at + 1));
      }
      (void)m_client.cmd(argv);
    } else if (type == "list") {
      std::vector<std::string> argv{"RPUSH", key};
      argv.insert(argv.end(), words.begin(), words.end());
      (void)m_client.cmd(argv);
    } else if (type == "zset") {
      std::vector<std::string> argv{"ZADD", key};
      for (const auto& w : words) {
        const auto at = w.find('=');
        argv.push_back(w.substr(at + 1));
        argv.push_back(w.substr(0, at));
      }
      (void)m_client.cmd(argv);
    } else {
      FAIL() << "a key before must be a string, hash, list or zset: " << line;
    }
    if (!px.empty()) {
      (void)m_client.cmd({"PEXPIRE", key, px});
    }
  }

  // Every key on the server, one a line, in order of name.
  std::vector<std::string> dump() {
    auto names = m_client.cmd({"KEYS", "*"});
    std::vector<std::string> keys;
    for (size_t i = 0; i < names->elements; ++i) {
      keys.push_back(text_of(names->element[i]));
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::string> out;
    for (const auto& key : keys) {
      const std::string type = text_of(m_client.cmd({"TYPE", key}).get());
      std::string line = key + " = " + type;
      if (type == "string") {
        line += " " + text_of(m_client.cmd({"GET", key}).get());
      } else if (type == "hash") {
        auto all = m_client.cmd({"HGETALL", key});
        std::map<std::string, std::string> fields;
        for (size_t i = 0; i + 1 < all->elements; i += 2) {
          fields[text_of(all->element[i])] = normal(text_of(all->element[i + 1]));
        }
        for (const auto& [f, v] : fields) {
          line += " " + f + "=" + v;
        }
      } else if (type == "list") {
        auto items = m_client.cmd({"LRANGE", key, "0", "-1"});
        for (size_t i = 0; i < items->elements; ++i) {
          line += " " + text_of(items->element[i]);
        }
      } else if (type == "zset") {
        auto items = m_client.cmd({"ZRANGE", key, "0", "-1", "WITHSCORES"});
        for (size_t i = 0; i + 1 < items->elements; i += 2) {
          line += " " + text_of(items->element[i]) + "=" + text_of(items->element[i + 1]);
        }
      }
      if (const long long pttl = m_client.cmd({"PTTL", key})->integer; pttl >= 0) {
        line += " (px " + std::to_string(pttl) + ")";
      }
      out.push_back(line);
    }
    return out;
  }

  // Runs the script by the SHA-1 redlock computed; its reply as show() writes it.
  std::string eval(const Row& row) {
    std::vector<std::string> argv{"EVALSHA", std::string(lock::script(row.script).sha1)};
    argv.insert(argv.end(), row.args.begin(), row.args.end());
    return show(m_client.cmd(argv).get());
  }

  // The messages published since the last call: "channel message".
  std::vector<std::string> published() {
    (void)m_client.cmd({"PUBLISH", "t:end", "."});
    std::vector<std::string> out;
    while (true) {
      auto m = m_listener.next();
      if (m->type != REDIS_REPLY_ARRAY || m->elements != 4) {
        continue;
      }
      const std::string channel = text_of(m->element[2]);
      if (channel == "t:end") {
        return out;
      }
      out.push_back(channel + " " + text_of(m->element[3]));
    }
  }

 private:
  RedisServer m_server;
  Client m_client;
  Client m_listener;
  std::map<lock::ScriptName, std::string> m_loaded;
};

Table& table() {
  static Table t;
  return t;
}

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

const lock::Keys& keys() {
  static const lock::Keys k = lock::keys_for("t:", "a");
  return k;
}

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
