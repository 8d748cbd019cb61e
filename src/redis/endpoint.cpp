#include "redis/endpoint.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <utility>

#include "util/exit_status.hpp"

namespace redlock::redis {
namespace {

[[noreturn]] void bad(std::string_view why) {
  throw UsageError(fmt::format("invalid Redis URL: {}", why));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

// %-decodes `s`; `what` names the part for the message (never its value,
// which may be a password).
std::string percent_decode(std::string_view s, std::string_view what) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) {
      bad(fmt::format("truncated %-escape in the {}", what));
    }
    int hi = hex_value(s[i + 1]);
    int lo = hex_value(s[i + 2]);
    if (hi < 0 || lo < 0) {
      bad(fmt::format("bad %-escape in the {}", what));
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

// The text is not quoted back: when a password holds an unescaped '/', the
// port or database part of the URL is a piece of that password.
long long parse_number(std::string_view s, long long max, std::string_view what) {
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0 || v > max) {
    bad(fmt::format("the {} is not a whole number from {} to {}", what, what == "port" ? 1 : 0, max));
  }
  return v;
}

bool has_control(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// Percent-encodes everything but unreserved characters (and those in
// `keep`), so display() reads back as the same user, host, path or master.
std::string percent_encode(std::string_view s, std::string_view keep = {}) {
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~' || keep.find(c) != std::string_view::npos) {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

void parse_db(Endpoint& ep, std::string_view s) {
  ep.db = parse_number(s, 2147483647, "database");
}

void parse_userinfo(Endpoint& ep, std::string_view userinfo) {
  size_t colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    // redis://secret@host is the old single-part form: a password.
    ep.password = percent_decode(userinfo, "password");
    return;
  }
  ep.user = percent_decode(userinfo.substr(0, colon), "user name");
  ep.password = percent_decode(userinfo.substr(colon + 1), "password");
  if (ep.password->empty()) {
    ep.password.reset();
  }
}

// Parses and strips "[user][:password]@" from the front of `rest`. It ends at
// the last '@' before the path, so that a password may hold a raw one; with
// `whole`, at the last '@' of all (a redis:// path is a number, never an
// '@'), so that a password may hold a raw '/' too.
void take_userinfo(Endpoint& ep, std::string_view& rest, bool whole) {
  size_t slash = whole ? std::string_view::npos : rest.find('/');
  size_t at = rest.substr(0, slash).rfind('@');
  if (at != std::string_view::npos) {
    parse_userinfo(ep, rest.substr(0, at));
    rest = rest.substr(at + 1);
  }
}

// The port after a host's ':' (never empty when the ':' is there).
std::string_view port_after_colon(std::string_view after) {
  if (after.size() == 1) {
    bad("empty port");
  }
  return after.substr(1);
}

// "[v6addr]" or "[v6addr]:port": sets the host, returns the port ("" if none).
std::string_view take_ipv6_host(Endpoint& ep, std::string_view hostport) {
  size_t close = hostport.find(']');
  if (close == std::string_view::npos) {
    bad("unclosed '[' in an IPv6 host");
  }
  ep.host = std::string(hostport.substr(1, close - 1));
  std::string_view after = hostport.substr(close + 1);
  if (!after.empty() && after.front() != ':') {
    bad("unexpected text after the IPv6 host");
  }
  std::string_view port = after.empty() ? std::string_view() : port_after_colon(after);
  if (ep.host.empty() || ep.host.find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
    bad("malformed IPv6 address");
  }
  return port;
}

// "name" or "name:port" (a name or an IPv4 address, %-escapes allowed): sets
// the host, returns the port ("" if none).
std::string_view take_named_host(Endpoint& ep, std::string_view hostport) {
  std::string_view port;
  size_t colon = hostport.find(':');
  if (colon != std::string_view::npos) {
    port = port_after_colon(hostport.substr(colon));
    hostport = hostport.substr(0, colon);
  }
  ep.host = percent_decode(hostport, "host");
  if (ep.host.find_first_of(" []@/:,") != std::string::npos || has_control(ep.host)) {
    bad("malformed host name");
  }
  return port;
}

void parse_port(Endpoint& ep, std::string_view port) {
  ep.port = static_cast<int>(parse_number(port, 65535, "port"));
  if (ep.port == 0) {
    bad("port 0 is not a port to connect to (use 1 to 65535)");
  }
}

// redis[s]://[[user]:password@]host[:port][/db]
Endpoint parse_tcp(std::string_view rest, bool tls) {
  Endpoint ep;
  ep.tls = tls;
  take_userinfo(ep, rest, true);
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (hostport.find_first_of("?#") != std::string_view::npos || path.find_first_of("?#") != std::string_view::npos) {
    bad("query strings and fragments are not supported for redis:// URLs");
  }
  const bool ipv6 = !hostport.empty() && hostport.front() == '[';
  std::string_view port = ipv6 ? take_ipv6_host(ep, hostport) : take_named_host(ep, hostport);
  if (ep.host.empty()) {
    bad("the host is empty");
  }
  if (!port.empty()) {
    parse_port(ep, port);
  }
  if (!path.empty()) {
    parse_db(ep, path);
  }
  return ep;
}

Endpoint parse_unix(std::string_view rest) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::k_unix;
  size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  if (path.empty() || path.front() != '/') {
    bad("a unix URL needs an absolute socket path: unix:///path/to/redis.sock");
  }
  ep.path = percent_decode(path, "socket path");
  if (has_control(ep.path)) {
    bad("the socket path contains a control character");
  }
  if (ep.path.size() >= 108) {
    bad("the socket path is longer than 107 bytes");
  }
  if (q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    if (query.substr(0, 3) != "db=") {
      bad("the only query parameter a unix URL takes is db=N");
    }
    parse_db(ep, query.substr(3));
  }
  return ep;
}

// The query of a sentinel URL: only sentinel_password=P (%-escaped).
// Neither the value nor an unknown parameter's value is ever quoted back.
void parse_sentinel_query(Endpoint& ep, std::string_view query) {
  size_t start = 0;
  while (true) {
    size_t amp = query.find('&', start);
    std::string_view param = query.substr(start, amp == std::string_view::npos ? std::string_view::npos : amp - start);
    size_t eq = param.find('=');
    std::string_view key = param.substr(0, eq);
    if (key != "sentinel_password" || eq == std::string_view::npos) {
      bad("the only query parameter a sentinel URL takes is sentinel_password=P");
    }
    ep.sentinel_password = percent_decode(param.substr(eq + 1), "sentinel password");
    if (ep.sentinel_password->empty()) {
      ep.sentinel_password.reset();
    }
    if (amp == std::string_view::npos) {
      break;
    }
    start = amp + 1;
  }
}

// redis+sentinel://[[user]:password@]host[:port][,host[:port]…]/master[/db][?sentinel_password=P]
Endpoint parse_sentinel(std::string_view rest) {
  Endpoint ep;
  ep.kind = Endpoint::Kind::k_sentinel;
  take_userinfo(ep, rest, false);
  if (size_t q = rest.find('?'); q != std::string_view::npos) {
    parse_sentinel_query(ep, rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash + 1 >= rest.size()) {
    bad("a sentinel URL needs the master's name: redis+sentinel://host:26379/mymaster");
  }
  std::string_view hosts = rest.substr(0, slash);
  std::string_view path = rest.substr(slash + 1);
  size_t start = 0;
  while (true) {
    size_t comma = hosts.find(',', start);
    std::string_view one =
        hosts.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (one.empty()) {
      bad("empty sentinel host");
    }
    std::string hostport(one);
    if (hostport.find(':') == std::string::npos || (hostport.front() == '[' && hostport.back() == ']')) {
      hostport += ":26379";
    }
    Endpoint s = parse_tcp(hostport, false);
    ep.sentinels.emplace_back(s.host, s.port);
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  size_t db_slash = path.find('/');
  ep.master = percent_decode(path.substr(0, db_slash), "master name");
  if (ep.master.empty() || has_control(ep.master) || ep.master.find_first_of("?#") != std::string::npos) {
    bad("malformed master name");
  }
  if (db_slash != std::string_view::npos) {
    parse_db(ep, path.substr(db_slash + 1));
  }
  ep.host = ep.sentinels.front().first;
  ep.port = ep.sentinels.front().second;
  return ep;
}

// A host as a URL spells it: an IPv6 address in brackets, a name escaped
// as parse_tcp decodes it (a host may hold a '%' or a '?' once decoded).
std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? "[" + host + "]" : percent_encode(host);
}

// `url` with the password of a user part (before the last '@') hidden, as a
// complaint about it may echo it.
std::string without_password(std::string_view url) {
  const size_t at = url.rfind('@');
  return at == std::string_view::npos ? std::string(url) : "***@" + std::string(url.substr(at + 1));
}

// A URL whose scheme lacks its "://" ("redis//host", "rediss//host",
// "redis:/host", "redis:host"): the scheme and what follows it. A colon
// before a port alone ("redis:6379", "redis:6379/2") is a host named redis,
// not a typo. nullopt when `url` is none of these.
std::optional<std::pair<std::string_view, std::string_view>> mistyped_scheme(std::string_view url) {
  // The longer scheme first: "rediss" begins with "redis".
  for (const std::string_view scheme : {"redis+sentinel", "rediss", "redis"}) {
    if (url.rfind(scheme, 0) != 0) {
      continue;
    }
    std::string_view rest = url.substr(scheme.size());
    for (const std::string_view sep : {"//", ":/"}) {
      if (rest.rfind(sep, 0) == 0 && rest.rfind("://", 0) != 0) {
        return std::pair{scheme, rest.substr(sep.size())};
      }
    }
    if (rest.size() > 1 && rest[0] == ':' && rest[1] != '/') {
      const std::string_view after = rest.substr(1);
      const size_t digits = after.find_first_not_of("0123456789");
      const bool port = digits != 0 && (digits == std::string_view::npos || after[digits] == '/');
      if (!port) {
        return std::pair{scheme, after};
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Endpoint parse_endpoint(std::string_view url) {
  if (url.empty()) {
    bad("it is empty");
  }
  // A redis:// or rediss:// password (before the last '@') may hold spaces.
  const bool tcp = url.rfind("redis://", 0) == 0 || url.rfind("rediss://", 0) == 0;
  const size_t userinfo_end = tcp ? url.rfind('@') : std::string_view::npos;
  for (size_t i = 0; i < url.size(); ++i) {
    const auto c = static_cast<unsigned char>(url[i]);
    const bool space_allowed = userinfo_end != std::string_view::npos && i < userinfo_end;
    if (c < 0x20 || c == 0x7f || (c == ' ' && !space_allowed)) {
      bad("it contains spaces or control characters");
    }
  }
  // "redis//host": echo it (a password blanked) with the "://" it lacks.
  // Before looking for "://": a password may hold one.
  if (const auto typo = mistyped_scheme(url)) {
    const auto [scheme, rest] = *typo;
    const std::string_view sep = url.substr(scheme.size(), url.size() - scheme.size() - rest.size());
    bad(fmt::format("'{}{}{}' lacks the '://' after {}: write {}://{}", scheme, sep, without_password(rest), scheme,
                    scheme, without_password(rest)));
  }
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    // "localhost:6379": echo it (a password before '@' blanked) with the
    // scheme it most likely lacks. Guessing redis:// could send a password
    // in the clear to a server meant to be rediss://. "//host" lacks only
    // the scheme's name.
    const std::string shown = without_password(url);
    const std::string_view host = url.rfind("//", 0) == 0 ? url.substr(2) : url;
    bad(fmt::format("'{}' has no scheme: write redis://{} (or rediss://, unix:///path, redis+sentinel://)", shown,
                    without_password(host)));
  }
  std::string_view scheme = url.substr(0, sep);
  std::string_view rest = url.substr(sep + 3);
  if (scheme == "redis") {
    return parse_tcp(rest, false);
  }
  if (scheme == "rediss") {
    return parse_tcp(rest, true);
  }
  if (scheme == "unix") {
    return parse_unix(rest);
  }
  if (scheme == "redis+sentinel") {
    return parse_sentinel(rest);
  }
  bad(fmt::format("unknown scheme '{}' (use redis://, rediss://, unix:// or redis+sentinel://)", scheme));
}

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}

// Where the next URL of a list begins: a comma followed by "scheme://"
// (blanks allowed between); a comma elsewhere belongs to the URL (a
// Sentinel's hosts). npos when `urls` holds no more after `from`.
size_t next_url(std::string_view urls, size_t from) {
  for (size_t comma = urls.find(',', from); comma != std::string_view::npos; comma = urls.find(',', comma + 1)) {
    size_t begin = comma + 1;
    while (begin < urls.size() && is_blank(urls[begin])) {
      ++begin;
    }
    const size_t sep = urls.find("://", begin);
    if (sep != std::string_view::npos && sep > begin &&
        urls.substr(begin, sep - begin).find_first_not_of("abcdefghijklmnopqrstuvwxyz+") == std::string_view::npos) {
      return comma;
    }
  }
  return std::string_view::npos;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) {
    s.remove_prefix(1);
  }
  while (!s.empty() && is_blank(s.back())) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

std::vector<Endpoint> parse_endpoint_list(std::string_view urls) {
  const bool list = urls.find(',') != std::string_view::npos;
  std::vector<Endpoint> out;
  size_t start = 0;
  while (true) {
    const size_t comma = next_url(urls, start);
    const std::string_view one =
        trimmed(urls.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (list && (one.empty() || one.front() == ',' || one.back() == ',')) {
      bad("the list of URLs has an empty item (a stray comma)");
    }
    out.push_back(parse_endpoint(one));
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  return out;
}

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// What makes two endpoints the same server in writing: everything that picks
// the server and the database, nothing that picks the credentials.
std::string identity(const Endpoint& ep) {
  switch (ep.kind) {
    case Endpoint::Kind::k_unix:
      return fmt::format("unix {} {}", ep.path, ep.db);
    case Endpoint::Kind::k_sentinel: {
      std::vector<std::string> sentinels;
      for (const auto& [host, port] : ep.sentinels) {
        sentinels.push_back(fmt::format("{}:{}", lower(host), port));
      }
      std::sort(sentinels.begin(), sentinels.end());
      std::string out = "sentinel " + ep.master;
      for (const auto& s : sentinels) {
        out += " " + s;
      }
      return fmt::format("{} {}", out, ep.db);
    }
    case Endpoint::Kind::k_tcp:
      break;
  }
  return fmt::format("{} {} {} {}", ep.tls ? "rediss" : "redis", lower(ep.host), ep.port, ep.db);
}

}  // namespace

void refuse_repeated(const std::vector<Endpoint>& endpoints) {
  for (size_t i = 0; i < endpoints.size(); ++i) {
    for (size_t j = i + 1; j < endpoints.size(); ++j) {
      if (identity(endpoints[i]) != identity(endpoints[j])) {
        continue;
      }
      const std::string first = endpoints[i].display();
      const std::string second = endpoints[j].display();
      throw UsageError(fmt::format(
          "{}{} is named twice: the same Redis node is one server, not two independent Redlock masters; give "
          "it once with --redis or in $REDLOCK_URL",
          first, first == second ? "" : " (also as " + second + ")"));
    }
  }
}

std::string Endpoint::display() const {
  // "user:@", not "user@": the single-part form reads back as a password.
  std::string user_part = user.empty() ? "" : percent_encode(user) + ":@";
  if (kind == Kind::k_unix) {
    const std::string p = percent_encode(path, "/");
    return db ? fmt::format("unix://{}?db={}", p, db) : fmt::format("unix://{}", p);
  }
  if (kind == Kind::k_sentinel) {
    std::string hosts;
    for (const auto& [h, p] : sentinels) {
      hosts += fmt::format("{}{}:{}", hosts.empty() ? "" : ",", url_host(h), p);
    }
    std::string out = fmt::format("redis+sentinel://{}{}/{}", user_part, hosts, percent_encode(master));
    if (db) {
      out += fmt::format("/{}", db);
    }
    return out;
  }
  std::string out = fmt::format("{}://{}{}:{}", tls ? "rediss" : "redis", user_part, url_host(host), port);
  if (db) {
    out += fmt::format("/{}", db);
  }
  return out;
}

}  // namespace redlock::redis
