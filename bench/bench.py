#!/usr/bin/env python3
"""redlock's published benchmark: redlock against flock(1) and redis-cli.

Run through ./scripts/bench, which builds the binary and calls
    bench.py --redlock BINARY --out bench/results.json
Starts its own redis-server on loopback, measures each pair of commands
interleaved (A, B, A, B, ...) so that the machine's noise hits both alike,
prints a table with the goals of the project and PASS/FAIL per goal, and
writes the figures as JSON. It never fails: the exit status is 0 whenever the
benchmark ran, whatever the numbers.
"""

import argparse
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import scale

DEVNULL = subprocess.DEVNULL


def run(argv, env=None, capture=False):
    """Runs argv to completion; returns (wall s, CPU s of it and its children, stdout)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE if capture else DEVNULL, stderr=subprocess.PIPE, env=env)
    out = p.stdout.read() if capture else b""
    err = p.stderr.read()  # a few lines at most
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {err.decode(errors='replace').strip()}")
    return wall, ru.ru_utime + ru.ru_stime, out


def median_ms(xs):
    return statistics.median(xs) * 1000.0


def pct_ms(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] * 1000.0


def interleave(n, cases):
    """cases: {label: callable returning (wall, cpu)}; runs them in turn n times."""
    res = {k: {"wall": [], "cpu": []} for k in cases}
    labels = list(cases)
    for _ in range(n):
        random.shuffle(labels)
        for k in labels:
            w, c = cases[k]()
            res[k]["wall"].append(w)
            res[k]["cpu"].append(c)
    return {k: {"wall_ms": median_ms(v["wall"]), "cpu_ms": median_ms(v["cpu"]), "runs": n} for k, v in res.items()}


class Redis:
    def __init__(self, server):
        self.dir = tempfile.mkdtemp(prefix="redlock-bench-")
        for _ in range(50):
            port = random.randint(20000, 32000)  # below the ephemeral range
            with socket.socket() as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            break
        self.port = port
        self.proc = subprocess.Popen(
            [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", self.dir, "--logfile", os.path.join(self.dir, "log")], stdout=DEVNULL, stderr=DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not start")

    def url(self):
        return f"redis://127.0.0.1:{self.port}"

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def redis_call(port, *args):
    """One command on a fresh connection; returns the reply's raw bytes (enough for INFO)."""
    req = f"*{len(args)}\r\n" + "".join(f"${len(str(a).encode())}\r\n{a}\r\n" for a in args)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(req.encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
            if data.startswith(b"$"):
                head, _, rest = data.partition(b"\r\n")
                if len(rest) >= int(head[1:]) + 2:
                    return rest[:int(head[1:])]
            elif data.endswith(b"\r\n"):
                return data
    return data


# What the lock scripts call inside Redis: INFO commandstats counts those calls
# too, but they are part of the one EVALSHA that ran the script.
SCRIPT_CALLS = {"del", "get", "set", "exists", "type", "time", "incr", "publish", "pttl", "pexpire", "expire",
                "hget", "hset", "hdel", "hmget", "hgetall", "hincrby", "hexists", "hlen",
                "zadd", "zrem", "zscore", "zrange", "zrangebyscore", "zrank", "zcard", "zcount",
                "xadd", "xdel", "xrevrange", "xlen"}


def commands_run(port):
    """Commands clients have sent the server so far (INFO commandstats without the calls scripts made),
    not counting INFO itself."""
    total = 0
    for line in redis_call(port, "INFO", "commandstats").decode().splitlines():
        if not line.startswith("cmdstat_"):
            continue
        name = line[len("cmdstat_"):].split(":")[0]
        if name != "info" and name not in SCRIPT_CALLS:
            total += int(line.split("calls=")[1].split(",")[0])
    return total


def contended(p_workers, rounds, argv_for, env=None):
    """p_workers threads each run argv_for(worker) `rounds` times; returns wall seconds for all."""
    errors = []

    def worker(w):
        try:
            for _ in range(rounds):
                run(argv_for(w), env)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(str(e))

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(p_workers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return time.perf_counter() - start


def handoffs(path):
    """From the section log: gaps between one holder's end and the next one's start (s), how often
    the releasing worker took the lock again, and how many sections overlapped (must be 0)."""
    with open(path) as f:
        rows = sorted((int(s), int(e), w) for w, s, e in (line.split() for line in f if line.strip()))
    gaps = [(b[0] - a[1]) / 1e9 for a, b in zip(rows, rows[1:])]
    again = sum(1 for a, b in zip(rows, rows[1:]) if a[2] == b[2])
    return {"sections": len(rows), "gaps": gaps, "overlaps": sum(1 for g in gaps if g < 0),
            "same_worker_again": again / max(1, len(gaps))}


def peak_rss_kib(argv, env=None):
    """VmHWM (KiB) of the process argv starts, read while its child `sleep` runs."""
    p = subprocess.Popen(argv, stdout=DEVNULL, stderr=DEVNULL, env=env)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
        except OSError:
            pass
        time.sleep(0.02)
    return peak


def contended_set(args, redlock, flock, section, tmp, redis, env):
    """Contended handoff at P workers, with an empty and a 10 ms critical section, redlock against flock."""
    out = {}
    lockfile = os.path.join(tmp, "contended.lock")
    for ms in (0, 10):
        for p in (2, 4, 8, 16):
            rounds = max(3, args.handoffs // p)
            row = {"workers": p, "rounds_per_worker": rounds, "section_ms": ms}
            for tool in random.sample(["redlock", "flock"], 2):
                log = os.path.join(tmp, f"sections-{tool}-{p}-{ms}")
                if tool == "redlock":
                    def argv_for(w, log=log):
                        return [redlock, "exec", "--wait", "60s", f"bench-c{p}-{ms}", "--", section, log, str(w), str(ms)]
                    before = commands_run(redis.port)
                else:
                    def argv_for(w, log=log):
                        return [flock, lockfile, section, log, str(w), str(ms)]
                wall = contended(p, rounds, argv_for, env)
                h = handoffs(log)
                fig = {"wall_s": wall, "handoffs_per_s": h["sections"] / wall,
                       "gap_p50_ms": pct_ms(h["gaps"], 0.5), "gap_p99_ms": pct_ms(h["gaps"], 0.99),
                       "same_worker_again": h["same_worker_again"], "overlaps": h["overlaps"]}
                if tool == "redlock":
                    fig["commands_per_handoff"] = (commands_run(redis.port) - before) / h["sections"]
                row[tool] = fig
            out[f"P{p}-{ms}ms"] = row
    return out


def servers_set(args, redlock, servers):
    """acquire + release through the CLI on N = 1, 3, 5 servers, and on 5 with one SIGSTOPped."""
    def pair(urls, extra=()):
        base = [redlock, *[a for u in urls for a in ("-r", u)], *extra]

        def once():
            w1, c1, out = run(base + ["acquire", "--ttl", "30s", "bench-n"], capture=True)
            w2, c2, _ = run(base + ["release", "--token", out.decode().strip(), "bench-n"])
            return w1 + w2, c1 + c2
        return once

    urls = [s.url() for s in servers]
    n = max(20, args.runs // 3)
    res = interleave(n, {"N=1": pair(urls[:1]), "N=3": pair(urls[:3]), "N=5": pair(urls)})
    timeout_ms = 200
    extra = ("--redis-timeout", f"{timeout_ms}ms", "--connect-timeout", f"{timeout_ms}ms")
    os.kill(servers[-1].proc.pid, signal.SIGSTOP)
    try:
        stopped = interleave(max(5, n // 4), {"N=1 ": pair(urls[:1], extra), "N=5, one stopped": pair(urls, extra)})
    finally:
        os.kill(servers[-1].proc.pid, signal.SIGCONT)
    res["N=5, one stopped"] = stopped["N=5, one stopped"]
    res["N=1 (stopped-server reference)"] = stopped["N=1 "]
    res["timeout_ms"] = timeout_ms
    return res


def scripts_sent(port):
    """EVALSHA and EVAL calls clients have sent: what one exec costs Redis in round trips."""
    total = 0
    for line in redis_call(port, "INFO", "commandstats").decode().splitlines():
        if line.startswith(("cmdstat_evalsha:", "cmdstat_eval:")):
            total += int(line.split("calls=")[1].split(",")[0])
    return total


def history_set(args, redlock, redis, env):
    """The run ledger's cost: exec with its run recorded against exec --no-history (wall, interleaved), the
    scripts each sends, and the ledger's bytes per run (MEMORY USAGE of 100 runs)."""
    out = interleave(args.runs, {
        "exec (history)": lambda: run([redlock, "exec", "bench-hist", "--", "true"], env)[:2],
        "exec --no-history": lambda: run([redlock, "exec", "--no-history", "bench-nohist", "--", "true"], env)[:2],
    })
    for label, extra in (("exec (history)", []), ("exec --no-history", ["--no-history"])):
        before = scripts_sent(redis.port)
        for _ in range(20):
            run([redlock, "exec", *extra, "bench-count", "--", "true"], env)
        out[label]["scripts_per_run"] = (scripts_sent(redis.port) - before) / 20
    for _ in range(100):
        run([redlock, "exec", "bench-bytes", "--", "true", "/opt/report.sh"], env)
    key = "redlock:{bench-bytes}:runs"
    used = redis_call(redis.port, "MEMORY", "USAGE", key, "SAMPLES", "0").decode().strip(":\r\n")
    out["ledger"] = {"runs": int(redis_call(redis.port, "XLEN", key).decode().strip(":\r\n")),
                     "bytes": int(used)}
    out["ledger"]["bytes_per_run"] = out["ledger"]["bytes"] / max(1, out["ledger"]["runs"])
    return out


def holding_commands(redlock, redis, env):
    """Commands the holder of a 3 s lock sends per minute while its command runs (goal: 3 per TTL).
    Counted from just after the first renewal, which on a server that never ran the renew script
    before costs one more command (EVALSHA answered NOSCRIPT, then EVAL)."""
    ttl_s, hold_s = 3.0, 6.0
    p = subprocess.Popen([redlock, "exec", "--ttl", f"{int(ttl_s)}s", "bench-hold", "--", "sleep", str(hold_s + 2.5)],
                         stdout=DEVNULL, stderr=DEVNULL, env=env)
    time.sleep(ttl_s / 3 + 0.25)
    before = commands_run(redis.port)
    time.sleep(hold_s)
    during = commands_run(redis.port) - before
    p.wait()
    return {"ttl_s": ttl_s, "window_s": hold_s, "commands": during, "per_minute": during * 60.0 / hold_s,
            "per_ttl": during * ttl_s / hold_s}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redlock", required=True)
    ap.add_argument("--section", help="bench/redlock_bench_section (the contended measure's critical section)")
    ap.add_argument("--out", default="bench/results.json")
    ap.add_argument("--svg", default="bench/results.svg")
    ap.add_argument("--runs", type=int, default=150, help="runs per side for the single-call measures")
    ap.add_argument("--handoffs", type=int, default=96, help="critical sections per contended measure")
    ap.add_argument("--core-bench", help="bench/redlock_bench: acquire+release in-process on 1 and 5 servers")
    ap.add_argument("--load", help="bench/redlock_load: the scale section's load generator")
    ap.add_argument("--scale", choices=("no", "quick", "full"), default="full",
                    help="the scale section (bench/scale.py): waiters and status at fleet scale")
    args = ap.parse_args()

    redlock = os.path.abspath(args.redlock)
    flock = shutil.which("flock")
    server = shutil.which("redis-server")
    cli = shutil.which("redis-cli")
    if not (flock and server and cli):
        print("bench: needs flock, redis-server and redis-cli (./scripts/setup installs them)")
        return 0
    tmp = tempfile.mkdtemp(prefix="redlock-bench-")
    lockfile = os.path.join(tmp, "lock")
    servers = []
    results = {"machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                           "loadavg": os.getloadavg()[0]},
               "binary": redlock}
    t0 = time.perf_counter()
    try:
        servers = [Redis(server) for _ in range(5)]
        redis = servers[0]
        env = dict(os.environ, REDLOCK_URL=redis.url())
        env.pop("REDLOCK_PASSWORD", None)
        # 1. start-up and one exec, against flock(1).
        results["startup"] = interleave(args.runs, {
            "redlock --version": lambda: run([redlock, "--version"])[:2],
            "flock --version": lambda: run([flock, "--version"])[:2],
            "flock FILE true": lambda: run([flock, lockfile, "true"])[:2],
        })
        results["exec"] = interleave(args.runs, {
            "redlock exec NAME -- true": lambda: run([redlock, "exec", "bench-exec", "--", "true"], env)[:2],
            "flock FILE true": lambda: run([flock, lockfile, "true"])[:2],
        })
        results["history"] = history_set(args, redlock, redis, env)

        # acquire + release: two redlock calls against the same two calls by redis-cli.
        def redlock_pair():
            w1, c1, out = run([redlock, "acquire", "--ttl", "30s", "bench-ar"], env, capture=True)
            w2, c2, _ = run([redlock, "release", "--token", out.decode().strip(), "bench-ar"], env)
            return w1 + w2, c1 + c2

        def cli_pair():
            base = [cli, "-p", str(redis.port)]
            w1, c1, _ = run(base + ["SET", "bench-cli", "token", "NX", "PX", "30000"])
            w2, c2, _ = run(base + ["DEL", "bench-cli"])
            return w1 + w2, c1 + c2

        results["acquire_release"] = interleave(max(20, args.runs // 2), {
            "redlock acquire + release": redlock_pair,
            "redis-cli SET NX PX + DEL": cli_pair,
        })

        # 2. contended handoff on one lock.
        if args.section:
            results["contended"] = contended_set(args, redlock, flock, os.path.abspath(args.section), tmp, redis, env)

        # 3. the Redlock algorithm: N servers, through the CLI as users run it ...
        results["servers_cli"] = servers_set(args, redlock, servers)
        # ... and through the lock core in-process (no process start-up: the round trips alone).
        if args.core_bench:
            out = subprocess.run([args.core_bench, "--iterations", "500"], capture_output=True, text=True,
                                 check=True).stdout
            core = {}
            for line in out.splitlines():
                if line.startswith("acquire+release, 1 server:"):
                    core["1 server us"] = float(line.split()[-2])
                elif line.startswith("acquire+release, 5 servers in parallel:"):
                    core["5 servers us"] = float(line.split()[-2])
            results["servers"] = core

        # 4. the holder: peak RSS while its command runs, and what it sends while holding.
        results["rss_kib"] = {
            "redlock exec (holder)": peak_rss_kib([redlock, "exec", "bench-rss", "--", "sleep", "0.5"], env),
            "flock FILE sleep": peak_rss_kib([flock, lockfile, "sleep", "0.5"]),
        }
        results["holding"] = holding_commands(redlock, redis, env)

        # 5. fleet scale: many waiters on one lock, status of many locks (bench/scale.py).
        if args.load and args.scale != "no":
            results["scale"] = scale.scale_section(redlock, os.path.abspath(args.load), args.scale == "quick")
    except Exception as e:  # noqa: BLE001 - a benchmark that broke reports it and ends
        print(f"bench: stopped: {e}")
        results["error"] = str(e)
    finally:
        for s in servers:
            s.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    results["seconds"] = time.perf_counter() - t0
    results["goals"] = goals_of(results)
    report(results, args)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg_chart(results))
    return 0


def goals_of(results):
    goals = []

    def goal(what, value, limit, unit="x"):
        goals.append({"goal": what, "value": round(value, 3), "limit": limit, "unit": unit, "pass": value <= limit})

    if "startup" in results:
        s = results["startup"]
        goal("--version CPU vs flock FILE true", s["redlock --version"]["cpu_ms"] / s["flock FILE true"]["cpu_ms"], 1.5)
    if "exec" in results:
        e = results["exec"]
        goal("exec -- true wall vs flock FILE true",
             e["redlock exec NAME -- true"]["wall_ms"] / e["flock FILE true"]["wall_ms"], 1.5)
    if "history" in results:
        h = results["history"]
        goal("exec wall, history vs --no-history", h["exec (history)"]["wall_ms"] / h["exec --no-history"]["wall_ms"],
             1.1)
        goal("scripts per exec, history minus --no-history",
             h["exec (history)"]["scripts_per_run"] - h["exec --no-history"]["scripts_per_run"], 0, "")
    if "acquire_release" in results:
        a = results["acquire_release"]
        goal("acquire+release wall vs redis-cli",
             a["redlock acquire + release"]["wall_ms"] / a["redis-cli SET NX PX + DEL"]["wall_ms"], 1.15)
    c = results.get("contended", {})
    if "P4-0ms" in c:
        goal("P=4, empty sections: wall vs flock", c["P4-0ms"]["redlock"]["wall_s"] / c["P4-0ms"]["flock"]["wall_s"], 1.5)
    for p in (4, 8):
        row = c.get(f"P{p}-10ms")
        if row and row["flock"]["gap_p50_ms"] > 0:
            goal(f"P={p}, 10 ms sections: handoff gap p50 vs flock",
                 row["redlock"]["gap_p50_ms"] / row["flock"]["gap_p50_ms"], 1.3)
    if c:
        goal("overlapping critical sections (any P)", sum(r[t]["overlaps"] for r in c.values() for t in ("redlock", "flock")),
             0, "")
    if "rss_kib" in results:
        goal("holder peak RSS", results["rss_kib"]["redlock exec (holder)"] / 1024.0, 4.0, "MiB")
    sc = results.get("servers_cli")
    if sc:
        goal("acquire+release N=5 vs N=1 servers (CLI)", sc["N=5"]["wall_ms"] / sc["N=1"]["wall_ms"], 1.5)
        # Each of the two calls waits once for the stopped server's --redis-timeout, and not more.
        extra = (sc["N=5, one stopped"]["wall_ms"] - sc["N=1 (stopped-server reference)"]["wall_ms"]) / 2
        goal("N=5, one server stopped: extra ms per call", extra, sc["timeout_ms"] + 10, "ms")
    if "holding" in results:
        goal("commands per TTL while holding", results["holding"]["per_ttl"], 3.0, "")
    if "scale" in results:
        scale.scale_goals(results["scale"], goal)
    return goals


def report(results, args):
    print(f"redlock benchmark: {results['binary']}")
    print(f"{os.cpu_count()} CPUs, load average {results['machine']['loadavg']:.1f} at start; "
          f"medians of interleaved runs\n")
    for section in ("startup", "exec", "acquire_release"):
        if section not in results:
            continue
        print(f"{section:<28} {'wall ms':>9} {'CPU ms':>9}")
        for k, v in results[section].items():
            print(f"  {k:<26} {v['wall_ms']:9.2f} {v['cpu_ms']:9.2f}")
    if "history" in results:
        h = results["history"]
        print(f"\nrun history                  {'wall ms':>9} {'CPU ms':>9} {'scripts':>8}")
        for k in ("exec (history)", "exec --no-history"):
            v = h[k]
            print(f"  {k:<26} {v['wall_ms']:9.2f} {v['cpu_ms']:9.2f} {v['scripts_per_run']:8.1f}")
        print(f"  ledger of {h['ledger']['runs']} runs: {h['ledger']['bytes']} bytes, "
              f"{h['ledger']['bytes_per_run']:.0f} per run")
    if results.get("contended"):
        print("\ncontended, one lock   handoffs/s   gap p50 ms   gap p99 ms   same again   cmds/handoff")
        print("                      redlock flock redlock flock redlock flock redlock flock")
        for k, row in results["contended"].items():
            r, f = row["redlock"], row["flock"]
            print(f"  P={row['workers']:<2} {row['section_ms']:>2} ms x{row['rounds_per_worker']:<3}"
                  f"{r['handoffs_per_s']:7.0f} {f['handoffs_per_s']:5.0f} {r['gap_p50_ms']:7.2f} {f['gap_p50_ms']:5.2f} "
                  f"{r['gap_p99_ms']:7.2f} {f['gap_p99_ms']:5.2f} {r['same_worker_again']:7.0%} "
                  f"{f['same_worker_again']:5.0%} {r['commands_per_handoff']:8.1f}")
    if results.get("servers_cli"):
        print(f"\nacquire+release through the CLI   {'wall ms':>9} {'CPU ms':>9}")
        for k, v in results["servers_cli"].items():
            if isinstance(v, dict):
                print(f"  {k:<32} {v['wall_ms']:9.2f} {v['cpu_ms']:9.2f}")
    if results.get("servers"):
        print("\nacquire+release in-process (bench/redlock_bench)")
        for k, v in results["servers"].items():
            print(f"  {k:<26} {v:8.1f}")
    if "rss_kib" in results:
        print("\npeak RSS (VmHWM)")
        for k, v in results["rss_kib"].items():
            print(f"  {k:<26} {v / 1024.0:6.1f} MiB")
    if "holding" in results:
        h = results["holding"]
        print(f"\nwhile holding a {h['ttl_s']:.0f} s lock: {h['commands']} commands in {h['window_s']:.0f} s "
              f"({h['per_minute']:.0f}/min, {h['per_ttl']:.1f} per TTL)")
    if "scale" in results:
        scale.scale_report(results["scale"])
    print(f"\n{'goal':<54} {'measured':>9} {'limit':>7}")
    for g in results["goals"]:
        print(f"  {g['goal']:<52} {g['value']:6.2f} {g['unit']:<3} {g['limit']:>4} {g['unit']:<3}  "
              f"{'PASS' if g['pass'] else 'FAIL'}")
    print(f"\n{results['seconds']:.0f} s; figures in {args.out}" + (f", chart in {args.svg}" if args.svg else ""))


def svg_chart(results):
    """Two bar charts, redlock against flock: one call's wall time, and the contended handoff gap p50."""
    groups = []
    if "startup" in results and "exec" in results:
        groups.append(("--version", results["startup"]["redlock --version"]["wall_ms"],
                       results["startup"]["flock --version"]["wall_ms"]))
        groups.append(("exec -- true", results["exec"]["redlock exec NAME -- true"]["wall_ms"],
                       results["exec"]["flock FILE true"]["wall_ms"]))
    left = ("one call, wall ms (median)", groups)
    gaps = [(f"P={r['workers']}", r["redlock"]["gap_p50_ms"], r["flock"]["gap_p50_ms"])
            for k, r in results.get("contended", {}).items() if r["section_ms"] == 10]
    right = ("handoff gap p50 ms, 10 ms sections", gaps)
    w, h, pad = 760, 300, 40
    extra = 300 if results.get("scale") else 0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h + extra}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{w}" height="{h + extra}" fill="white"/>']
    if extra:
        parts += scale.svg_panel(results["scale"], pad, h + pad, w - 2 * pad, extra - 3 * pad)
    for i, (title, data) in enumerate((left, right)):
        x0 = pad + i * (w // 2)
        pw, ph = w // 2 - 2 * pad, h - 3 * pad
        parts.append(f'<text x="{x0}" y="{pad - 16}" font-weight="bold">{title}</text>')
        parts.append(f'<line x1="{x0}" y1="{pad + ph}" x2="{x0 + pw}" y2="{pad + ph}" stroke="black"/>')
        top = max([max(a, b) for _, a, b in data] + [1e-9])
        slot = pw / max(1, len(data))
        for j, (label, a, b) in enumerate(data):
            for k, (v, colour) in enumerate(((a, "#c0392b"), (b, "#7f8c8d"))):
                bh = ph * v / top
                bx = x0 + j * slot + slot * (0.15 + 0.35 * k)
                parts.append(f'<rect x="{bx:.1f}" y="{pad + ph - bh:.1f}" width="{slot * 0.33:.1f}" height="{bh:.1f}" '
                             f'fill="{colour}"/>')
                parts.append(f'<text x="{bx + slot * 0.165:.1f}" y="{pad + ph - bh - 3:.1f}" text-anchor="middle" '
                             f'font-size="10">{v:.1f}</text>')
            parts.append(f'<text x="{x0 + j * slot + slot / 2:.1f}" y="{pad + ph + 16}" text-anchor="middle">{label}</text>')
    parts.append(f'<rect x="{pad}" y="{h - 22}" width="10" height="10" fill="#c0392b"/>'
                 f'<text x="{pad + 14}" y="{h - 13}">redlock</text>'
                 f'<rect x="{pad + 80}" y="{h - 22}" width="10" height="10" fill="#7f8c8d"/>'
                 f'<text x="{pad + 94}" y="{h - 13}">flock(1)</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    sys.exit(main())
