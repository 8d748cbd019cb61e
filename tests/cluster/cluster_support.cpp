#include "cluster_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace redlock::test {

Cluster::Cluster() {
  std::vector<std::string> create = {"--cluster", "create"};
  for (int i = 0; i < 3; ++i) {
    m_nodes.push_back(std::make_unique<RedisServer>(
        RedisServer::Options{.extra = {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                                       "--cluster-node-timeout", "5000"}}));
    create.push_back("127.0.0.1:" + std::to_string(m_nodes.back()->port()));
  }
  create.insert(create.end(), {"--cluster-replicas", "0", "--cluster-yes"});
  Child cli(create, Env{}, std::string("redis-cli"));
  Result r = cli.wait(Seconds(30));
  if (r.status != 0) {
    throw std::runtime_error("redis-cli --cluster create failed: " + r.out + r.err);
  }
  for (auto& n : m_nodes) {
    const bool ok = eventually(
        [&] {
          return n->cmd({"CLUSTER", "INFO"}).str.find("cluster_state:ok") != std::string::npos;
        },
        Seconds(20));
    if (!ok) {
      throw std::runtime_error("the cluster did not become ok");
    }
    m_ids.push_back(n->cmd({"CLUSTER", "MYID"}).str);
  }
  // Every node knows every other (the migrations below name them by ID).
  for (auto& n : m_nodes) {
    const bool ok = eventually(
        [&] {
          const std::string nodes = n->cmd({"CLUSTER", "NODES"}).str;
          return std::all_of(m_ids.begin(), m_ids.end(),
                             [&](const std::string& id) { return nodes.find(id) != std::string::npos; });
        },
        Seconds(20));
    if (!ok) {
      throw std::runtime_error("the cluster's nodes did not meet");
    }
  }
}

int Cluster::slot_of(const std::string& key) {
  return static_cast<int>(m_nodes[0]->cmd({"CLUSTER", "KEYSLOT", key}).integer);
}

size_t Cluster::owner(int slot) {
  std::istringstream lines(m_nodes[0]->cmd({"CLUSTER", "NODES"}).str);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) {
      f.push_back(w);
    }
    for (size_t k = 8; k < f.size(); ++k) {
      if (f[k].front() == '[') {
        continue;  // a migration in progress, not ownership
      }
      const size_t dash = f[k].find('-');
      const int lo = std::stoi(f[k].substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(f[k].substr(dash + 1));
      if (slot >= lo && slot <= hi) {
        return static_cast<size_t>(std::find(m_ids.begin(), m_ids.end(), f[0]) - m_ids.begin());
      }
    }
  }
  throw std::runtime_error("no node owns slot " + std::to_string(slot));
}

int Cluster::holders(const std::string& key) {
  int count = 0;
  for (auto& n : m_nodes) {
    auto r = n->cmd({"EXISTS", key});
    count += !r.is_error() && r.integer == 1;
  }
  return count;
}

std::vector<std::string> Cluster::keys(const std::string& pattern) {
  std::vector<std::string> out;
  for (auto& n : m_nodes) {
    std::string cursor = "0";
    do {
      auto r = n->cmd({"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"});
      cursor = r.elements.at(0).str;
      for (const auto& k : r.elements.at(1).elements) {
        out.push_back(k.str);
      }
    } while (cursor != "0");
  }
  std::sort(out.begin(), out.end());
  return out;
}

long long Cluster::errors(size_t i, const std::string& prefix) {
  const std::string info = m_nodes.at(i)->cmd({"INFO", "errorstats"}).str;
  const std::string needle = "errorstat_" + prefix + ":count=";
  const auto at = info.find(needle);
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + needle.size()));
}

size_t Cluster::split_answered_by(size_t from, size_t to) {
  if (m_version == 0) {
    const std::string info = m_nodes.at(0)->cmd({"INFO", "server"}).str;
    const size_t at = info.find("redis_version:");
    if (at != std::string::npos) {
      const size_t dot = info.find('.', at);
      m_version = std::stoi(info.substr(at + 14, dot - at - 14)) * 100 + std::stoi(info.substr(dot + 1));
    }
  }
  return m_version >= 700 ? from : to;
}

void Cluster::begin_migration(int slot, size_t from, size_t to) {
  const std::string s = std::to_string(slot);
  ASSERT_EQ(m_nodes[to]->cmd({"CLUSTER", "SETSLOT", s, "IMPORTING", m_ids[from]}).str, "OK");
  ASSERT_EQ(m_nodes[from]->cmd({"CLUSTER", "SETSLOT", s, "MIGRATING", m_ids[to]}).str, "OK");
}

void Cluster::move_key(const std::string& key, size_t from, size_t to) {
  auto r =
      m_nodes[from]->cmd({"MIGRATE", "127.0.0.1", std::to_string(m_nodes[to]->port()), "", "0", "5000", "KEYS", key});
  ASSERT_FALSE(r.is_error()) << "MIGRATE " << key << ": " << r.str;
}

void Cluster::finish_migration(int slot, size_t from, size_t to) {
  const std::string s = std::to_string(slot);
  while (true) {
    auto left = m_nodes[from]->cmd({"CLUSTER", "GETKEYSINSLOT", s, "100"});
    if (left.elements.empty()) {
      break;
    }
    for (const auto& k : left.elements) {
      move_key(k.str, from, to);
    }
  }
  ASSERT_EQ(m_nodes[to]->cmd({"CLUSTER", "SETSLOT", s, "NODE", m_ids[to]}).str, "OK");
  ASSERT_EQ(m_nodes[from]->cmd({"CLUSTER", "SETSLOT", s, "NODE", m_ids[to]}).str, "OK");
  for (size_t i = 0; i < m_nodes.size(); ++i) {
    if (i != from && i != to) {
      ASSERT_EQ(m_nodes[i]->cmd({"CLUSTER", "SETSLOT", s, "NODE", m_ids[to]}).str, "OK");
    }
  }
}

void Cluster::migrate(int slot, size_t from, size_t to) {
  begin_migration(slot, from, to);
  finish_migration(slot, from, to);
}

std::string Cluster::name_on(const std::string& stem, size_t on) {
  for (int n = 0;; ++n) {
    const std::string name = stem + "-" + std::to_string(n);
    if (owner(slot_of(lock_key(name))) == on) {
      return name;
    }
  }
}

Cluster& cluster() {
  static Cluster the_cluster;
  return the_cluster;
}

}  // namespace redlock::test
