#include "redis/subscriber.hpp"

namespace redlock::redis {

Subscriber::Subscriber(std::vector<Endpoint> endpoints, Timeouts timeouts, std::shared_ptr<TlsContext> tls,
                       Cancel cancel)
    : m_timeouts(timeouts), m_tls(std::move(tls)), m_cancel(cancel) {
  for (auto& ep : endpoints) {
    Server s;
    s.endpoint = std::move(ep);
    m_servers.push_back(std::move(s));
  }
}

Subscriber::~Subscriber() = default;

Connection& Subscriber::open(size_t i) {
  Server& s = m_servers[i];
  s.conn = std::make_unique<Connection>(s.endpoint, m_timeouts, m_tls, m_cancel);
  s.up = false;
  s.pending = false;
  s.why.clear();
  s.refusal.reset();
  return *s.conn;
}

void Subscriber::start(size_t i, const std::vector<std::string>& channels, const std::vector<std::string>& patterns) {
  Server& s = m_servers[i];
  if (!s.conn || s.up || s.pending) {
    open(i);
  }
  for (const auto& [command, names] : {std::pair{"SUBSCRIBE", &channels}, std::pair{"PSUBSCRIBE", &patterns}}) {
    if (!names->empty()) {
      std::vector<std::string> argv = {command};
      argv.insert(argv.end(), names->begin(), names->end());
      s.conn->queue(argv);
    }
  }
  s.pending = true;
}

void Subscriber::start(const std::vector<std::string>& channels, const std::vector<std::string>& patterns) {
  for (size_t i = 0; i < m_servers.size(); ++i) {
    start(i, channels, patterns);
  }
}

void Subscriber::confirm(std::span<Subscriber* const> subs, const Cancel& cancel) {
  std::vector<Connection*> conns;
  for (Subscriber* sub : subs) {
    for (auto& s : sub->m_servers) {
      if (s.pending && !s.conn->failure()) {
        conns.push_back(s.conn.get());
      }
    }
  }
  (void)run_all(conns, cancel);
  for (Subscriber* sub : subs) {
    for (auto& s : sub->m_servers) {
      if (!s.pending) {
        continue;
      }
      s.pending = false;
      if (s.conn->failure()) {
        s.why = s.conn->failure()->message;
        continue;
      }
      s.up = true;
      for (const auto& r : s.conn->take_replies()) {
        if (r.is_error() && !s.refusal) {
          s.refusal = r.str;
        }
      }
    }
  }
}

void Subscriber::confirm(const Cancel& cancel) {
  Subscriber* one[] = {this};
  confirm(one, cancel);
}

void Subscriber::ping(size_t i) {
  if (m_servers[i].up) {
    m_servers[i].conn->queue({"PING"});
  }
}

std::vector<Connection*> Subscriber::live() {
  std::vector<Connection*> out;
  for (auto& s : m_servers) {
    if (s.up) {
      out.push_back(s.conn.get());
    }
  }
  return out;
}

RunResult Subscriber::wait(std::optional<TimePoint> until, const Cancel& cancel) {
  return wait_any(live(), until, cancel);
}

void Subscriber::read_arrived() {
  redis::read_arrived(live());
}

Subscriber::Arrived Subscriber::take() {
  Arrived out;
  for (size_t i = 0; i < m_servers.size(); ++i) {
    Server& s = m_servers[i];
    if (!s.up) {
      continue;
    }
    for (auto& r : s.conn->take_replies()) {
      // Anything but a message is a subscription's confirmation or a PONG.
      const bool message = r.is_array() && r.elements.size() == 3 && r.elements[0].str == "message";
      const bool pmessage = r.is_array() && r.elements.size() == 4 && r.elements[0].str == "pmessage";
      if (message) {
        out.messages.push_back(Message{i, std::move(r.elements[1].str), std::move(r.elements[2].str), {}});
      } else if (pmessage) {
        out.messages.push_back(
            Message{i, std::move(r.elements[2].str), std::move(r.elements[3].str), std::move(r.elements[1].str)});
      }
    }
    if (s.conn->failure() || s.conn->closed()) {
      s.up = false;
      s.why = s.conn->failure() ? s.conn->failure()->message : "the server closed the connection";
      out.lost.push_back(i);
    }
  }
  return out;
}

}  // namespace redlock::redis
