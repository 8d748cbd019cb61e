#!/usr/bin/env python3
"""Lists the functions a call of redlock runs, in the order it first runs them.

The link puts these functions side by side at the start of the binary's text
(packaging/hot.ld.in, made into build/generated/hot.ld from
packaging/hot-functions.txt), so that a call touches a few dozen pages of
code instead of pages scattered over all of it: the kernel maps file pages
64 KB at a time around each one touched, so scattered code costs resident
memory and page faults in every process.

The profile is taken with valgrind's lackey, which prints the address of
every block of code it runs, over the calls that a holder and a waiter make:
--version, acquire, a waiting acquire that gets the lock when its holder
releases it, renew and release, against a redis-server of its own on a free
loopback port below 32768. `exec` itself cannot run under valgrind (its
clone(CLONE_VM | CLONE_VFORK) is refused there); the link keeps exec's own
files beside the profile instead (packaging/hot.ld.in).

    python3 bench/hot_functions.py --redlock build/redlock --out packaging/hot-functions.txt

Names are the symbols of the functions (mangled, as their sections are
named under -ffunction-sections); one a line.
"""

import argparse
import bisect
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

# Where valgrind maps a position-independent executable (its load address
# for the main program); checked below against the symbols.
VALGRIND_PIE_BASE = 0x108000


def free_port():
    for _ in range(100):
        port = random.randint(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    sys.exit("hot_functions: no free port below 32768")


def start_redis(work):
    port = free_port()
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", work, "--logfile", os.path.join(work, "redis.log")])
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("hot_functions: the redis-server did not start")


def lackey(redlock, args, env, work, tag):
    """Runs redlock under lackey; returns (stdout, addresses of its blocks in first-run order)."""
    log = os.path.join(work, f"lackey.{tag}")
    cmd = ["valgrind", "--tool=lackey", "--trace-superblocks=yes", f"--log-file={log}", redlock, *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"hot_functions: {' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    seen, order = set(), []
    with open(log) as f:
        for line in f:
            if line.startswith("SB "):
                a = int(line[3:], 16)
                if a not in seen:
                    seen.add(a)
                    order.append(a)
    return out.stdout, order


def text_range(redlock):
    """Where the binary's .text section lies: (start, end)."""
    out = subprocess.run(["readelf", "-SW", redlock], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\]\s+\.text\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", out)
    if not m:
        sys.exit(f"hot_functions: {redlock} has no .text section")
    start = int(m.group(1), 16)
    return start, start + int(m.group(2), 16)


def symbols(redlock):
    """Function symbols of the binary: sorted (start, size, name)."""
    nm = subprocess.run(["nm", "--defined-only", "-S", redlock], capture_output=True, text=True, check=True)
    syms = []
    for line in nm.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--redlock", required=True, help="a redlock built with symbols (the default build)")
    ap.add_argument("--out", required=True)
    opts = ap.parse_args()
    if not shutil.which("valgrind"):
        sys.exit("hot_functions: needs valgrind (apt-get install valgrind)")
    redlock = os.path.abspath(opts.redlock)
    work = tempfile.mkdtemp(prefix="redlock-hot.")
    redis, port = start_redis(work)
    env = dict(os.environ, REDLOCK_URL=f"redis://127.0.0.1:{port}")
    env.pop("REDLOCK_CONFIG", None)
    runs = []
    try:
        runs.append(lackey(redlock, ["--version"], env, work, "version")[1])
        tok, order = lackey(redlock, ["acquire", "--ttl", "30s", "hot"], env, work, "acquire")
        runs.append(order)
        tok = tok.strip()
        runs.append(lackey(redlock, ["renew", "--token", tok, "--ttl", "30s", "hot"], env, work, "renew")[1])
        # A waiter: the holder gives the lock back while it waits.
        timer = threading.Timer(1.5, lambda: subprocess.run(
            [redlock, "release", "--token", tok, "hot"], env=env, check=True))
        timer.start()
        tok2, order = lackey(redlock, ["acquire", "--ttl", "30s", "--wait", "20s", "hot"], env, work, "wait")
        timer.join()
        runs.append(order)
        runs.append(lackey(redlock, ["release", "--token", tok2.strip(), "hot"], env, work, "release")[1])
    finally:
        redis.terminate()
        redis.wait()
        shutil.rmtree(work, ignore_errors=True)

    syms = symbols(redlock)
    starts = [s[0] for s in syms]
    text_start, text_end = text_range(redlock)
    names, seen, inside, outside = [], set(), 0, 0
    for order in runs:
        for a in order:
            off = a - VALGRIND_PIE_BASE
            if not text_start <= off < text_end:
                continue  # the loader, libc, valgrind's own, the PLT
            i = bisect.bisect_right(starts, off) - 1
            if i >= 0 and syms[i][0] <= off < syms[i][0] + max(syms[i][1], 1):
                inside += 1
                name = syms[i][2]
                if name not in seen:
                    seen.add(name)
                    names.append(name)
            else:
                outside += 1
    if inside == 0 or outside > inside / 20:
        sys.exit(f"hot_functions: {outside} of {inside + outside} blocks fall outside every function: "
                 f"is valgrind's load address still {VALGRIND_PIE_BASE:#x}?")
    # Only names a section can have: the linker script matches .text.<name>.
    names = [n for n in names if re.fullmatch(r"[A-Za-z0-9_.$]+", n)]
    with open(opts.out, "w") as f:
        f.write("".join(n + "\n" for n in names))
    size = sum(s[1] for s in syms if s[2] in seen)
    print(f"hot_functions: {len(names)} functions, {size / 1024:.0f} KB of code, written to {opts.out}")


if __name__ == "__main__":
    main()
