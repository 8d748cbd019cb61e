#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "util/exit_status.hpp"
#include "util/log.hpp"
#include "util/text.hpp"

namespace redlock::cli {

CLI::App* add_status(CLI::App& app, StatusOptions& o) {
  auto* sub = app.add_subcommand("status", "show who holds which lock, for how long");
  sub->add_option("NAME", o.names, "locks to show (default: every lock under the prefix)");
  sub->add_flag("--json", o.json, "print a JSON array instead of a table");
  sub->footer("Example:\n  redlock status                 # every lock, as a table\n"
              "  redlock status deploy --json   # exit 0 when held, 1 when free");
  return sub;
}

namespace {

enum class State { k_free, k_held, k_foreign };

// The overall picture of one lock across all servers. With N servers a lock
// is held when a quorum agrees on one token.
struct Verdict {
  std::string name;
  State state = State::k_free;
  std::string foreign_type;
  const lock::ServerView* holder = nullptr;  // a view from the quorum, for host/pid/cmd
  long long ttl_ms = -2;
  long long age_ms = 0;
  long long fence = 0;
  long long count = 0;
  std::vector<lock::ServerView> views;
};

long long to_ll(const std::string& s) {
  try {
    return std::stoll(s);
  } catch (...) {
    return 0;
  }
}

Verdict judge(std::string name, std::vector<lock::ServerView> views, size_t quorum) {
  Verdict v;
  v.name = std::move(name);
  v.views = std::move(views);
  std::map<std::string, size_t> votes;
  size_t foreign = 0;
  for (const auto& s : v.views) {
    if (s.foreign) {
      ++foreign;
      v.foreign_type = s.type;
    } else if (s.held()) {
      ++votes[s.field("token")];
    }
  }
  for (const auto& [token, n] : votes) {
    if (n < quorum) {
      continue;
    }
    v.state = State::k_held;
    for (const auto& s : v.views) {
      if (!s.held() || s.field("token") != token) {
        continue;
      }
      if (!v.holder) {
        v.holder = &s;
        v.ttl_ms = s.ttl_ms;
        v.age_ms = std::max(0LL, s.now_ms - to_ll(s.field("since_ms")));
      }
      v.ttl_ms = std::min(v.ttl_ms, s.ttl_ms);
      v.fence = std::max(v.fence, to_ll(s.field("fence")));
      v.count = std::max(v.count, to_ll(s.field("count")));
    }
  }
  if (v.state != State::k_held && foreign >= quorum) {
    v.state = State::k_foreign;
  }
  return v;
}

const char* state_name(State s) {
  switch (s) {
    case State::k_held:
      return "held";
    case State::k_foreign:
      return "foreign";
    default:
      return "free";
  }
}

std::string server_state(const lock::ServerView& s) {
  if (s.error) {
    return "unreachable";
  }
  if (s.foreign) {
    return "foreign";
  }
  return s.held() ? "held" : "free";
}

nlohmann::json to_json(const Verdict& v) {
  nlohmann::json j = {{"name", v.name}, {"state", state_name(v.state)}, {"held", v.state == State::k_held}};
  if (v.state == State::k_foreign) {
    j["type"] = v.foreign_type;
  }
  if (v.holder) {
    j["host"] = v.holder->field("host");
    j["pid"] = to_ll(v.holder->field("pid"));
    j["cmd"] = v.holder->field("cmd");
    j["since_ms"] = to_ll(v.holder->field("since_ms"));
    j["age_ms"] = v.age_ms;
    j["ttl_ms"] = v.ttl_ms;
    j["fence"] = v.fence;
    j["count"] = v.count;
  }
  nlohmann::json servers = nlohmann::json::array();
  for (const auto& s : v.views) {
    nlohmann::json sj = {{"url", s.endpoint}, {"state", server_state(s)}};
    if (s.error) {
      sj["error"] = *s.error;
    } else if (s.held()) {
      sj["ttl_ms"] = s.ttl_ms;
      sj["host"] = s.field("host");
      sj["pid"] = to_ll(s.field("pid"));
      sj["fence"] = to_ll(s.field("fence"));
    } else if (s.foreign) {
      sj["type"] = s.type;
    }
    servers.push_back(std::move(sj));
  }
  j["servers"] = std::move(servers);
  return j;
}

void print_table(const std::vector<Verdict>& verdicts, bool many_servers) {
  std::vector<std::vector<std::string>> rows;
  rows.push_back({"NAME", "STATE", "HOST", "PID", "AGE", "TTL", "FENCE", "COUNT", "COMMAND"});
  for (const auto& v : verdicts) {
    std::string state = v.state == State::k_foreign ? "foreign(" + v.foreign_type + ")" : state_name(v.state);
    if (v.holder) {
      rows.push_back({escape_for_terminal(v.name), state, escape_for_terminal(v.holder->field("host")),
                      escape_for_terminal(v.holder->field("pid")), format_duration(Millis(v.age_ms)),
                      v.ttl_ms >= 0 ? format_duration(Millis(v.ttl_ms)) : "none", std::to_string(v.fence),
                      std::to_string(v.count), escape_for_terminal(v.holder->field("cmd"))});
    } else {
      rows.push_back({escape_for_terminal(v.name), state, "-", "-", "-", "-", "-", "-", "-"});
    }
    if (many_servers) {
      for (const auto& s : v.views) {
        std::string detail = server_state(s);
        if (s.held()) {
          detail += fmt::format(" ttl {} by {} pid {}", format_duration(Millis(s.ttl_ms)),
                                escape_for_terminal(s.field("host")), escape_for_terminal(s.field("pid")));
        } else if (s.error) {
          detail += ": " + escape_for_terminal(*s.error);
        }
        rows.push_back({"  " + s.endpoint, detail});
      }
    }
  }
  std::vector<size_t> width(9, 0);
  for (const auto& row : rows) {
    if (row.size() < width.size()) {
      continue;  // per-server detail lines do not set column widths
    }
    for (size_t c = 0; c < row.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  for (const auto& row : rows) {
    std::string line;
    if (row.size() < width.size()) {
      line = row[0] + "  " + row[1];
    } else {
      for (size_t c = 0; c < row.size(); ++c) {
        line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], width[c]);
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    fmt::print("{}\n", line);
  }
}

}  // namespace

int run_status(const StatusOptions& o, const GlobalOptions& g) {
  for (const auto& name : o.names) {
    validate_name(name);
  }
  Resolved r = resolve(g);
  lock::Locker locker(r.endpoints, r.options);
  std::vector<std::string> names = o.names.empty() ? locker.list() : o.names;
  std::vector<Verdict> verdicts;
  for (const auto& name : names) {
    Verdict v = judge(name, locker.inspect(name), locker.quorum());
    // A listed name whose lock expired between SCAN and inspect is simply gone.
    if (!o.names.empty() || v.state != State::k_free) {
      verdicts.push_back(std::move(v));
    }
  }

  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& v : verdicts) {
      out.push_back(to_json(v));
    }
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else if (verdicts.empty()) {
    log_warning("no locks under the prefix '{}'", escape_for_terminal(r.options.prefix));
  } else {
    print_table(verdicts, locker.size() > 1);
  }

  int status = 0;
  for (const auto& v : verdicts) {
    if (v.state == State::k_foreign) {
      log_warning("the key for '{}' is not a redlock lock (it holds a {}); redlock leaves it alone",
                  escape_for_terminal(v.name), v.foreign_type);
      status = to_int(ExitStatus::k_protocol);
    } else if (v.state == State::k_free && status == 0) {
      status = to_int(ExitStatus::k_no);
    }
  }
  return status;
}

}  // namespace redlock::cli
