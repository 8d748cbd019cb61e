#!/usr/bin/env python3
"""The fault campaign: nemeses x deployments x parameters, each cell from a
seed. Run through scripts/campaign, which makes the network namespaces and
runs this inside the client namespace (--inner)."""
import argparse
import glob
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import checker
import deployments
import resp

HERE = os.path.dirname(os.path.abspath(__file__))
# each worker (a process running some of the deployments) has its own
# client users, ports and nftables chains
CLIENT_UIDS = [40001, 40002, 40003]
REGISTER_PORT = 19001
PROXY_CONTROL = 19002
PROXY_BASE = 19100


def for_worker(w):
    global CLIENT_UIDS, REGISTER_PORT, PROXY_CONTROL, PROXY_BASE
    CLIENT_UIDS = [40001 + 10 * w + i for i in range(3)]
    REGISTER_PORT, PROXY_CONTROL, PROXY_BASE = 19001 + 10 * w, 19002 + 10 * w, 19100 + 100 * w
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
LEASE_SCRIPT = ("local t = redis.call('hget', KEYS[1], 'token') "
                "return {t or '', redis.call('pttl', KEYS[1])}")
SKEW_SCRIPT = ("for _, k in ipairs(redis.call('keys', ARGV[1])) do "
               "local p = redis.call('pttl', k) "
               "if p > 0 then redis.call('pexpire', k, math.max(1, p - tonumber(ARGV[2]))) end end "
               "return 0")


def sh(*args, check=True, ns=None):
    cmd = (["ip", "netns", "exec", ns] if ns else []) + list(args)
    return subprocess.run(cmd, check=check, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# ------------------------------------------------------------------ cells

class Cell:
    def __init__(self, dep, nemesis, length=None, workload="excl", params=None):
        self.dep, self.nemesis, self.length, self.workload = dep, nemesis, length, workload
        self.params = params or {}

    @property
    def id(self):
        parts = [self.dep, self.nemesis]
        for k in ("target", "dir", "when"):
            if k in self.params:
                parts.append(self.params[k])
        if self.length is not None:
            parts.append(f"{self.length:g}ttl")
        if self.workload != "excl":
            parts.append(self.workload)
        return "/".join(parts)


LENGTHS = [0.5, 1, 3]


def plan():
    """Every cell of the campaign, in the order it runs."""
    cells = []
    for dep in deployments.NAMES:
        multi = dep.startswith("redlock")
        add = lambda *a, **k: cells.append(Cell(dep, *a, **k))  # noqa: E731
        add("none")
        for nem in ("pause-redlock", "pause-command", "pause-server", "kill-restart"):
            for length in LENGTHS:
                add(nem, length)
        targets = ["one"]
        if dep == "redlock5":
            targets.append("minority")
        if multi:
            targets.append("majority")
        for t in targets:
            for length in LENGTHS:
                add("partition", length, params={"target": t, "dir": "both"})
            for d in ("out", "in"):
                add("partition", 1, params={"target": t, "dir": d})
        if dep in ("single", "redlock3"):
            for length in LENGTHS:
                add("proxy-latency", length)
            for length in LENGTHS:
                add("proxy-timeout", length)
            add("proxy-slicer", 1)
            add("proxy-reset")
        if dep in ("single", "sentinel", "redlock3"):
            for length in LENGTHS:
                add("clock-jump", length)
        if multi:
            for length in LENGTHS:
                add("skew-minority", length)
        if dep.startswith("sentinel"):
            for how in ("hand", "auto"):
                for when in ("before", "after"):
                    add(f"failover-{how}", params={"when": when})
        add("script-flush")
        if dep in ("single", "redlock3"):
            for w in ("sem", "read"):
                add("none", workload=w)
                add("pause-redlock", 1, workload=w)
                add("partition", 1, workload=w, params={"target": "one", "dir": "both"})
    return cells


# A server whose clock jumps or runs fast expires a lock early
# (redlock-safety(7), "Clocks and failover"), without telling its holder:
# a hold granted by fewer than all servers can fall below a majority, and
# nobody can be signalled before a lease that ended unseen.
CLOCK_FAULT = "none: a minority's expiries jump and run fast (redlock-safety(7), Clocks and failover)"


def clock_fault(nemesis):
    return nemesis == "skew-minority"


def promise(cell, dep):
    """Whether redlock-safety(7) ("What each deployment promises") promises
    one holder at a time for this cell, and in which words."""
    n, L = cell.nemesis, cell.length or 0
    if clock_fault(n):
        return False, CLOCK_FAULT
    if n == "kill-restart" and not dep.persistent and not dep.multi and L <= 1:
        return False, "none: a restart without persistence held out for no longer than the TTL"
    if dep.sentinel and not dep.min_replicas:
        if n.startswith("failover"):
            return False, "none: a failover without --min-replicas (asynchronous replication)"
        if n == "kill-restart":
            return False, "none: the master restarted without its data, or a failover"
        if n == "pause-server" and L * cell.ttl * 1000 >= dep.down_after:
            return False, "none: a pause past down-after-milliseconds is a failover"
    if dep.sentinel and dep.min_replicas and n == "kill-restart" and L <= 1:
        return False, "none: the master restarted without its data held out for no longer than the TTL"
    return True, dep.promise


# ---------------------------------------------------------------- runner

class Runner:
    def __init__(self, args):
        self.args = args
        self.ns_srv = args.ns_srv
        self.out = os.path.abspath(args.out)
        self.work = os.path.join(self.out, "work")
        os.makedirs(self.work, exist_ok=True)
        os.makedirs(os.path.join(self.out, "cells"), exist_ok=True)
        self.redlock = os.path.abspath(args.redlock)
        self.ttl = args.ttl
        self.faketime_file = os.path.join(self.work, f"faketime{args.worker}")
        w = args.worker
        self.c_out, self.c_in = f"out{w}", f"in{w}"
        with open(self.faketime_file, "w") as f:
            f.write("+0\n")
        os.chmod(self.work, 0o755)
        os.chmod(self.faketime_file, 0o644)
        self.proxy = None
        self.proxy_ports = {}

    # nftables, in the client namespace (where this runs) and in the servers'
    def nft_base(self):
        out, in_ = self.c_out, self.c_in
        rules = ["add table inet rlcamp",
                 f"add chain inet rlcamp {out} {{ type filter hook output priority 0; }}",
                 f"add chain inet rlcamp {in_} {{ type filter hook input priority 0; }}"]
        for uid in CLIENT_UIDS:
            rules.append(f"add rule inet rlcamp {out} meta skuid {uid} ct mark set {uid}")
        self.nft(rules)
        self.nft(["add table inet rlcamp",
                  f"add chain inet rlcamp {out} {{ type filter hook output priority 0; }}"], ns=self.ns_srv)

    def nft(self, rules, ns=None):
        text = "\n".join(rules) + "\n"
        cmd = (["ip", "netns", "exec", ns] if ns else []) + ["nft", "-f", "-"]
        subprocess.run(cmd, input=text, text=True, check=True)

    def nft_heal(self):
        out, in_ = self.c_out, self.c_in
        self.nft([f"flush chain inet rlcamp {in_}"])
        self.nft([f"flush chain inet rlcamp {out}"] +
                 [f"add rule inet rlcamp {out} meta skuid {u} ct mark set {u}" for u in CLIENT_UIDS])
        self.nft([f"flush chain inet rlcamp {out}"], ns=self.ns_srv)

    def partition(self, uid, ports, direction):
        ports = "{ " + ", ".join(str(p) for p in ports) + " }"
        rules = []
        if direction in ("out", "both"):
            rules.append(f"add rule inet rlcamp {self.c_out} meta skuid {uid} ip daddr {deployments.HOST} "
                         f"tcp dport {ports} drop")
        if direction in ("in", "both"):
            rules.append(f"add rule inet rlcamp {self.c_in} ct mark {uid} ip saddr {deployments.HOST} "
                         f"tcp sport {ports} drop")
        self.nft(rules)

    def proxy_cmd(self, line):
        c = socket.create_connection(("127.0.0.1", PROXY_CONTROL), timeout=2)
        c.sendall((line + "\n").encode())
        c.recv(16)
        c.close()

    def start_proxy(self, dep):
        self.proxy_ports = {s.port: PROXY_BASE + i for i, s in enumerate(dep.servers)}
        specs = [f"{lp}:{deployments.HOST}:{sp}" for sp, lp in self.proxy_ports.items()]
        self.proxy = subprocess.Popen([sys.executable, os.path.join(HERE, "proxy.py"), str(PROXY_CONTROL),
                                       "127.0.0.1", *specs], stdout=subprocess.PIPE, text=True)
        self.proxy.stdout.readline()

    def stop_proxy(self):
        if self.proxy:
            self.proxy.kill()
            self.proxy.wait()
            self.proxy = None

    # --------------------------------------------------------- one cell
    def run_cell(self, index, cell, dep, seed):
        rng = random.Random(seed)
        ttl = self.ttl
        cell.ttl = ttl
        name = f"c{seed}"
        key = f"redlock:{{{name}}}"
        log_path = os.path.join(self.work, f"{index}.log")
        reg = subprocess.Popen([sys.executable, os.path.join(HERE, "register.py"), str(REGISTER_PORT), log_path],
                               stdout=subprocess.PIPE, text=True)
        reg.stdout.readline()
        proxied = cell.nemesis.startswith("proxy")
        urls = dep.urls(self.proxy_ports if proxied else None)
        globals_ = [self.redlock, "-q", "--connect-timeout", f"{int(ttl * 200)}ms",
                    "--timeout", f"{int(ttl * 200)}ms"]
        for u in urls:
            globals_ += ["-r", u]
        if dep.min_replicas:
            globals_ += ["--min-replicas", str(dep.min_replicas)]
        kill_after = f"{int(ttl * 300)}ms"
        env_base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
                    "CAMPAIGN_REGISTER": str(REGISTER_PORT), "CAMPAIGN_CELL": cell.id,
                    "CAMPAIGN_REDLOCK": " ".join(globals_)}
        preload = []
        if cell.nemesis == "clock-jump":
            # libfaketime is loaded after setpriv has changed the user: its
            # shared memory then belongs to the client's user (and is removed
            # with that user's files after the cell)
            env_base.update({"FAKETIME_TIMESTAMP_FILE": self.faketime_file,
                             "FAKETIME_NO_CACHE": "1", "DONT_FAKE_MONOTONIC": "1"})
            preload = ["env", f"LD_PRELOAD={FAKETIME_LIB}"]
        procs, procs_lock = [], threading.Lock()
        tokens = {}
        stop = threading.Event()

        def client(i):
            crng = random.Random(seed * 10 + i)
            uid = CLIENT_UIDS[i]
            n = 0
            while not stop.is_set():
                n += 1
                hold_id = f"k{i}.{n}"
                # most holds are short; one in four spans renewals
                long_hold = crng.random() < (0.5, 0.25, 0)[i]
                hold = round(crng.uniform(1, 2) * ttl if long_hold else crng.uniform(0.05, 0.5) * ttl, 3)
                env = dict(env_base, CAMPAIGN_CLIENT=hold_id)
                wl = cell.workload
                kind = "excl"
                if wl == "excl" and i == 2:
                    cmd = ["bash", os.path.join(HERE, "script_client.sh"), name, f"{ttl}s", f"{ttl}s",
                           str(hold)]
                    kind = "script"
                else:
                    opts = []
                    if wl == "sem":
                        opts, kind = ["--limit", "2"], "sem"
                    elif wl == "read" and i < 2:
                        opts, kind = ["--shared"], "read"
                    cmd = [*globals_, "exec", "--ttl", f"{ttl}s", "--kill-after", kill_after,
                           "--wait", f"{2 * ttl}s", *opts, *self.args.exec_option, name, "--",
                           "bash", os.path.join(HERE, "cs.sh"), kind, str(hold)]
                rec = {"hold": hold_id, "kind": kind, "name": name, "t0": time.monotonic(), "t1": None,
                       "rc": None}
                p = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
                                      *preload, *cmd], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=(kind == "script"))
                rec["pid"] = p.pid
                with procs_lock:
                    procs.append(rec)
                rc = p.wait()
                rec["t1"], rec["rc"] = time.monotonic(), rc
                time.sleep(crng.uniform(0, 0.1) * ttl)

        # the leases on the servers, read every few tens of milliseconds
        leases = []

        def poller():
            conns = {}
            down_until = {}
            servers = dep.data_servers_for(key)
            if cell.workload != "excl":
                return  # a semaphore's or readers' hash has no one holder's lease
            while not stop.is_set() or time.monotonic() < stop_time[0] + ttl:
                if dep.sentinel:
                    servers = dep.servers
                for s in servers:
                    if down_until.get(s.port, 0) > time.monotonic():
                        continue
                    try:
                        c = conns.get(s.port) or resp.Conn(deployments.HOST, s.port, timeout=0.1)
                        conns[s.port] = c
                        r = c.call("EVAL", LEASE_SCRIPT, 1, key)
                        if r[0]:
                            leases.append((time.monotonic(), s.port, r[0], r[1]))
                    except Exception:
                        if s.port in conns:
                            conns.pop(s.port).close()
                        down_until[s.port] = time.monotonic() + 0.2
                time.sleep(0.03)
            for c in conns.values():
                c.close()

        stop_time = [float("inf")]
        threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(3)]
        pt = threading.Thread(target=poller, daemon=True)
        for t in threads + [pt]:
            t.start()
        faults = []
        notes = []
        failure = None
        try:
            time.sleep(ttl * (0.6 if self.args.quick else 2.0))
            for _ in range(self.args.rounds):
                self.nemesis(cell, dep, rng, name, key, log_path, faults, notes)
                # until a grant after the fault's end, then a little more
                self.wait_grant(log_path, faults[-1]["end"] if faults else time.monotonic(), 3 * ttl)
                time.sleep(ttl * (0.2 if self.args.quick else 1.0))
        except Exception as e:
            failure = e
        finally:
            try:
                self.heal(dep, cell)
            except Exception as e:
                failure = failure or e
            stop.set()
            stop_time[0] = time.monotonic()
            # what still runs is asked to stop as an operator would: SIGTERM to
            # redlock exec, which forwards it and releases
            time.sleep(0.3 * ttl)
            with procs_lock:
                for r in procs:
                    if r["t1"] is None and r["kind"] != "script":
                        r["terminated"] = True
                        try:
                            os.kill(r["pid"], signal.SIGTERM)
                        except ProcessLookupError:
                            pass
            deadline = time.monotonic() + 2 * ttl + 1
            for t in threads:
                t.join(max(0, deadline - time.monotonic()))
            straggling = []
            with procs_lock:
                for r in procs:
                    if r["t1"] is None:
                        straggling.append(r["pid"])
                        try:
                            if r["kind"] == "script":
                                os.killpg(r["pid"], signal.SIGKILL)
                            else:
                                os.kill(r["pid"], signal.SIGKILL)
                        except ProcessLookupError:
                            pass
            for t in threads:
                t.join(2)
            pt.join(ttl + 1)
        time.sleep(0.3)
        leftovers = self.leftovers(cell.id)
        for f in os.listdir("/dev/shm"):
            path = os.path.join("/dev/shm", f)
            try:
                if "faketime" in f and os.stat(path).st_uid in CLIENT_UIDS:
                    os.unlink(path)
            except OSError:
                pass
        no_ttl = self.keys_without_ttl(dep, name)
        try:
            c = socket.create_connection(("127.0.0.1", REGISTER_PORT), timeout=2)
            c.sendall(b"QUIT\n")
            c.recv(8)
            c.close()
        except OSError:
            pass
        try:
            reg.wait(5)
        except subprocess.TimeoutExpired:
            reg.kill()
            reg.wait()
        if failure is not None:
            raise failure
        events = [json.loads(line) for line in open(log_path)]
        data = {"events": events, "procs": procs, "faults": faults, "leases": leases, "ttl": ttl,
                "quorum": dep.quorum, "name": name, "limit": 2 if cell.workload == "sem" else 1,
                "tokens": self.tokens_of(events, leases)}
        result = checker.analyse(data)
        promised, words = promise(cell, dep)
        res = {k: v for k, v in result.items() if not k.startswith("_")}
        res.update({"cell": cell.id, "deployment": cell.dep, "nemesis": cell.nemesis, "length_ttl": cell.length,
                    "workload": cell.workload, "params": cell.params, "seed": seed, "ttl_s": ttl,
                    "promise": words, "exclusion_promised": promised, "keys_without_ttl": no_ttl,
                    "processes_left": leftovers, "straggling": len(straggling), "notes": notes,
                    "faults": [{k: (round(v - data["faults"][0]["start"], 3) if k in ("start", "end") else v)
                                for k, v in f.items()} for f in faults]})
        res["violations"] = violations(res)
        if res["violations"]:
            svg = checker.timeline_svg(data, result, f"{cell.id} seed {seed}: {', '.join(res['violations'])}")
            if svg:
                path = os.path.join(self.out, "cells", re.sub(r"[^A-Za-z0-9.-]+", "_", cell.id) + ".svg")
                with open(path, "w") as f:
                    f.write(svg)
                res["timeline"] = os.path.relpath(path, self.out)
        with open(os.path.join(self.out, "cells", f"{index}.json"), "w") as f:
            json.dump({"result": res, "history": data}, f)
        return res

    def tokens_of(self, events, leases):
        """Each section's token, as REDLOCK_TOKEN told it."""
        return {e["client"]: e["token"] for e in events
                if e["ev"] == "start" and e.get("token", "-") != "-"}

    def wait_grant(self, log_path, after, limit):
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            with open(log_path) as f:
                for line in f:
                    e = json.loads(line)
                    if e["ev"] == "start" and e["t"] >= after:
                        return
            time.sleep(0.05)

    def holder(self, name, log_path, want_redlock=True, limit=None, least=None):
        """The pid of the section that holds name now and will for `least`
        seconds more (the length of the fault, to hit a section that spans
        it), its parent's and its user's; waits for one."""
        deadline = time.monotonic() + (limit or 4 * self.ttl)
        least = self.ttl * 0.5 if least is None else least
        while time.monotonic() < deadline:
            c = socket.create_connection(("127.0.0.1", REGISTER_PORT), timeout=2)
            c.sendall(f"WHO {name} {least}\n".encode())
            pids = c.recv(256).decode().split()
            c.close()
            for p in pids:
                if p == "-":
                    continue
                pid = int(p)
                try:
                    ppid = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
                    parent = open(f"/proc/{ppid}/comm").read().strip()
                    uid = int(re.search(r"Uid:\s+(\d+)", open(f"/proc/{pid}/status").read()).group(1))
                except (OSError, ValueError, AttributeError):
                    continue
                if parent == "redlock" or not want_redlock:
                    return pid, ppid, uid
            time.sleep(0.02)
        return None

    def nemesis(self, cell, dep, rng, name, key, log_path, faults, notes):
        ttl, n = self.ttl, cell.nemesis
        L = (cell.length or 0) * ttl

        def window(what, fn_start, fn_end, length=L):
            t0 = time.monotonic()
            fn_start()
            time.sleep(length)
            fn_end()
            faults.append({"what": what, "start": t0, "end": time.monotonic()})

        if n == "none":
            time.sleep(ttl)
            return
        if n in ("pause-redlock", "pause-command"):
            h = self.holder(name, log_path, least=min(L, self.ttl))
            if h is None:
                notes.append("no holder found to pause")
                return
            pid, ppid, _ = h
            if n == "pause-redlock":
                window(f"SIGSTOP redlock {L:g}s", lambda: os.kill(ppid, signal.SIGSTOP),
                       lambda: os.kill(ppid, signal.SIGCONT))
            else:
                pg = os.getpgid(pid)
                window(f"SIGSTOP command {L:g}s", lambda: os.killpg(pg, signal.SIGSTOP),
                       lambda: os.killpg(pg, signal.SIGCONT))
            return
        if n == "pause-server":
            self.holder(name, log_path, want_redlock=False)
            s = dep.lock_server(key, rng)
            window(f"SIGSTOP server {s.port} {L:g}s", lambda: s.signal(signal.SIGSTOP),
                   lambda: s.signal(signal.SIGCONT))
            return
        if n == "kill-restart":
            self.holder(name, log_path, want_redlock=False)
            s = dep.lock_server(key, rng)
            window(f"kill server {s.port}, restart after {L:g}s{' (AOF)' if dep.persistent else ' (empty)'}",
                   s.kill, lambda: dep.restart(s))
            return
        if n == "partition":
            h = self.holder(name, log_path, want_redlock=False)
            uid = h[2] if h else CLIENT_UIDS[0]
            servers = list(dep.servers)
            if dep.sentinel or dep.cluster:
                servers = [dep.lock_server(key, rng)]
            count = {"one": 1, "minority": (len(servers) - 1) // 2,
                     "majority": len(servers) // 2 + 1}[cell.params["target"]]
            count = max(1, min(count, len(servers)))
            cut = rng.sample(servers, count)
            d = cell.params["dir"]
            window(f"partition client {uid} from {[s.port for s in cut]} ({d}) {L:g}s",
                   lambda: self.partition(uid, [s.port for s in cut], d), self.nft_heal)
            return
        if n.startswith("proxy"):
            self.holder(name, log_path, want_redlock=False)
            target = "*" if not dep.multi else str(self.proxy_ports[rng.choice(dep.servers).port])
            if n == "proxy-latency":
                ms, jit = int(ttl * 300), int(ttl * 200)
                window(f"latency {ms}+-{jit}ms on {target} {L:g}s",
                       lambda: self.proxy_cmd(f"latency {target} {ms} {jit}"),
                       lambda: self.proxy_cmd(f"clear {target}"))
            elif n == "proxy-timeout":
                window(f"black hole on {target} {L:g}s", lambda: self.proxy_cmd(f"timeout {target}"),
                       lambda: self.proxy_cmd(f"clear {target}"))
            elif n == "proxy-slicer":
                window(f"drip 3 bytes/2ms on {target} {L:g}s",
                       lambda: self.proxy_cmd(f"slicer {target} 3 2"),
                       lambda: self.proxy_cmd(f"clear {target}"))
            elif n == "proxy-reset":
                window(f"reset_peer on {target}", lambda: self.proxy_cmd(f"reset_peer {target}"),
                       lambda: self.proxy_cmd(f"clear {target}"), length=0.05)
            return
        if n == "clock-jump":
            self.holder(name, log_path, want_redlock=False)
            jump = max(1, int(10 * L))

            def set_clock(spec):
                with open(self.faketime_file, "w") as f:
                    f.write(spec + "\n")

            def forward_then_back():
                set_clock(f"+{jump}s")
                time.sleep(L / 2)
                set_clock(f"-{jump}s")

            window(f"client clocks +{jump}s then -{jump}s over {L:g}s", forward_then_back,
                   lambda: set_clock("+0"), length=L / 2)
            return
        if n == "skew-minority":
            self.holder(name, log_path, want_redlock=False)
            minority = rng.sample(dep.servers, (len(dep.servers) - 1) // 2)
            t0 = time.monotonic()
            pattern = f"redlock:{{{name}}}*"
            # a clock that jumps forward by L and then runs three times fast
            for s in minority:
                try:
                    resp.call(deployments.HOST, s.port, "EVAL", SKEW_SCRIPT, 0, pattern, int(L * 1000))
                except Exception:
                    pass
            while time.monotonic() < t0 + L:
                for s in minority:
                    try:
                        resp.call(deployments.HOST, s.port, "EVAL", SKEW_SCRIPT, 0, pattern, 100)
                    except Exception:
                        pass
                time.sleep(0.05)
            faults.append({"what": f"expiries of {[s.port for s in minority]} run fast (+{L:g}s, 3x)",
                           "start": t0, "end": time.monotonic()})
            return
        if n.startswith("failover"):
            self.failover(cell, dep, name, log_path, faults, notes)
            return
        if n == "script-flush":
            self.holder(name, log_path, want_redlock=False)
            t0 = time.monotonic()
            for s in dep.servers:
                try:
                    resp.call(deployments.HOST, s.port, "SCRIPT", "FLUSH")
                except Exception:
                    pass
            faults.append({"what": "SCRIPT FLUSH", "start": t0, "end": time.monotonic()})
            return
        raise KeyError(n)

    def failover(self, cell, dep, name, log_path, faults, notes):
        ttl = self.ttl
        when = cell.params["when"]
        dep.wait_healthy(sentinels_know_replica=True)
        master = dep.master()
        t0 = time.monotonic()
        ports = "{ " + ", ".join(str(s.port) for s in dep.servers) + " }"
        srcs = "{ " + ", ".join(deployments.REPL_SOURCES) + " }"
        if when == "before":
            # replication cut: the next grant reaches the master only
            self.nft([f"add rule inet rlcamp {self.c_out} ip saddr {srcs} tcp dport {ports} drop"],
                     ns=self.ns_srv)
        self.wait_grant(log_path, time.monotonic(), 2 * ttl)
        time.sleep(0.1 if when == "before" else 0.3)
        if cell.nemesis == "failover-hand":
            try:
                resp.call(deployments.HOST, dep.sentinels[0].port, "SENTINEL", "FAILOVER", "mymaster")
            except Exception as e:
                notes.append(f"SENTINEL FAILOVER: {e}")
        else:
            master.signal(signal.SIGSTOP)
        deadline = time.monotonic() + dep.down_after / 1000 * 3 + 10
        while time.monotonic() < deadline:
            m = dep.master()
            if m is not None and m is not master:
                break
            time.sleep(0.05)
        else:
            notes.append("no failover happened")
        master.signal(signal.SIGCONT)
        self.nft([f"flush chain inet rlcamp {self.c_out}"], ns=self.ns_srv)
        faults.append({"what": f"failover ({cell.nemesis[9:]}, {when} replication)", "start": t0,
                       "end": time.monotonic()})

    def heal(self, dep, cell):
        self.nft_heal()
        if self.proxy:
            self.proxy_cmd("clear *")
        with open(self.faketime_file, "w") as f:
            f.write("+0\n")
        dep.heal()

    def leftovers(self, cell_id):
        """Processes of the clients' users still alive after every client
        ended: each is named, then killed by its pid."""
        left = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                status = open(f"/proc/{pid}/status").read()
                uid = int(re.search(r"Uid:\s+(\d+)", status).group(1))
                state = re.search(r"State:\s+(\S)", status).group(1)
            except (OSError, AttributeError):
                continue
            if uid in CLIENT_UIDS and state != "Z":
                comm = open(f"/proc/{pid}/comm").read().strip()
                left.append(f"{pid} {comm}")
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except ProcessLookupError:
                    pass
        return left

    def keys_without_ttl(self, dep, name):
        """The cell's keys without a TTL, but for those that never expire by
        design (the fence counter, the index of held locks, the ledgers')."""
        found = []
        for s in dep.servers:
            try:
                c = resp.Conn(deployments.HOST, s.port, timeout=1)
                cursor = "0"
                while True:
                    cursor, keys = c.call("SCAN", cursor, "MATCH", f"*{name}*", "COUNT", 1000)
                    for k in keys:
                        if isinstance(k, bytes):
                            k = k.decode(errors="replace")
                        if k.endswith(":fence"):
                            continue
                        if c.call("PTTL", k) == -1:
                            found.append(f"{s.port} {k}")
                    if cursor == "0":
                        break
                c.close()
            except Exception:
                pass
        return sorted(set(found))


def error_result(cell, seed, why):
    return {"cell": cell.id, "deployment": cell.dep, "nemesis": cell.nemesis, "length_ttl": cell.length,
            "workload": cell.workload, "params": cell.params, "seed": seed, "operations": 0, "sections": 0,
            "handoffs": 0, "overlaps": 0, "longest_overlap_ms": 0, "out_of_order": 0, "lost_updates": 0,
            "linearizable": {}, "signal_delay_ms": [], "signal_delay_p99_ms": None, "recovery_ms": [],
            "lost_exits": 0, "busy_exits": 0, "unavailable_exits": 0, "exclusion_promised": False,
            "promise": "", "keys_without_ttl": [], "processes_left": [], "violations": [f"campaign error: {why}"]}


def violations(r):
    v = []
    if not r["sections"]:
        v.append("no critical section ran")
    if r["out_of_order"]:
        v.append(f"{r['out_of_order']} fenced writes out of order")
    if r["exclusion_promised"]:
        if r["overlaps"]:
            v.append(f"{r['overlaps']} overlaps")
        if r["lost_updates"]:
            v.append(f"{r['lost_updates']} lost updates")
        if "violation" in r["linearizable"].values():
            v.append("not linearizable")
    if r.get("acquire_without_answer"):
        v.append(f"{r['acquire_without_answer']} acquires exited 0 without a token")
    if r.get("bad_register_lines"):
        v.append(f"{r['bad_register_lines']} sections started without a fence")
    if r["keys_without_ttl"]:
        v.append(f"{len(r['keys_without_ttl'])} keys without TTL")
    if r["processes_left"]:
        v.append(f"{len(r['processes_left'])} processes left")
    if r["exclusion_promised"] and r["signal_delay_p99_ms"] is not None and r["signal_delay_p99_ms"] > 0:
        v.append(f"signalled {r['signal_delay_p99_ms']}ms after the lease ended (p99)")
    return v


# ---------------------------------------------------------------- report

def write_report(out, results, meta):
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump({"meta": meta, "cells": results}, f, indent=1)
    lines = [f"# Campaign report ({meta['mode']})", "",
             f"commit {meta['commit']}, seed {meta['seed']}, TTL {meta['ttl_s']} s, "
             f"{meta['cells']} cells, {meta['duration_s']} s, {meta['machine']}", "",
             "| cell | seed | promise | ops | handoffs | overlaps (longest ms) | out of order | lost updates "
             "| lin | signal p99 ms | recovery ms | lost / busy / unavail | verdict |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|"]
    for r in results:
        lin = ",".join(sorted(set(r["linearizable"].values()))) or "-"
        rec = ",".join("-" if x is None else f"{x:.0f}" for x in r["recovery_ms"]) or "-"
        prom = "exclusion" if r["exclusion_promised"] else "none"
        verdict = "FAIL: " + "; ".join(r["violations"]) if r["violations"] else "pass"
        if r.get("timeline"):
            verdict += f" ([timeline]({r['timeline']}))"
        lines.append(f"| {r['cell']} | {r['seed']} | {prom} | {r['operations']} | {r['handoffs']} | "
                     f"{r['overlaps']} ({r['longest_overlap_ms']:g}) | {r['out_of_order']} | {r['lost_updates']} | "
                     f"{lin} | {'-' if r['signal_delay_p99_ms'] is None else r['signal_delay_p99_ms']} | {rec} | "
                     f"{r['lost_exits']} / {r['busy_exits']} / {r['unavailable_exits']} | {verdict} |")
    lines += ["", "## By deployment", "",
              "| deployment | cells | operations | handoffs | overlaps (promised / not) | out of order "
              "| lost updates (promised) | signal delay p99 ms | next grant after a fault p50 / max ms "
              "| keys without TTL | processes left | failing cells |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    deps = []
    for r in results:
        if r["deployment"] not in deps:
            deps.append(r["deployment"])
    for d in deps:
        rs = [r for r in results if r["deployment"] == d]
        delays = [x for r in rs for x in r["signal_delay_ms"]]
        rec = sorted(x for r in rs for x in r["recovery_ms"] if x is not None)
        p99 = checker.percentile(delays, 99)
        lines.append(
            f"| {d} | {len(rs)} | {sum(r['operations'] for r in rs)} | {sum(r['handoffs'] for r in rs)} | "
            f"{sum(r['overlaps'] for r in rs if r['exclusion_promised'])} / "
            f"{sum(r['overlaps'] for r in rs if not r['exclusion_promised'])} | "
            f"{sum(r['out_of_order'] for r in rs)} | "
            f"{sum(r['lost_updates'] for r in rs if r['exclusion_promised'])} | "
            f"{'-' if p99 is None else f'{p99:.0f} (n={len(delays)})'} | "
            f"{'-' if not rec else f'{checker.percentile(rec, 50):.0f} / {rec[-1]:.0f}'} | "
            f"{sum(len(r['keys_without_ttl']) for r in rs)} | {sum(len(r['processes_left']) for r in rs)} | "
            f"{sum(1 for r in rs if r['violations'])} |")
    lines += ["", "## By nemesis", "",
              "| nemesis | cells | operations | handoffs | overlaps (promised / not) | out of order | exits 74 "
              "| signal delay p99 ms | next grant after the fault p50 / max ms | failing cells |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    nems = []
    for r in results:
        if r["nemesis"] not in nems:
            nems.append(r["nemesis"])
    for n in nems:
        rs = [r for r in results if r["nemesis"] == n]
        delays = [x for r in rs for x in r["signal_delay_ms"]]
        rec = sorted(x for r in rs for x in r["recovery_ms"] if x is not None)
        p99 = checker.percentile(delays, 99)
        lines.append(
            f"| {n} | {len(rs)} | {sum(r['operations'] for r in rs)} | {sum(r['handoffs'] for r in rs)} | "
            f"{sum(r['overlaps'] for r in rs if r['exclusion_promised'])} / "
            f"{sum(r['overlaps'] for r in rs if not r['exclusion_promised'])} | "
            f"{sum(r['out_of_order'] for r in rs)} | {sum(r['lost_exits'] for r in rs)} | "
            f"{'-' if p99 is None else f'{p99:.0f} (n={len(delays)})'} | "
            f"{'-' if not rec else f'{checker.percentile(rec, 50):.0f} / {rec[-1]:.0f}'} | "
            f"{sum(1 for r in rs if r['violations'])} |")
    lines += ["", "## Where no mutual exclusion is promised", "",
              "| deployment | why | cells | handoffs | overlaps | per 1,000 handoffs |", "|---|---|---:|---:|---:|---:|"]
    groups = {}
    for r in results:
        if not r["exclusion_promised"]:
            g = groups.setdefault((r["deployment"], r["promise"]), [0, 0, 0])
            g[0] += 1
            g[1] += r["handoffs"]
            g[2] += r["overlaps"]
    for (d, why), (c, h, o) in sorted(groups.items()):
        lines.append(f"| {d} | {why} | {c} | {h} | {o} | {1000 * o / h if h else 0:.1f} |")
    lines += ["", "## Promises", ""]
    for d, p in sorted({(r["deployment"], r["promise"]) for r in results if r["exclusion_promised"]}):
        lines.append(f"- **{d}**: {p}")
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def assign(cells, workers):
    """Deployments to workers, the largest first to the least loaded."""
    counts = {}
    for c in cells:
        counts[c.dep] = counts.get(c.dep, 0) + 1
    load, out = [0] * workers, [[] for _ in range(workers)]
    for dep, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        w = load.index(min(load))
        load[w] += n
        out[w].append(dep)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ttl", type=float)
    ap.add_argument("--rounds", type=int)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--redlock", default="")
    ap.add_argument("--ns-srv", default="")
    ap.add_argument("--commit", default="")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--worker", type=int, default=-1)
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--reanalyse", action="store_true", help="check the recorded histories in --out again")
    ap.add_argument("--exec-option", action="append", default=[],
                    help="add an option to every exec (the negative control: --exec-option=--on-lost=ignore)")
    ap.add_argument("--cell-seed", type=int, help="run the cells with this seed (a regression's)")
    args = ap.parse_args()
    args.ttl = args.ttl or (1.0 if args.quick else 2.0)
    args.rounds = args.rounds or (1 if args.quick else 5)
    args.out = os.path.abspath(args.out)
    cells = [c for c in plan() if re.search(args.only, c.id)]
    if args.list:
        for c in cells:
            print(c.id)
        return 0
    if args.reanalyse:
        # the checker run again over the histories a run recorded
        for path in sorted(glob.glob(os.path.join(args.out, "cells", "*.json"))):
            rec = json.load(open(path))
            res, data = rec["result"], rec["history"]
            data.setdefault("ttl", res["ttl_s"])
            res.update({k: v for k, v in checker.analyse(data).items() if not k.startswith("_")})
            if clock_fault(res.get("nemesis")):
                res["exclusion_promised"], res["promise"] = False, CLOCK_FAULT
            res["violations"] = violations(res)
            with open(path, "w") as f:
                json.dump(rec, f)
        for w in range(args.workers):
            wpath = os.path.join(args.out, f"worker-{w}.json")
            if os.path.exists(wpath):
                part = json.load(open(wpath))
                fresh = {}
                for path in glob.glob(os.path.join(args.out, "cells", "*.json")):
                    r = json.load(open(path))["result"]
                    fresh[(r["cell"], r["seed"])] = r
                part["cells"] = [fresh.get((r["cell"], r["seed"]), r) for r in part["cells"]]
                with open(wpath, "w") as f:
                    json.dump(part, f)
        args.merge = True
    if args.merge:
        results, meta = [], None
        order = {c.id: i for i, c in enumerate(cells)}
        for w in range(args.workers):
            path = os.path.join(args.out, f"worker-{w}.json")
            if os.path.exists(path):
                part = json.load(open(path))
                results += part["cells"]
                meta = meta or part["meta"]
                meta["duration_s"] = max(meta["duration_s"], part["meta"]["duration_s"])
        if meta is None:
            print(f"campaign: no worker's results in {args.out}", file=sys.stderr)
            return 1
        results.sort(key=lambda r: order.get(r["cell"], 1 << 30))
        meta.update({"cells": len(results), "workers": args.workers,
                     "machine": f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f} at the end"})
        write_report(args.out, results, meta)
        failing = [r for r in results if r["violations"]]
        print(f"{len(results)} cells, {len(failing)} failing, {meta['duration_s']} s; "
              f"report in {args.out}/report.md")
        return 1 if failing else 0
    for_worker(args.worker)
    mine = assign(cells, args.workers)[args.worker]
    runner = Runner(args)
    runner.nft_base()
    results, start = [], time.monotonic()
    by_dep = {}
    for i, c in enumerate(cells):
        c.index = i + 1
        if c.dep in mine:
            by_dep.setdefault(c.dep, []).append(c)
    for dname, dcells in by_dep.items():
        dep = deployments.make(dname, args.ns_srv, runner.work, args.ttl)
        print(f"== {dname}: starting", flush=True)
        dep.start()
        if dep.proxyable:
            runner.start_proxy(dep)
        try:
            for c in dcells:
                seed = args.cell_seed or args.seed * 1000 + c.index
                t = time.monotonic()
                try:
                    r = runner.run_cell(c.index, c, dep, seed)
                except Exception as e:  # the deployment would not heal: start it anew
                    r = error_result(c, seed, f"{type(e).__name__}: {e}")
                    runner.stop_proxy()
                    dep.stop()
                    dep = deployments.make(dname, args.ns_srv, runner.work, args.ttl)
                    dep.start()
                    if dep.proxyable:
                        runner.start_proxy(dep)
                results.append(r)
                print(f"{c.id:45s} seed {seed} ops {r['operations']:3d} overlaps {r['overlaps']} "
                      f"ooo {r['out_of_order']} {'FAIL ' + '; '.join(r['violations']) if r['violations'] else 'pass'}"
                      f" ({time.monotonic() - t:.1f}s)", flush=True)
        finally:
            runner.stop_proxy()
            dep.stop()
    meta = {"mode": "quick" if args.quick else "full", "seed": args.seed, "ttl_s": args.ttl,
            "duration_s": round(time.monotonic() - start), "commit": args.commit, "rounds": args.rounds}
    with open(os.path.join(args.out, f"worker-{args.worker}.json"), "w") as f:
        json.dump({"meta": meta, "cells": results}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
