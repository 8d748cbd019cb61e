"""The deployments the campaign runs redlock against. Every server runs in
the campaign's server namespace on 10.77.0.1, ports below 32768; the
clients reach them over a veth pair from the client namespace."""
import os
import shutil
import signal
import subprocess
import time

import resp

HOST = "10.77.0.1"
# the replication links leave from these addresses, so that a rule can cut
# replication alone (failover before the lock replicated)
REPL_SOURCES = ["10.77.0.3", "10.77.0.4"]


class Server:
    def __init__(self, ns, port, workdir, extra=(), sentinel=False):
        self.ns, self.port, self.extra, self.sentinel = ns, port, list(extra), sentinel
        self.dir = os.path.join(workdir, f"srv{port}")
        os.makedirs(self.dir, exist_ok=True)
        self.proc = None
        self.stopped = False

    def start(self):
        if self.sentinel:
            args = ["redis-server", os.path.join(self.dir, "sentinel.conf"), "--sentinel"]
        else:
            args = ["redis-server", "--port", str(self.port), "--bind", HOST, "--protected-mode", "no",
                    "--save", "", "--dir", self.dir, "--daemonize", "no",
                    "--logfile", os.path.join(self.dir, "log"), *self.extra]
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.ns, *args],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.stopped = False
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                if resp.call(HOST, self.port, "PING", timeout=0.3) == "PONG":
                    return
            except Exception:
                time.sleep(0.05)
        raise RuntimeError(f"server {self.port} did not start")

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            os.kill(self.proc.pid, sig)
            if sig == signal.SIGSTOP:
                self.stopped = True
            elif sig == signal.SIGCONT:
                self.stopped = False

    def kill(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.stopped = False

    def stop(self):
        if self.alive():
            os.kill(self.proc.pid, signal.SIGCONT)
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()


class Deployment:
    """name, the data servers, how clients address them, how a restart
    treats data, and what redlock-safety(7) promises for it."""
    persistent = False
    sentinel = False
    cluster = False
    min_replicas = 0
    proxyable = True

    def __init__(self, ns, workdir, base):
        self.ns, self.workdir, self.base = ns, workdir, base
        self.servers, self.sentinels = [], []

    @property
    def quorum(self):
        return len(self.servers) // 2 + 1 if self.multi else 1

    multi = False

    def urls(self, proxy_ports=None):
        if proxy_ports:
            return [f"redis://127.0.0.1:{proxy_ports[s.port]}" for s in self.servers]
        return [f"redis://{HOST}:{s.port}" for s in self.servers]

    def start(self):
        for s in self.servers:
            s.start()

    def stop(self):
        for s in self.sentinels + self.servers:
            s.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def data_servers_for(self, key):
        """The servers that hold key's copies (where the lease is read)."""
        return self.servers

    def lock_server(self, key, rng):
        """The server a single-server fault hits: the one that holds the lock."""
        return rng.choice(self.servers)

    def heal(self):
        for s in self.servers + self.sentinels:
            if s.stopped:
                s.signal(signal.SIGCONT)
            if not s.alive():
                self.restart(s)
        self.wait_healthy()

    def wait_healthy(self):
        for s in self.servers:
            resp.call(HOST, s.port, "PING")

    def restart(self, s):
        s.start()


class Single(Deployment):
    name = "single"
    promise = "one holder at a time and growing fences while the server runs with its data"

    def __init__(self, ns, workdir, base):
        super().__init__(ns, workdir, base)
        self.servers = [Server(ns, base, workdir, self.extra())]

    def extra(self):
        return ["--appendonly", "no"]

    def lock_server(self, key, rng):
        return self.servers[0]


class SingleAof(Single):
    name = "single-aof"
    persistent = True
    promise = "one holder at a time and growing fences; appendfsync always keeps the locks across a restart"

    def extra(self):
        return ["--appendonly", "yes", "--appendfsync", "always"]


class Redlock(Deployment):
    multi = True
    promise = "one holder at a time while a majority keeps its data"

    def __init__(self, ns, workdir, base, n):
        super().__init__(ns, workdir, base)
        self.name = f"redlock{n}"
        self.servers = [Server(ns, base + i, workdir, ["--appendonly", "no"]) for i in range(n)]


class Sentinel(Deployment):
    sentinel = True
    proxyable = False  # clients take the master's address from the sentinels

    def __init__(self, ns, workdir, base, ttl, min_replicas=0):
        super().__init__(ns, workdir, base)
        self.min_replicas = min_replicas
        self.name = "sentinel-min1" if min_replicas else "sentinel"
        self.promise = ("one holder at a time, also across a failover: acquire and renew wait "
                        "until the replica has the lock (--min-replicas 1), fences" if min_replicas else
                        "one holder at a time while no failover happens; across one, two holders "
                        "may coexist for up to a renewal period (replication is asynchronous)")
        self.down_after = max(1000, int(ttl * 1000))
        a = Server(ns, base, workdir, ["--appendonly", "no", "--bind-source-addr", REPL_SOURCES[0],
                                      "--replica-announce-ip", HOST])
        b = Server(ns, base + 1, workdir, ["--appendonly", "no", "--bind-source-addr", REPL_SOURCES[1],
                                          "--replica-announce-ip", HOST, "--replicaof", HOST, str(base)])
        self.servers = [a, b]
        for i in range(3):
            s = Server(ns, base + 10 + i, workdir, sentinel=True)
            self.sentinels.append(s)

    def urls(self, proxy_ports=None):
        hosts = ",".join(f"{HOST}:{s.port}" for s in self.sentinels)
        return [f"redis+sentinel://{hosts}/mymaster"]

    def start(self):
        for s in self.servers:
            s.start()
        for s in self.sentinels:
            with open(os.path.join(s.dir, "sentinel.conf"), "w") as f:
                f.write(f"port {s.port}\nbind {HOST}\nprotected-mode no\ndir {s.dir}\n"
                        f"logfile {s.dir}/log\n"
                        f"sentinel monitor mymaster {HOST} {self.base} 2\n"
                        f"sentinel down-after-milliseconds mymaster {self.down_after}\n"
                        f"sentinel failover-timeout mymaster {self.down_after * 4}\n"
                        "sentinel parallel-syncs mymaster 1\n")
            s.start()
        self.wait_healthy()

    def master(self):
        answers = []
        for s in self.sentinels:
            try:
                h, p = resp.call(HOST, s.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")
                answers.append(int(p))
            except Exception:
                pass
        if not answers:
            return None
        port = max(set(answers), key=answers.count)
        return next((s for s in self.servers if s.port == port), None)

    def restart(self, s):
        """A server comes back as its configuration file would say after the
        sentinels rewrote it: a replica of the master they name, or a master
        (empty: nothing is persisted) when they still name it."""
        m = self.master()
        args = [a for a in s.extra]
        if "--replicaof" in args:
            i = args.index("--replicaof")
            del args[i:i + 3]
        if m is not None and m is not s:
            args += ["--replicaof", HOST, str(m.port)]
        s.extra = args
        s.start()

    def replica_of(self, master):
        return next(s for s in self.servers if s is not master)

    def lock_server(self, key, rng):
        return self.master() or self.servers[0]

    def data_servers_for(self, key):
        m = self.master()
        return [m] if m else self.servers[:1]

    def wait_healthy(self, timeout=30, sentinels_know_replica=False):
        """The sentinels agree on a master that has its replica in sync;
        with sentinels_know_replica, every sentinel also lists the replica
        (they learn it from INFO every 10 s: needed before a failover)."""
        deadline = time.monotonic() + timeout
        why = ""
        while time.monotonic() < deadline:
            try:
                m = self.master()
                answers = set()
                for s in self.sentinels:
                    answers.add(tuple(resp.call(HOST, s.port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", "mymaster")))
                info = resp.call(HOST, m.port, "INFO", "replication")
                r = self.replica_of(m)
                rinfo = resp.call(HOST, r.port, "INFO", "replication")
                if (len(answers) == 1 and "role:master" in info and "connected_slaves:1" in info
                        and "master_link_status:up" in rinfo and f"master_port:{m.port}" in rinfo):
                    # every sentinel must know the replica, or a failover cannot happen
                    known = not sentinels_know_replica or all(
                        any(f"{r.port}" in map(str, x) and "s_down" not in str(x)
                            for x in resp.call(HOST, s.port, "SENTINEL", "REPLICAS", "mymaster"))
                        for s in self.sentinels)
                    if known:
                        return
                why = f"sentinels say {answers}; master {m.port}: {info.split()[1:3]}; replica {r.port}: " \
                      f"{[x for x in rinfo.split() if x.startswith(('role', 'master_port', 'master_link_status'))]}"
            except Exception as e:
                why = repr(e)
            time.sleep(0.2)
        raise RuntimeError(f"sentinel deployment did not become healthy: {why}")


class Cluster(Deployment):
    name = "cluster3"
    cluster = True
    proxyable = False  # MOVED redirects go to the announced addresses
    promise = ("one holder at a time while the lock's master runs with its data "
               "(a lock lives on one master: a Cluster is one server to redlock)")

    def __init__(self, ns, workdir, base):
        super().__init__(ns, workdir, base)
        self.servers = [Server(ns, base + i, workdir,
                               ["--appendonly", "no", "--cluster-enabled", "yes",
                                "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
                                "--cluster-announce-ip", HOST]) for i in range(3)]

    def urls(self, proxy_ports=None):
        return [f"redis://{HOST}:{self.servers[0].port}"]

    def start(self):
        for s in self.servers:
            s.start()
        subprocess.run(["ip", "netns", "exec", self.ns, "redis-cli", "--cluster", "create",
                        *[f"{HOST}:{s.port}" for s in self.servers], "--cluster-replicas", "0",
                        "--cluster-yes"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        self.wait_healthy()

    def wait_healthy(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if all("cluster_state:ok" in resp.call(HOST, s.port, "CLUSTER", "INFO")
                       for s in self.servers):
                    return
            except Exception:
                pass
            time.sleep(0.2)
        raise RuntimeError("cluster did not become healthy")

    def owner(self, key):
        slot = resp.call(HOST, self.servers[0].port, "CLUSTER", "KEYSLOT", key)
        for lo, hi, master, *_ in resp.call(HOST, self.servers[0].port, "CLUSTER", "SLOTS"):
            if lo <= slot <= hi:
                return next(s for s in self.servers if s.port == int(master[1]))
        return self.servers[0]

    def lock_server(self, key, rng):
        return self.owner(key)

    def data_servers_for(self, key):
        return [self.owner(key)]


def make(name, ns, workdir, ttl):
    base = {"single": 21001, "single-aof": 21011, "sentinel": 21101, "sentinel-min1": 21201,
            "redlock3": 21301, "redlock5": 21311, "cluster3": 21401}[name]
    workdir = os.path.join(workdir, name)
    if name == "single":
        return Single(ns, workdir, base)
    if name == "single-aof":
        return SingleAof(ns, workdir, base)
    if name == "sentinel":
        return Sentinel(ns, workdir, base, ttl)
    if name == "sentinel-min1":
        return Sentinel(ns, workdir, base, ttl, min_replicas=1)
    if name == "redlock3":
        return Redlock(ns, workdir, base, 3)
    if name == "redlock5":
        return Redlock(ns, workdir, base, 5)
    if name == "cluster3":
        return Cluster(ns, workdir, base)
    raise KeyError(name)


NAMES = ["single", "single-aof", "sentinel", "sentinel-min1", "redlock3", "redlock5", "cluster3"]
