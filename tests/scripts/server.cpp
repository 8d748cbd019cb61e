#include "server.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <map>
#include <stdexcept>
#include <utility>

#include "harness.hpp"
#include "lock/keys.hpp"

namespace redlock::test {
namespace {

struct FreeContext {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct FreeReply {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, FreeReply>;

Value decode(const redisReply* r) {
  Value v;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      v.type = Value::Type::k_string;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
      v.type = Value::Type::k_status;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      v.type = Value::Type::k_error;
      v.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      v.type = Value::Type::k_integer;
      v.integer = r->integer;
      break;
    case REDIS_REPLY_NIL:
      v.type = Value::Type::k_nil;
      break;
    case REDIS_REPLY_ARRAY:
      v.type = Value::Type::k_array;
      for (size_t i = 0; i < r->elements; ++i) {
        v.items.push_back(decode(r->element[i]));
      }
      break;
    default:
      v.type = Value::Type::k_other;
      break;
  }
  return v;
}

// One blocking hiredis connection to the server.
class Client {
 public:
  explicit Client(int port) : m_ctx(redisConnect("127.0.0.1", port)) {
    if (!m_ctx || m_ctx->err) {
      throw std::runtime_error("cannot connect to the scripts' redis-server");
    }
    const timeval limit{5, 0};
    redisSetTimeout(m_ctx.get(), limit);
  }

  Value cmd(const std::vector<std::string>& argv) {
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
      throw std::runtime_error("cannot send to the scripts' redis-server");
    }
  }
  Value next() {
    void* r = nullptr;
    if (redisGetReply(m_ctx.get(), &r) != REDIS_OK || r == nullptr) {
      throw std::runtime_error("no reply from the scripts' redis-server");
    }
    const ReplyPtr reply(static_cast<redisReply*>(r));
    return decode(reply.get());
  }

 private:
  std::unique_ptr<redisContext, FreeContext> m_ctx;
};

constexpr lock::ScriptName k_scripts[] = {
    lock::ScriptName::k_acquire,     lock::ScriptName::k_renew,   lock::ScriptName::k_inspect,
    lock::ScriptName::k_raise_fence, lock::ScriptName::k_break,   lock::ScriptName::k_release,
    lock::ScriptName::k_leave,       lock::ScriptName::k_line,    lock::ScriptName::k_history,
    lock::ScriptName::k_runs,        lock::ScriptName::k_suspend, lock::ScriptName::k_revoke,
    lock::ScriptName::k_start_run};

}  // namespace

std::string show(const Value& v) {
  switch (v.type) {
    case Value::Type::k_string:
      return "'" + v.text + "'";
    case Value::Type::k_status:
      return "+" + v.text;
    case Value::Type::k_error:
      return "error: " + v.text;
    case Value::Type::k_integer:
      return std::to_string(v.integer);
    case Value::Type::k_nil:
      return "nil";
    case Value::Type::k_array: {
      std::string out = "{";
      for (size_t i = 0; i < v.items.size(); ++i) {
        out += (i ? ", " : "") + show(v.items[i]);
      }
      return out + "}";
    }
    case Value::Type::k_other:
      break;
  }
  return "?";
}

const lock::Keys& keys() {
  static const lock::Keys k = lock::keys_for("t:", "a");
  return k;
}

struct ScriptServer::Parts {
  RedisServer server;
  Client client{server.port()};
  Client listener{server.port()};
  std::map<lock::ScriptName, std::string> loaded;
  std::vector<std::string> events;
};

ScriptServer::ScriptServer() : m_parts(std::make_unique<Parts>()) {
  (void)m_parts->listener.cmd({"PSUBSCRIBE", "t:*"});
  for (auto name : k_scripts) {
    m_parts->loaded[name] = cmd({"SCRIPT", "LOAD", std::string(lock::script(name).body)}).text;
  }
}

ScriptServer::~ScriptServer() = default;

const std::string& ScriptServer::loaded(lock::ScriptName name) const {
  return m_parts->loaded.at(name);
}

void ScriptServer::reset() {
  (void)cmd({"FLUSHALL"});  // synchronous by default (SYNC is Redis 6.2)
}

long long ScriptServer::now_ms() {
  const Value t = cmd({"TIME"});
  return std::stoll(t.items.at(0).text) * 1000 + std::stoll(t.items.at(1).text) / 1000;
}

Value ScriptServer::cmd(const std::vector<std::string>& argv) {
  return m_parts->client.cmd(argv);
}

Value ScriptServer::eval(lock::ScriptName name, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"EVALSHA", std::string(lock::script(name).sha1)};
  argv.insert(argv.end(), args.begin(), args.end());
  return cmd(argv);
}

std::vector<std::string> ScriptServer::published() {
  (void)cmd({"PUBLISH", "t:end", "."});
  std::vector<std::string> out;
  while (true) {
    const Value m = m_parts->listener.next();
    if (m.type != Value::Type::k_array || m.items.size() != 4) {
      continue;
    }
    const std::string& channel = m.items[2].text;
    if (channel == "t:end") {
      return out;
    }
    const std::string suffix = ":events";
    if (channel.size() > suffix.size() && channel.compare(channel.size() - suffix.size(), suffix.size(), suffix) == 0) {
      m_parts->events.push_back(m.items[3].text);
      continue;
    }
    out.push_back(channel + " " + m.items[3].text);
  }
}

std::vector<std::string> ScriptServer::events() {
  (void)published();
  return std::exchange(m_parts->events, {});
}

ScriptServer& script_server() {
  static ScriptServer s;
  return s;
}

}  // namespace redlock::test
