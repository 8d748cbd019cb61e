// The global options' table, and argv's global options read with it
// without CLI11 (cli/line/global_options.hpp).

#include "cli/line/global_options.hpp"

#include <algorithm>
#include <cstring>
#include <exception>

#include "cli/line/option_values.hpp"

namespace redlock::cli {

namespace {

constexpr GlobalOptionDef k_globals[] = {
    {"-r,--redis", "URL",
     "Redis URL; repeat for the Redlock algorithm over N masters (default: $REDLOCK_URL, else "
     "redis://127.0.0.1:6379)",
     true, [](GlobalOptions& g, const std::string& v) { g.redis.push_back(v); }},
    {"--prefix", "STR", "key prefix (default: $REDLOCK_PREFIX, else redlock:)", false,
     [](GlobalOptions& g, const std::string& v) { g.prefix = v; }},
    {"--connect-timeout", "D", "per-connection timeout (default 1s)", false,
     [](GlobalOptions& g, const std::string& v) { g.connect_timeout = parse_timeout(v, "--connect-timeout"); }},
    {"--redis-timeout", "D", "per-command round-trip timeout (default: $REDLOCK_REDIS_TIMEOUT, else 1s)", false,
     [](GlobalOptions& g, const std::string& v) { g.timeout = parse_timeout(v, "--redis-timeout"); }},
    // The round-trip timeout's name before 0.2. On acquire and exec --timeout
    // is now flock's wait, also before the subcommand's name; on the others it
    // is refused with a line that names --redis-timeout (command_line.cpp).
    {"--timeout", "D", "", false, [](GlobalOptions& g, const std::string& v) { g.legacy_timeout = v; }},
    {"--tls-ca", "FILE", "CA certificates for rediss:// (default: system store)", false,
     [](GlobalOptions& g, const std::string& v) { g.tls_ca = v; }},
    {"--tls-cert", "FILE", "client certificate for rediss://", false,
     [](GlobalOptions& g, const std::string& v) { g.tls_cert = v; }},
    {"--tls-key", "FILE", "client key for rediss://", false,
     [](GlobalOptions& g, const std::string& v) { g.tls_key = v; }},
    {"--tls-server-name", "NAME", "name to verify the server certificate against", false,
     [](GlobalOptions& g, const std::string& v) { g.tls_server_name = v; }},
    {"--insecure", nullptr, "do not verify TLS certificates (says so on stderr)", false,
     [](GlobalOptions& g, const std::string&) { g.insecure = true; }},
    {"--password-file", "FILE", "read the Redis password from FILE (default: $REDLOCK_PASSWORD_FILE)", false,
     [](GlobalOptions& g, const std::string& v) { g.password_file = v; }},
    {"--min-replicas", "N", "after acquire/renew, WAIT for N replicas or treat the lock as not held", false,
     [](GlobalOptions& g, const std::string& v) {
       g.min_replicas = parse_whole_number(v, "--min-replicas", 0, 1'000'000);
     }},
    {"-q,--quiet", nullptr,
     "say nothing when the lock is busy and nothing while waiting; errors still get their line (-qq: nothing at "
     "all)",
     true, [](GlobalOptions& g, const std::string&) { ++g.quiet; }},
    {"--silent", nullptr, "print nothing on stderr, not even errors (same as -qq)", false,
     [](GlobalOptions& g, const std::string&) { g.silent = true; }},
    {"-v,--verbose", nullptr, "say more on stderr", false,
     [](GlobalOptions& g, const std::string&) { g.verbose = true; }},
    {"--log-format", "F",
     "text (the default) or json: each line on stderr one JSON object (default: $REDLOCK_LOG_FORMAT)", false,
     [](GlobalOptions& g, const std::string& v) { g.log_format = parse_log_format(v, "--log-format"); }},
    {"--syslog", nullptr, "send each line on stderr to syslog(3) too (default: $REDLOCK_SYSLOG)", false,
     [](GlobalOptions& g, const std::string&) { g.syslog = true; }},
    {"--syslog-facility", "F", "the syslog facility, implies --syslog (default user)", false,
     [](GlobalOptions& g, const std::string& v) { g.syslog_facility = parse_syslog_facility(v, "--syslog-facility"); }},
};

// Whether `name` is one of `names` ("-r,--redis").
bool named(std::string_view names, std::string_view name) {
  while (!names.empty()) {
    const size_t comma = std::min(names.find(','), names.size());
    if (names.substr(0, comma) == name) {
      return true;
    }
    names.remove_prefix(std::min(comma + 1, names.size()));
  }
  return false;
}

const GlobalOptionDef* global_named(std::string_view name) {
  for (const GlobalOptionDef& def : k_globals) {
    if (named(def.names, name)) {
      return &def;
    }
  }
  return nullptr;
}

// The option's name in `word` as CLI11 looks it up: up to '=' ("--ttl=5s"),
// or a short option's two characters ("-w5s", "-nx").
std::string_view option_name(std::string_view word) {
  word = word.substr(0, std::min(word.find('='), word.size()));
  return word.size() > 2 && word[1] != '-' ? word.substr(0, 2) : word;
}

// The subcommand's own option at argv[i], kept with its value: false when
// `word` is none of its options.
bool keep_own_option(const SubcommandWords& sub, int& i, int argc, char** argv, std::vector<char*>& kept) {
  const std::string_view word = argv[i];
  const OwnOption own = sub.option(option_name(word));
  if (own == OwnOption::k_none) {
    return false;
  }
  kept.push_back(argv[i]);
  // "--ttl=" is --ttl with its value in the next word, as CLI11 reads it.
  const size_t at = word.find('=');
  const bool joined = (at != std::string_view::npos && at + 1 < word.size()) ||
                      (at == std::string_view::npos && word[1] != '-' && word.size() > 2);
  if (own == OwnOption::k_value && !joined && i + 1 < argc && std::strcmp(argv[i + 1], "--") != 0) {
    kept.push_back(argv[++i]);  // its value, whatever it looks like (as CLI11 takes it)
  }
  return true;
}

// The global option at argv[i] (and its value) applied to `g`: false when
// it is none, or spelled in a way only CLI11 reads (see the header). Throws
// what its value's parser throws.
bool take_global_option(GlobalOptions& g, int& i, int argc, char** argv) {
  const std::string_view word = argv[i];
  const size_t eq = word.find('=');
  const GlobalOptionDef* def = global_named(word[1] == '-' ? word.substr(0, eq) : word);
  if (def == nullptr) {
    return false;
  }
  if (def->type_name == nullptr) {
    if (eq != std::string_view::npos) {
      return false;  // --insecure=false
    }
    def->apply(g, "");
    return true;
  }
  if (eq + 1 == word.size()) {
    return false;  // "--prefix=": CLI11 takes the next word for its value
  }
  if (eq != std::string_view::npos) {
    def->apply(g, std::string(word.substr(eq + 1)));
    return true;
  }
  if (i + 1 >= argc || std::strcmp(argv[i + 1], "--") == 0) {
    return false;
  }
  def->apply(g, argv[++i]);
  return true;
}

}  // namespace

std::span<const GlobalOptionDef> global_option_defs() {
  return k_globals;
}

std::optional<std::vector<char*>> take_global_options(GlobalOptions& g, int argc, char** argv,
                                                      const SubcommandWords& sub) {
  std::vector<char*> kept{argv[0]};
  bool in_sub = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view word = argv[i];
      if (word == "--") {
        kept.insert(kept.end(), argv + i, argv + argc);
        break;
      }
      if (word.size() < 2 || word[0] != '-') {
        if (!in_sub && !sub.found(word)) {
          return std::nullopt;
        }
        in_sub = true;
        kept.push_back(argv[i]);
      } else if (!(in_sub && keep_own_option(sub, i, argc, argv, kept)) && !take_global_option(g, i, argc, argv)) {
        return std::nullopt;
      }
    }
  } catch (const std::exception&) {
    return std::nullopt;  // a value that does not parse: the whole command line says so
  }
  if (!in_sub) {
    return std::nullopt;
  }
  return kept;
}

}  // namespace redlock::cli
