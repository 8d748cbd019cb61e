#!/usr/bin/env python3
"""redlock against an earlier build of itself, and both against flock(1).

Run through ./scripts/bench, which builds the commit it names (BASELINE in
scripts/bench, or --against REV) beside the tree and calls
    baseline.py --redlock NEW --baseline OLD --out bench/baseline.json
Every measure runs the three sides interleaved in a shuffled order, so the
machine's noise hits them alike; figures are medians. It prints one table
with PASS/FAIL per goal (the goals of bench/README.md, "Against the previous
release") and writes the figures as JSON. Like bench.py it never fails on
the numbers: the exit status is 0 whenever it ran.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import bench

DEVNULL = subprocess.DEVNULL


def faults_of(argv, env):
    """Minor page faults of one run of argv (from wait4)."""
    p = subprocess.Popen(argv, stdout=DEVNULL, stderr=DEVNULL, env=env)
    _, _, ru = os.wait4(p.pid, 0)
    return ru.ru_minflt


def stripped_size(binary, tmp):
    out = os.path.join(tmp, os.path.basename(binary) + f".stripped.{random.randrange(1 << 30)}")
    subprocess.run(["strip", "-o", out, binary], check=True)
    return os.path.getsize(out)


def contended_rounds(binaries, lockfile, workers, rounds, repeats, env):
    """Wall time of `workers` processes each taking the lock `rounds` times in a loop, per side."""
    walls = {k: [] for k in binaries}
    walls["flock"] = []
    sides = list(walls)
    for r in range(repeats):
        random.shuffle(sides)
        for side in sides:
            if side == "flock":
                argv_for = lambda w: ["flock", lockfile, "true"]  # noqa: E731
            else:
                name = f"bench-contended-{side}-{r}"
                argv_for = lambda w, b=binaries[side], n=name: [b, "exec", "--wait", "60s", n, "--", "true"]  # noqa: E731
            walls[side].append(bench.contended(workers, rounds, argv_for, env))
    return {k: statistics.median(v) * 1000.0 for k, v in walls.items()}


def measure(args):
    tmp = tempfile.mkdtemp(prefix="redlock-baseline-")
    redis = bench.Redis(shutil.which("redis-server") or "redis-server")
    try:
        env = dict(os.environ, REDLOCK_URL=redis.url(), REDLOCK_CONFIG=os.path.join(tmp, "no-config"))
        open(env["REDLOCK_CONFIG"], "w").close()
        lockfile = os.path.join(tmp, "flock.lock")
        sides = {"new": args.redlock, "old": args.baseline}
        res = {"runs": args.runs}
        res["startup"] = bench.interleave(args.runs, {
            "new": lambda: bench.run([args.redlock, "--version"], env)[:2],
            "old": lambda: bench.run([args.baseline, "--version"], env)[:2],
            "flock": lambda: bench.run(["flock", lockfile, "true"], env)[:2],
        })
        faults = {k: [] for k in sides}
        for _ in range(args.runs):
            for k, b in sides.items():
                faults[k].append(faults_of([b, "--version"], env))
        res["faults"] = {k: statistics.median(v) for k, v in faults.items()}
        res["exec"] = bench.interleave(args.runs, {
            "new": lambda: bench.run([args.redlock, "exec", "bench-exec-new", "--", "true"], env)[:2],
            "old": lambda: bench.run([args.baseline, "exec", "bench-exec-old", "--", "true"], env)[:2],
            "flock": lambda: bench.run(["flock", lockfile, "true"], env)[:2],
        })
        res["contended_ms"] = contended_rounds(sides, lockfile, args.workers, args.rounds, args.repeats, env)
        res["contended"] = {"workers": args.workers, "rounds": args.rounds, "repeats": args.repeats}
        res["size"] = {k: stripped_size(b, tmp) for k, b in sides.items()}
        rss = {k: [] for k in sides}
        for i in range(5):
            for k, b in sides.items():
                rss[k].append(bench.peak_rss_kib([b, "exec", f"bench-rss-{k}-{i}", "--", "sleep", "0.3"], env))
        res["rss_kib"] = {k: statistics.median(v) for k, v in rss.items()}
        return res
    finally:
        redis.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def goals_of(r):
    """(figure, value, goal text, passed) rows: the issue's goals, as bench/README.md lists them."""
    s, e, c = r["startup"], r["exec"], r["contended_ms"]
    ratio = lambda a, b: a / b if b else float("inf")  # noqa: E731
    rows = [
        ("start-up CPU vs old", ratio(s["new"]["cpu_ms"], s["old"]["cpu_ms"]), "≤ 1.0×"),
        ("start-up wall vs old", ratio(s["new"]["wall_ms"], s["old"]["wall_ms"]), "≤ 1.0×"),
        ("exec -- true wall vs old", ratio(e["new"]["wall_ms"], e["old"]["wall_ms"]), "≤ 1.0×"),
        ("contended wall vs old", ratio(c["new"], c["old"]), "≤ 1.0×"),
        ("start-up CPU vs flock", ratio(s["new"]["cpu_ms"], s["flock"]["cpu_ms"]), "≤ 1.0×"),
        ("exec -- true wall vs flock", ratio(e["new"]["wall_ms"], e["flock"]["wall_ms"]), "≤ 1.3×"),
        ("contended wall vs flock", ratio(c["new"], c["flock"]), "≤ 1.3×"),
    ]
    out = [(name, f"{v:.2f}×", goal, v <= float(goal.split()[1].rstrip("×"))) for name, v, goal in rows]
    out.append(("stripped binary", f"{r['size']['new'] / 1e6:.2f} MB (old {r['size']['old'] / 1e6:.2f})",
                "≤ 2.4 MB", r["size"]["new"] <= 2.4e6))
    out.append(("holder peak RSS", f"{r['rss_kib']['new'] / 1024:.2f} MiB (old {r['rss_kib']['old'] / 1024:.2f})",
                "≤ 3.5 MiB", r["rss_kib"]["new"] <= 3.5 * 1024))
    out.append(("page faults at start-up", f"{r['faults']['new']:.0f} (old {r['faults']['old']:.0f})",
                "≤ old's", r["faults"]["new"] <= r["faults"]["old"]))
    return out


def report(r, label):
    s, e, c = r["startup"], r["exec"], r["contended_ms"]
    print(f"redlock against {label} and flock(1), {r['runs']} runs a side, medians")
    print(f"  --version      new {s['new']['cpu_ms']:.2f} ms CPU / {s['new']['wall_ms']:.2f} ms wall, "
          f"old {s['old']['cpu_ms']:.2f} / {s['old']['wall_ms']:.2f}, flock {s['flock']['cpu_ms']:.2f} / "
          f"{s['flock']['wall_ms']:.2f}")
    print(f"  exec -- true   new {e['new']['wall_ms']:.2f} ms, old {e['old']['wall_ms']:.2f}, "
          f"flock {e['flock']['wall_ms']:.2f}")
    k = r["contended"]
    print(f"  contended      {k['workers']} workers × {k['rounds']} rounds: new {c['new']:.0f} ms, "
          f"old {c['old']:.0f}, flock {c['flock']:.0f}")
    print()
    print("| figure | measured | goal | |")
    print("|---|---:|---|---|")
    for name, value, goal, ok in goals_of(r):
        print(f"| {name} | {value} | {goal} | {'PASS' if ok else 'FAIL'} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--redlock", required=True, help="the binary measured")
    ap.add_argument("--baseline", required=True, help="the earlier build it is measured against")
    ap.add_argument("--label", default="the baseline", help="what the baseline is, for the report")
    ap.add_argument("--runs", type=int, default=150)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--repeats", type=int, default=5, help="contended runs a side")
    ap.add_argument("--out", default="bench/baseline.json")
    args = ap.parse_args()
    started = time.time()
    r = measure(args)
    r["label"] = args.label
    r["goals"] = [{"figure": n, "measured": v, "goal": g, "pass": ok} for n, v, g, ok in goals_of(r)]
    report(r, args.label)
    with open(args.out, "w") as f:
        json.dump(r, f, indent=1)
    print(f"\n({time.time() - started:.0f} s; figures in {args.out})", file=sys.stderr)


if __name__ == "__main__":
    main()
