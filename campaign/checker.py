"""The campaign's checker: from one cell's history (the fenced register's log,
the runner's record of every redlock process, the faults' windows, the
leases read from the servers) it computes the cell's figures, checks the
acquire/release history against a mutex model (a Porcupine-style search,
per lock name), and draws a failing cell's timeline as SVG."""
import html
import math

INF = math.inf


# ---------------------------------------------------------------- sessions

def sessions_of(events):
    """Critical sections from the register's log: start, end (END or the
    connection closed), fence, whether it ended normally, signals, writes."""
    by_sid, out = {}, []
    for e in events:
        ev = e["ev"]
        if ev == "start":
            s = {"sid": e["sid"], "name": e["name"], "fence": e["fence"], "client": e["client"],
                 "pid": e["pid"], "kind": e["kind"], "start": e["t"], "end": None,
                 "ended": False, "sig": None, "puts": []}
            by_sid[e["sid"]] = s
            out.append(s)
        elif e.get("sid") in by_sid:
            s = by_sid[e["sid"]]
            if ev == "end":
                s["end"], s["ended"] = e["t"], True
            elif ev == "close" and s["end"] is None:
                s["end"] = e["t"]
            elif ev == "sig" and s["sig"] is None:
                s["sig"] = e["t"]
            elif ev == "put":
                s["puts"].append(e)
    last = max((e["t"] for e in events), default=0)
    for s in out:
        if s["end"] is None:
            s["end"] = last
    return out


def overlaps(sessions, limit=1):
    """Sections that began while the hold could not be shared with those
    already open: an exclusive one beside any other, a reader beside a
    writer, one semaphore holder too many. Returns [(a, b, start, end)]."""
    found = []
    by_name = {}
    for s in sessions:
        by_name.setdefault(s["name"], []).append(s)
    for group in by_name.values():
        group.sort(key=lambda s: s["start"])
        for i, b in enumerate(group):
            open_ = [a for a in group[:i] if a["end"] > b["start"]]
            if not open_:
                continue
            if b["kind"] == "sem" and all(a["kind"] == "sem" for a in open_):
                if len(open_) < limit:
                    continue
                a = max(open_, key=lambda a: a["end"])
            elif b["kind"] == "read":
                writers = [a for a in open_ if a["kind"] != "read"]
                if not writers:
                    continue
                a = max(writers, key=lambda a: a["end"])
            else:
                a = max(open_, key=lambda a: a["end"])
            found.append((a, b, b["start"], min(a["end"], b["end"])))
    return found


def fence_faults(sessions):
    """Fenced writes accepted out of order: an accepted write below the
    highest fence (the register must never), an accepted write with a fence
    another section already wrote with, and a section that began after
    another one of its name had ended with a fence not above it."""
    bad = []
    owner = {}
    for s in sorted((s for s in sessions if s["kind"] == "excl"), key=lambda s: s["start"]):
        for p in s["puts"]:
            if not p["ok"]:
                continue
            if p["fence"] < p["highest_before"]:
                bad.append(("accepted below the highest fence", s, p["t"]))
            o = owner.get((s["name"], p["fence"]))
            if o is not None and o != s["sid"]:
                bad.append(("accepted a fence another section wrote with", s, p["t"]))
            owner[(s["name"], p["fence"])] = s["sid"]
    by_name = {}
    for s in sessions:
        if s["kind"] == "excl" and s["fence"] > 0:
            by_name.setdefault(s["name"], []).append(s)
    for group in by_name.values():
        group.sort(key=lambda s: s["start"])
        for i, b in enumerate(group):
            before = [a for a in group[:i] if a["end"] < b["start"]]
            if before:
                top = max(before, key=lambda a: a["fence"])
                if b["fence"] <= top["fence"]:
                    bad.append(("fence not above an earlier holder's", b, b["start"]))
    return bad


def lost_updates(sessions):
    """Acknowledged increments of the read-modify-write counter that the
    final value does not show."""
    lost = 0
    by_name = {}
    for s in sessions:
        for p in s["puts"]:
            by_name.setdefault(s["name"], []).append(p)
    for puts in by_name.values():
        ok = sorted((p for p in puts if p["ok"]), key=lambda p: p["t"])
        if ok:
            lost += max(0, len(ok) - ok[-1]["value"])
    return lost


# ---------------------------------------------------- linearizability

class Op:
    __slots__ = ("kind", "hold", "call", "ret", "id")

    def __init__(self, kind, hold, call, ret):
        self.kind, self.hold, self.call, self.ret = kind, hold, call, ret


def mutex_step(state, op):
    if op.kind == "acquire":
        return (True, op.hold) if state is None else (False, state)
    if op.kind == "release":
        return (True, None) if state == op.hold else (False, state)
    if op.kind == "busy":
        return (state is not None, state)
    return (False, state)


def linearizable(ops, max_steps=200000):
    """Wing & Gong's search with Lowe's cache, as Porcupine does it, against
    a mutex. An op whose outcome is unknown has ret = inf: it may take
    effect at any time after its call, or never. Returns True, False, or
    None when the search ran out of steps."""
    if not ops:
        return True
    for i, op in enumerate(ops):
        op.id = i
    entries = []
    for op in ops:
        entries.append((op.call, 0, op))
        entries.append((op.ret, 1, op))
    entries.sort(key=lambda e: (e[0], e[1]))
    # a doubly linked list of the entries; index n is its head
    n = len(entries)
    head = n
    nxt = [i + 1 for i in range(n)] + [0]
    nxt[n - 1] = None
    prv = [i - 1 for i in range(n)] + [None]
    prv[0] = head
    call_idx, ret_idx = {}, {}
    for i, (_, is_ret, op) in enumerate(entries):
        (ret_idx if is_ret else call_idx)[op.id] = i

    def lift(i):
        for j in (i, ret_idx[entries[i][2].id]):
            p, q = prv[j], nxt[j]
            nxt[p] = q
            if q is not None:
                prv[q] = p

    def unlift(i):
        for j in (ret_idx[entries[i][2].id], i):
            p, q = prv[j], nxt[j]
            nxt[p] = j
            if q is not None:
                prv[q] = j

    state, linearized, cache, stack = None, 0, set(), []
    cur = nxt[head]
    steps = 0
    while cur is not None:
        steps += 1
        if steps > max_steps:
            return None
        _, is_ret, op = entries[cur]
        if not is_ret:
            ok, new = mutex_step(state, op)
            if ok:
                bits = linearized | (1 << op.id)
                if (bits, new) not in cache:
                    cache.add((bits, new))
                    stack.append((cur, state))
                    state, linearized = new, bits
                    lift(cur)
                    cur = nxt[head]
                    continue
            cur = nxt[cur]
        else:
            if op.ret == INF:
                return True  # every op with a known end is linearized
            if not stack:
                return False
            cur, state = stack.pop()
            linearized &= ~(1 << entries[cur][2].id)
            unlift(cur)
            cur = nxt[cur]
    return True


def history_ops(cell, sessions):
    """The acquire/release history of each exclusive lock name. Busy answers
    are left out: with fair waiting a lock that is free for an instant while
    it is handed to the head of its line is rightly busy to others, which a
    plain mutex cannot express."""
    by_client = {s["client"]: s for s in sessions if s["kind"] == "excl"}
    per_name = {}
    for r in cell["procs"]:
        if r["kind"] != "excl" or r["t1"] is None:
            continue
        ops = per_name.setdefault(r["name"], [])
        s = by_client.get(r["hold"])
        if s is not None:
            ops.append(Op("acquire", r["hold"], r["t0"], s["start"]))
            if r["rc"] == 0:
                ops.append(Op("release", r["hold"], s["end"], r["t1"]))
            else:
                ops.append(Op("release", r["hold"], s["start"], INF))
        elif r["rc"] == 75:
            continue  # busy: see below
        else:
            ops.append(Op("acquire", r["hold"], r["t0"], INF))
            ops.append(Op("release", r["hold"], r["t0"], INF))
    # the acquire/renew/release script's calls, from the register's OP lines
    rounds = {}
    for e in cell["events"]:
        if e["ev"] == "op":
            rounds.setdefault(e["client"], []).append(e)
    for hold, evs in rounds.items():
        name = cell["name"]
        ops = per_name.setdefault(name, [])
        acq = {e["phase"]: e for e in evs if e["op"] == "acquire"}
        rel = {e["phase"]: e for e in evs if e["op"] == "release"}
        if "invoke" not in acq:
            continue
        t0 = acq["invoke"]["t"]
        if "ok" in acq:
            ops.append(Op("acquire", hold, t0, acq["ok"]["t"]))
            if "rc0" in rel and "invoke" in rel:
                ops.append(Op("release", hold, rel["invoke"]["t"], rel["rc0"]["t"]))
            else:
                ops.append(Op("release", hold, acq["ok"]["t"], INF))
        elif "rc75" in acq:
            continue
        else:
            ops.append(Op("acquire", hold, t0, INF))
            ops.append(Op("release", hold, t0, INF))
    return per_name


# ---------------------------------------------------------------- figures

def percentile(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, math.ceil(p / 100 * len(xs)) - 1))
    return xs[k]


def blinding_faults(cell):
    """When a fault made a server unreadable (stopped, killed, failed over):
    a renewal it took just before cannot have been read back."""
    return [f["start"] for f in cell["faults"]
            if f["what"].startswith(("SIGSTOP server", "kill server", "failover"))]


def lease_end(cell, token):
    """When the lease of a token ended on the servers: the time the last
    copy a majority needs expired (from the leases read every few tens of
    milliseconds). Where a fault made the server unreadable before the copy
    read last expired, a renewal may have landed unseen in between: the
    lease then ends at the latest a TTL after the fault began."""
    ends, last = {}, {}
    for t, server, tok, pttl in cell["leases"]:
        if tok == token and pttl > 0:
            ends[server] = t + pttl / 1000
            last[server] = t
    if not ends:
        return None
    for server in ends:
        for b in blinding_faults(cell):
            if last[server] <= b <= ends[server]:
                ends[server] = max(ends[server], b + cell.get("ttl", 0))
    need = cell["quorum"]
    xs = sorted(ends.values(), reverse=True)
    return xs[need - 1] if len(xs) >= need else xs[-1]


def analyse(cell):
    sessions = sessions_of(cell["events"])
    limit = cell.get("limit", 1)
    ov = overlaps(sessions, limit)
    ff = fence_faults(sessions)
    starts = sorted(s["start"] for s in sessions)
    handoffs = max(0, len(starts) - 1)
    # the delay from a lease's end to the command being signalled
    delays = []
    tokens = cell.get("tokens", {})
    stopped = {r["hold"] for r in cell["procs"] if r.get("terminated")}
    for s in sessions:
        if s["ended"] or s["client"] not in tokens or s["client"] in stopped:
            continue
        end = lease_end(cell, tokens[s["client"]])
        if end is None:
            continue
        signalled = s["sig"] if s["sig"] is not None else s["end"]
        if signalled > end + 5:  # the section ended at the cell's end, not by a signal
            continue
        delays.append((signalled - end) * 1000)
    # time from a fault's end to the next grant
    recoveries = []
    for f in cell["faults"]:
        later = [t for t in starts if t >= f["end"]]
        recoveries.append((later[0] - f["end"]) * 1000 if later else None)
    lin = {}
    for name, ops in history_ops(cell, sessions).items():
        r = linearizable(ops)
        lin[name] = "ok" if r else ("violation" if r is False else "unknown")
    ops_count = len(cell["procs"]) + sum(1 for e in cell["events"]
                                         if e["ev"] == "op" and e["phase"] == "invoke")
    return {
        "operations": ops_count,
        "sections": len(sessions),
        "handoffs": handoffs,
        "overlaps": len(ov),
        "longest_overlap_ms": round(max(((e - s) * 1000 for _, _, s, e in ov), default=0), 1),
        "out_of_order": len(ff),
        "out_of_order_what": sorted({w for w, _, _ in ff}),
        "lost_updates": lost_updates(sessions),
        "stale_writes_refused": sum(1 for s in sessions for p in s["puts"] if not p["ok"]),
        "signal_delay_ms": [round(d, 1) for d in delays],
        "signal_delay_p99_ms": None if not delays else round(percentile(delays, 99), 1),
        "recovery_ms": [None if r is None else round(r, 1) for r in recoveries],
        "linearizable": lin,
        "acquire_without_answer": sum(1 for e in cell["events"] if e["ev"] == "op" and e["phase"] == "noanswer"),
        "bad_register_lines": sum(1 for e in cell["events"] if e["ev"] == "bad"),
        "lost_exits": sum(1 for r in cell["procs"] if r["rc"] == 74),
        "busy_exits": sum(1 for r in cell["procs"] if r["rc"] == 75),
        "unavailable_exits": sum(1 for r in cell["procs"] if r["rc"] == 69),
        "_sessions": sessions,
        "_overlaps": ov,
    }


# ---------------------------------------------------------------- SVG

def timeline_svg(cell, result, title):
    sessions = result["_sessions"]
    if not sessions:
        return None
    t0 = min([s["start"] for s in sessions] + [f["start"] for f in cell["faults"]])
    t1 = max([s["end"] for s in sessions] + [f["end"] for f in cell["faults"]])
    span = max(t1 - t0, 0.001)
    clients = sorted({s["client"].split(".")[0] for s in sessions})
    row = {c: i for i, c in enumerate(clients)}
    W, left, top, rh = 1000, 90, 40, 26
    H = top + rh * (len(clients) + 1) + 40

    def x(t):
        return left + (t - t0) / span * (W - left - 20)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="11">',
           f'<text x="10" y="18" font-size="13">{html.escape(title)}</text>']
    for f in cell["faults"]:
        out.append(f'<rect x="{x(f["start"]):.1f}" y="{top - 6}" width="{max(2, x(f["end"]) - x(f["start"])):.1f}" '
                   f'height="{rh * len(clients) + 12}" fill="#f5c542" opacity="0.35"/>')
        out.append(f'<text x="{x(f["start"]):.1f}" y="{top - 10}">{html.escape(f["what"])}</text>')
    for c, i in row.items():
        out.append(f'<text x="10" y="{top + i * rh + 15}">{html.escape(c)}</text>')
    palette = ["#4e79a7", "#59a14f", "#9c755f", "#b07aa1", "#76b7b2", "#edc948"]
    for s in sessions:
        i = row[s["client"].split(".")[0]]
        color = palette[i % len(palette)] if s["ended"] else "#888"
        out.append(f'<rect x="{x(s["start"]):.1f}" y="{top + i * rh + 3}" '
                   f'width="{max(1, x(s["end"]) - x(s["start"])):.1f}" height="{rh - 8}" fill="{color}">'
                   f'<title>{html.escape(s["client"])} fence {s["fence"]} '
                   f'{"ended" if s["ended"] else "killed"}</title></rect>')
        if s["sig"] is not None:
            out.append(f'<line x1="{x(s["sig"]):.1f}" x2="{x(s["sig"]):.1f}" y1="{top + i * rh}" '
                       f'y2="{top + i * rh + rh - 2}" stroke="black" stroke-width="2"/>')
    y = top + rh * len(clients) + 4
    out.append(f'<text x="10" y="{y + 14}">overlaps</text>')
    for _, _, s, e in result["_overlaps"]:
        out.append(f'<rect x="{x(s):.1f}" y="{y + 2}" width="{max(2, x(e) - x(s)):.1f}" height="{rh - 8}" fill="#e15759"/>')
    out.append(f'<text x="{left}" y="{H - 10}">0 s</text>'
               f'<text x="{W - 60}" y="{H - 10}">{span:.2f} s</text>'
               f'<text x="{left + 80}" y="{H - 10}">bars: critical sections (grey: killed), '
               f'black ticks: SIGTERM, yellow: faults, red: overlaps</text>')
    out.append("</svg>")
    return "\n".join(out)
