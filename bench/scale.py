"""The scale section of redlock's benchmark: what a fleet costs the Redis it shares.

Called by bench.py (./scripts/bench --scale), or alone:
    python3 bench/scale.py --redlock BINARY --load bench/redlock_load [--quick]

1. Waiters on one lock held by someone else: N real `redlock acquire --wait`
   processes, or one real process at the head of the line and N-1 waiters
   simulated by bench/redlock_load (the lock core, a few connections, each
   waiter beating at the cadence of its place). Over a window: Redis CPU
   (INFO cpu, cores), the slowest command (SLOWLOG, µs), PING p50/p99 from
   another client; then the handoff gap, HANDOFFS times over: the holder
   releases and the gap is the time until the head of the line (a real
   process, one of the first HANDOFFS in line) prints its token; that head
   then releases in turn. The median gap is the case's figure, so one
   descheduled process does not decide it; the slowest is kept too.
2. The same on 3 servers (Redlock), simulated.
3. status of 100, 1,000 and 10,000 held locks: wall time and commands per
   server; and 20 locks beside 1,000,000 keys of a cache sharing the server.

Every redis-server listens on a Unix socket in a temporary directory (and on
no TCP port) and is stopped by PID.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

DEVNULL = subprocess.DEVNULL


def resp(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out


class Client:
    """A minimal RESP client over a Unix socket."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        self.s.sendall(resp(*args))
        return self.read()

    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            raise RuntimeError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2].decode(errors="replace")
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise RuntimeError(f"unexpected reply {line!r}")

    def close(self):
        self.s.close()


def realtime():
    """Runs redis-server under SCHED_FIFO where allowed (root): SLOWLOG times a command by the wall clock, and
    on a 2-core machine the 600 processes of a fleet would otherwise deschedule Redis in the middle of one,
    which a Redis on its own host never sees."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        pass


class Server:
    def __init__(self, extra=()):
        self.dir = tempfile.mkdtemp(prefix="redlock-scale-")
        self.sock = os.path.join(self.dir, "redis.sock")
        self.proc = subprocess.Popen(
            ["redis-server", "--port", "0", "--unixsocket", self.sock, "--save", "", "--appendonly", "no",
             "--maxclients", "12000", "--dir", self.dir, "--logfile", os.path.join(self.dir, "log"), *extra],
            stdout=DEVNULL, stderr=DEVNULL, preexec_fn=realtime)
        self.realtime = os.sched_getscheduler(self.proc.pid) == os.SCHED_FIFO
        deadline = time.monotonic() + 10
        while not os.path.exists(self.sock):
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("redis-server did not start")
            time.sleep(0.02)
        self.c = Client(self.sock)
        self.c.cmd("CONFIG", "SET", "slowlog-log-slower-than", "1000")

    def url(self):
        return "unix://" + self.sock

    def cpu(self):
        info = self.c.cmd("INFO", "cpu")
        v = dict(line.split(":", 1) for line in info.split("\r\n") if ":" in line)
        return float(v["used_cpu_user"]) + float(v["used_cpu_sys"])

    # What redlock itself sends; INFO commandstats also counts every call
    # the scripts make, which are part of the one EVALSHA that ran them.
    CLIENT_COMMANDS = ("evalsha", "eval", "evalsha_ro", "eval_ro", "scan", "zscan", "ping", "select", "auth", "hello",
                       "wait", "role", "subscribe", "unsubscribe", "config|get", "cluster|nodes", "cluster|slots",
                       "cluster|shards", "client|setname", "client|setinfo")

    def commands(self):
        """Commands clients sent (not the calls scripts made, nor INFO)."""
        total = 0
        for line in self.c.cmd("INFO", "commandstats").split("\r\n"):
            if line.startswith("cmdstat_"):
                name = line[len("cmdstat_"):].split(":")[0]
                if name in self.CLIENT_COMMANDS:
                    total += int(line.split("calls=")[1].split(",")[0])
        return total

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def start_waiter(redlock, env, out_path):
    out = open(out_path, "w+")
    return subprocess.Popen([redlock, "acquire", "--ttl", "1m", "--wait", "10m", "L"], env=env, stdout=out,
                            stderr=DEVNULL), out


def line_length(server):
    return server.c.cmd("ZCARD", "redlock:{L}:line")


def wait_for(pred, seconds, what):
    deadline = time.monotonic() + seconds
    while not pred():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


HANDOFFS = 5


def handoffs(redlock, env, token, heads):
    """Releases `token`, then each head's in turn; the gaps until each head held the lock (s, None if never)."""
    gaps = []
    for _, out in heads:
        released = time.monotonic()
        subprocess.run([redlock, "release", "--token", token, "L"], env=env, stdout=DEVNULL, stderr=DEVNULL)
        gap = None
        while time.monotonic() - released < 10:
            out.seek(0)
            line = out.read()
            if line.endswith("\n"):
                gap = time.monotonic() - released
                token = line.strip()
                break
            time.sleep(0.002)
        gaps.append(gap)
        if gap is None:
            break
    return gaps


def waiters_case(redlock, load, n, real, servers_n=1, window=20.0, settle=3.0):
    """One measure of N waiters on one lock; returns its figures."""
    servers = [Server() for _ in range(servers_n)]
    tmp = tempfile.mkdtemp(prefix="redlock-scale-out-")
    procs, outs, gen = [], [], None
    try:
        env = dict(os.environ, REDLOCK_URL=",".join(s.url() for s in servers))
        env.pop("REDLOCK_PASSWORD", None)
        token = subprocess.run([redlock, "acquire", "--ttl", "10m", "L"], env=env, capture_output=True, text=True,
                               check=True).stdout.strip()
        heads = []
        for i in range(min(HANDOFFS, n)):
            heads.append(start_waiter(redlock, env, os.path.join(tmp, f"head{i}")))
            procs.append(heads[-1][0])
            outs.append(heads[-1][1])
            wait_for(lambda: line_length(servers[0]) >= i + 1, 20, f"head {i + 1} of the line")
        t0 = time.monotonic()
        rest = n - len(heads)
        if real:
            for i in range(rest):
                p, o = start_waiter(redlock, env, os.path.join(tmp, f"w{i}"))
                procs.append(p)
                outs.append(o)
        elif rest > 0:
            gen = subprocess.Popen([load, "--url", env["REDLOCK_URL"], "--waiters", str(rest), "--threads", "4",
                                    "--seconds", str(window + settle + 120)], stdout=subprocess.PIPE,
                                   stderr=DEVNULL, text=True)
        wait_for(lambda: line_length(servers[0]) >= n, 180, f"{n} waiters in line")
        joined_s = time.monotonic() - t0
        time.sleep(settle)
        for s in servers:
            s.c.cmd("SLOWLOG", "RESET")
        ping = Client(servers[0].sock)
        lat = []
        cpu0 = [s.cpu() for s in servers]
        w0 = time.monotonic()
        while time.monotonic() - w0 < window:
            t = time.perf_counter()
            ping.cmd("PING")
            lat.append(time.perf_counter() - t)
            time.sleep(0.01)
        elapsed = time.monotonic() - w0
        cpu = max((s.cpu() - c0) / elapsed for s, c0 in zip(servers, cpu0))
        slow = [e for s in servers for e in s.c.cmd("SLOWLOG", "GET", "100")]
        slowest = max(slow, key=lambda e: e[2], default=None)
        slowest_us = slowest[2] if slowest else 0
        slowest_cmd = " ".join(str(x) for x in slowest[3][:2])[:60] if slowest else ""
        lat.sort()
        gaps = handoffs(redlock, env, token, heads)
        done = sorted(g for g in gaps if g is not None)
        ping.close()
        return {"waiters": n, "real": real, "servers": servers_n, "joined_s": round(joined_s, 2),
                "redis_realtime": all(s.realtime for s in servers),
                "redis_cpu_cores": round(cpu, 4), "slowest_us": slowest_us, "slowest_command": slowest_cmd,
                "slow_over_2ms": sum(1 for e in slow if e[2] > 2000),
                "ping_p50_ms": round(lat[len(lat) // 2] * 1000, 3),
                "ping_p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000, 3),
                "handoff_ms": round(done[len(done) // 2] * 1000, 1) if len(done) == len(gaps) else None,
                "handoff_max_ms": round(done[-1] * 1000, 1) if len(done) == len(gaps) else None,
                "handoffs": len(gaps)}
    finally:
        for p in procs:
            p.kill()
        if gen:
            gen.kill()
        for p in procs + ([gen] if gen else []):
            p.wait()
        for o in outs:
            o.close()
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def status_case(redlock, load, locks, other_keys=0):
    """status of `locks` held locks (beside `other_keys` unrelated keys): wall ms, commands, valid JSON."""
    server = Server(extra=("--enable-debug-command", "yes"))
    try:
        env = dict(os.environ, REDLOCK_URL=server.url())
        env.pop("REDLOCK_PASSWORD", None)
        if other_keys:
            server.c.cmd("DEBUG", "POPULATE", str(other_keys), "cache")
        subprocess.run([load, "--url", server.url(), "--hold", str(locks), "--threads", "4"], check=True,
                       stdout=DEVNULL)
        best, commands, ok_json = None, None, False
        for _ in range(3):
            before = server.commands()
            t = time.perf_counter()
            r = subprocess.run([redlock, "status", "--json"], env=env, capture_output=True, text=True)
            wall = time.perf_counter() - t
            commands = server.commands() - before
            try:
                ok_json = r.returncode == 0 and len(json.loads(r.stdout)) == locks
            except ValueError:
                ok_json = False
            best = wall if best is None else min(best, wall)
        return {"locks": locks, "other_keys": other_keys, "wall_ms": round(best * 1000, 1), "commands": commands,
                "json_ok": ok_json}
    finally:
        server.stop()


def scale_section(redlock, load, quick=False):
    window = 8.0 if quick else 20.0
    out = {"waiters": [], "status": []}
    real_ns = [10, 100] if quick else [10, 100, 600]
    sim_ns = [10, 1000] if quick else [10, 1000, 10000]
    for n in real_ns:
        out["waiters"].append(waiters_case(redlock, load, n, True, window=window))
    for n in sim_ns:
        out["waiters"].append(waiters_case(redlock, load, n, False, window=window))
    for n in ([1000] if quick else [1000, 10000]):
        out["waiters"].append(waiters_case(redlock, load, n, False, servers_n=3, window=window))
    for n in ([100, 1000] if quick else [100, 1000, 10000]):
        out["status"].append(status_case(redlock, load, n))
    out["status"].append(status_case(redlock, load, 20, other_keys=100000 if quick else 1000000))
    return out


def scale_goals(scale, goal):
    """Adds issue #21's figures as goals through goal(what, value, limit, unit)."""
    for w in scale.get("waiters", []):
        who = f"{w['waiters']} {'real' if w['real'] else 'simulated'} waiters, {w['servers']} server(s)"
        if w["real"] and w["waiters"] >= 600:
            goal(f"{who}: Redis CPU", w["redis_cpu_cores"], 0.15, "cor")
            goal(f"{who}: PING p99", w["ping_p99_ms"], 10.0, "ms")
            goal(f"{who}: slowest command", w["slowest_us"] / 1000.0, 2.0, "ms")
            goal(f"{who}: slowest handoff", w.get("handoff_max_ms") or float("inf"), 1500.0, "ms")
        if not w["real"] and w["waiters"] >= 10000 and w["servers"] == 1:
            goal(f"{who}: Redis CPU", w["redis_cpu_cores"], 0.10, "cor")
            goal(f"{who}: PING p99", w["ping_p99_ms"], 5.0, "ms")
    sims = {w["waiters"]: w for w in scale.get("waiters", []) if not w["real"] and w["servers"] == 1}
    if 10 in sims and 1000 in sims:
        ten, thousand = sims[10]["handoff_ms"], sims[1000]["handoff_ms"]
        goal("handoff gap (median), 1,000 vs 10 waiters", thousand / ten if ten and thousand else float("inf"), 1.2)
    for s in scale.get("status", []):
        if s["other_keys"]:
            goal(f"status of {s['locks']} locks beside {s['other_keys']:,} keys", s["wall_ms"], 50.0, "ms")
            goal(f"status of {s['locks']} locks beside {s['other_keys']:,} keys: commands", s["commands"], 10, "")
        elif s["locks"] >= 10000:
            goal(f"status of {s['locks']:,} locks", s["wall_ms"], 1000.0, "ms")


def scale_report(scale):
    print("\nwaiters on one lock           Redis CPU  slowest  PING p50  PING p99  handoff med/max  joined")
    for w in scale.get("waiters", []):
        who = f"{w['waiters']:>6} {'real' if w['real'] else 'sim '} x{w['servers']}"
        handoff = "-" if w["handoff_ms"] is None else f"{w['handoff_ms']:.0f}/{w.get('handoff_max_ms', 0):.0f} ms"
        print(f"  {who:<27} {w['redis_cpu_cores']:7.3f}  {w['slowest_us']:5d} us {w['ping_p50_ms']:6.2f} ms "
              f"{w['ping_p99_ms']:6.2f} ms {handoff:>15} {w['joined_s']:5.1f} s")
    print("\nstatus --json                     wall      commands  JSON")
    for s in scale.get("status", []):
        beside = f" beside {s['other_keys']:,} keys" if s["other_keys"] else ""
        print(f"  {s['locks']:>6} locks{beside:<25} {s['wall_ms']:7.1f} ms {s['commands']:8}  "
              f"{'ok' if s['json_ok'] else 'BAD'}")


def svg_panel(scale, x0, y0, w, h):
    """Redis CPU (cores) against waiters, real and simulated, on a log scale of waiters."""
    import math
    pts = [(w["waiters"], w["redis_cpu_cores"], w["real"]) for w in scale.get("waiters", []) if w["servers"] == 1]
    if not pts:
        return []
    top = max([p[1] for p in pts] + [0.15])
    parts = [f'<text x="{x0}" y="{y0 - 16}" font-weight="bold">Redis CPU (cores) by waiters on one lock</text>',
             f'<line x1="{x0}" y1="{y0 + h}" x2="{x0 + w}" y2="{y0 + h}" stroke="black"/>',
             f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y0 + h}" stroke="black"/>']
    lo, hi = math.log10(10), math.log10(10000)

    def xy(n, c):
        return x0 + w * (math.log10(n) - lo) / (hi - lo), y0 + h - h * c / top

    goal_y = xy(10, 0.15)[1]
    parts.append(f'<line x1="{x0}" y1="{goal_y:.1f}" x2="{x0 + w}" y2="{goal_y:.1f}" stroke="#999" '
                 f'stroke-dasharray="4 3"/><text x="{x0 + w - 4}" y="{goal_y - 4:.1f}" text-anchor="end" '
                 f'font-size="10">0.15 (600 real)</text>')
    for n in (10, 100, 1000, 10000):
        x, _ = xy(n, 0)
        parts.append(f'<text x="{x:.1f}" y="{y0 + h + 14}" text-anchor="middle" font-size="10">{n:,}</text>')
    for real, colour in ((True, "#c0392b"), (False, "#2c3e50")):
        series = sorted((n, c) for n, c, r in pts if r == real)
        if series:
            path = " ".join(f"{'M' if i == 0 else 'L'}{xy(n, c)[0]:.1f},{xy(n, c)[1]:.1f}"
                            for i, (n, c) in enumerate(series))
            parts.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
            for n, c in series:
                x, y = xy(n, c)
                parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}"/>'
                             f'<text x="{x + 4:.1f}" y="{y - 4:.1f}" font-size="10">{c:.3f}</text>')
    parts.append(f'<rect x="{x0}" y="{y0 + h + 22}" width="10" height="10" fill="#c0392b"/>'
                 f'<text x="{x0 + 14}" y="{y0 + h + 31}">real processes</text>'
                 f'<rect x="{x0 + 120}" y="{y0 + h + 22}" width="10" height="10" fill="#2c3e50"/>'
                 f'<text x="{x0 + 134}" y="{y0 + h + 31}">simulated (redlock_load)</text>')
    return parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redlock", required=True)
    ap.add_argument("--load", required=True, help="bench/redlock_load")
    ap.add_argument("--quick", action="store_true", help="fewer and smaller cases")
    ap.add_argument("--out", help="write the figures as JSON here")
    a = ap.parse_args()
    scale = scale_section(os.path.abspath(a.redlock), os.path.abspath(a.load), a.quick)
    scale_report(scale)
    if a.out:
        with open(a.out, "w") as f:
            json.dump(scale, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
