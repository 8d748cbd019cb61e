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
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

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


def contended(p_workers, rounds, argv, env=None):
    """p_workers threads each run argv `rounds` times; returns wall seconds for all."""
    errors = []

    def worker():
        try:
            for _ in range(rounds):
                run(argv, env)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(str(e))

    threads = [threading.Thread(target=worker) for _ in range(p_workers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(errors[0])
    return time.perf_counter() - start


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redlock", required=True)
    ap.add_argument("--out", default="bench/results.json")
    ap.add_argument("--runs", type=int, default=150, help="runs per side for the single-call measures")
    ap.add_argument("--rounds", type=int, default=15, help="rounds per worker in the contended measure")
    ap.add_argument("--core-bench", help="bench/redlock_bench: acquire+release in-process on 1 and 5 servers")
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
    redis = Redis(server)
    env = dict(os.environ, REDLOCK_URL=redis.url())
    env.pop("REDLOCK_PASSWORD", None)
    results = {"machine": {"cpus": os.cpu_count(), "kernel": platform.release(),
                           "loadavg": os.getloadavg()[0]},
               "binary": redlock}
    t0 = time.perf_counter()
    try:
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
        results["contended"] = {}
        for p in (2, 4, 8):
            walls = {"redlock": [], "flock": []}
            for _ in range(2):  # two interleaved repetitions, best of each
                walls["redlock"].append(contended(p, args.rounds, [redlock, "exec", "--wait", "10s", f"bench-c{p}", "--", "true"], env))
                walls["flock"].append(contended(p, args.rounds, [flock, lockfile, "true"]))
            row = {}
            for k, v in walls.items():
                w = min(v)
                row[k] = {"wall_s": w, "handoffs_per_s": p * args.rounds / w}
            row["workers"] = p
            row["rounds_per_worker"] = args.rounds
            results["contended"][str(p)] = row

        # 4. the holder's peak RSS while its command runs.
        results["rss_kib"] = {
            "redlock exec (holder)": peak_rss_kib([redlock, "exec", "bench-rss", "--", "sleep", "0.5"], env),
            "flock FILE sleep": peak_rss_kib([flock, lockfile, "sleep", "0.5"]),
        }

        # 3. the Redlock algorithm: 5 servers against 1, through the lock core in-process.
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
    except Exception as e:  # noqa: BLE001 - a benchmark that broke reports it and ends
        print(f"bench: stopped: {e}")
        results["error"] = str(e)
    finally:
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    results["seconds"] = time.perf_counter() - t0

    goals = []

    def goal(what, value, limit, unit="x"):
        ok = value <= limit
        goals.append({"goal": what, "value": round(value, 3), "limit": limit, "unit": unit, "pass": ok})

    if "startup" in results:
        s = results["startup"]
        goal("--version CPU vs flock FILE true", s["redlock --version"]["cpu_ms"] / s["flock FILE true"]["cpu_ms"], 1.5)
    if "exec" in results:
        e = results["exec"]
        goal("exec -- true wall vs flock FILE true",
             e["redlock exec NAME -- true"]["wall_ms"] / e["flock FILE true"]["wall_ms"], 1.5)
    if "acquire_release" in results:
        a = results["acquire_release"]
        goal("acquire+release wall vs redis-cli",
             a["redlock acquire + release"]["wall_ms"] / a["redis-cli SET NX PX + DEL"]["wall_ms"], 1.15)
    if "4" in results.get("contended", {}):
        c = results["contended"]["4"]
        goal("4 workers contended wall vs flock", c["redlock"]["wall_s"] / c["flock"]["wall_s"], 1.5)
    if "rss_kib" in results:
        goal("holder peak RSS", results["rss_kib"]["redlock exec (holder)"] / 1024.0, 4.0, "MiB")
    if "servers" in results and results["servers"].get("1 server us"):
        goal("acquire+release N=5 vs N=1 servers", results["servers"]["5 servers us"] / results["servers"]["1 server us"],
             1.5)
    results["goals"] = goals

    print(f"redlock benchmark: {redlock}")
    print(f"{os.cpu_count()} CPUs, load average {results['machine']['loadavg']:.1f} at start; "
          f"medians of interleaved runs\n")
    for section in ("startup", "exec", "acquire_release"):
        if section not in results:
            continue
        print(f"{section:<28} {'wall ms':>9} {'CPU ms':>9}")
        for k, v in results[section].items():
            print(f"  {k:<26} {v['wall_ms']:9.2f} {v['cpu_ms']:9.2f}")
    if results.get("contended"):
        print(f"\ncontended, one lock          {'redlock':>18} {'flock':>18}")
        for p, row in results["contended"].items():
            print(f"  P={p:<2} x {row['rounds_per_worker']} rounds         "
                  f"{row['redlock']['wall_s']:7.2f} s {row['redlock']['handoffs_per_s']:6.0f}/s "
                  f"{row['flock']['wall_s']:7.2f} s {row['flock']['handoffs_per_s']:6.0f}/s")
    if "rss_kib" in results:
        print("\npeak RSS (VmHWM)")
        for k, v in results["rss_kib"].items():
            print(f"  {k:<26} {v / 1024.0:6.1f} MiB")
    if results.get("servers"):
        print("\nacquire+release in-process (bench/redlock_bench)")
        for k, v in results["servers"].items():
            print(f"  {k:<26} {v:8.1f}")
    print(f"\n{'goal':<42} {'measured':>9} {'limit':>7}")
    for g in goals:
        print(f"  {g['goal']:<40} {g['value']:6.2f} {g['unit']:<3} {g['limit']:>4} {g['unit']:<3}  "
              f"{'PASS' if g['pass'] else 'FAIL'}")
    print(f"\n{results['seconds']:.0f} s; figures in {args.out}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
