#!/usr/bin/env python3
"""The fenced register: a tiny line-protocol TCP server that the campaign's
critical sections write to.

It keeps, per lock name, the highest fence it has accepted and a counter
(the read-modify-write set of the lost-update check), and refuses a write
whose fence is lower than the highest one seen, as a storage that honours
REDLOCK_FENCE would. Every request and every closed connection is logged
with CLOCK_MONOTONIC (one clock for every process on the machine), so the
checker can tell when a critical section began and when its process was gone.

Requests, one per line:
  START name fence client pid kind hold token
                                     a critical section begins (kind: excl, sem,
                                     read) to hold for `hold` seconds
  GET name                           -> the counter
  PUT name value fence               -> OK, or STALE highest
  SIG what                           the section was signalled
  END                                the section ends
  OP client op phase [arg]           an acquire/renew/release script's history
  WHO name [min]                     -> the pids of the open sections of name
                                     (those to hold for at least min seconds)
  QUIT                               stop the server (after the log is flushed)
A connection that closes after START without END is a section that was killed.
"""
import json
import selectors
import socket
import sys
import time


def main():
    port, log_path = int(sys.argv[1]), sys.argv[2]
    log = open(log_path, "w", buffering=1)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(256)
    srv.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(srv, selectors.EVENT_READ, None)
    highest = {}  # name -> highest accepted fence
    counter = {}  # name -> value
    open_sessions = {}  # conn -> session dict
    conn_id = 0
    print("ready", flush=True)

    def emit(ev):
        log.write(json.dumps(ev, separators=(",", ":")) + "\n")

    def close(conn):
        sess = open_sessions.pop(conn, None)
        if sess is not None and not sess.get("ended"):
            emit({"t": time.monotonic(), "ev": "close", "sid": sess["sid"]})
        sel.unregister(conn)
        conn.close()

    while True:
        for key, _ in sel.select():
            if key.data is None:
                try:
                    conn, _ = srv.accept()
                except OSError:
                    continue
                conn.setblocking(False)
                conn_id += 1
                sel.register(conn, selectors.EVENT_READ, {"buf": b"", "id": conn_id})
                continue
            conn, st = key.fileobj, key.data
            try:
                data = conn.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                close(conn)
                continue
            st["buf"] += data
            while b"\n" in st["buf"]:
                line, st["buf"] = st["buf"].split(b"\n", 1)
                words = line.decode(errors="replace").split()
                if not words:
                    continue
                now = time.monotonic()
                cmd, reply = words[0], "OK"
                if cmd == "START" and not (len(words) >= 6 and words[2].isdigit() and words[4].isdigit()):
                    emit({"t": now, "ev": "bad", "line": line.decode(errors="replace")})
                    reply = "ERR"
                elif cmd == "START":
                    sess = {"sid": st["id"], "name": words[1], "fence": int(words[2] or 0),
                            "client": words[3], "pid": int(words[4]), "kind": words[5],
                            "hold": float(words[6]) if len(words) > 6 else 0.0,
                            "token": words[7] if len(words) > 7 else "-"}
                    open_sessions[conn] = sess
                    sess = dict(sess)
                    open_sessions[conn]["t0"] = now
                    emit({"t": now, "ev": "start", **sess})
                elif cmd == "GET" and len(words) >= 2:
                    reply = str(counter.get(words[1], 0))
                    sess = open_sessions.get(conn)
                    emit({"t": now, "ev": "get", "sid": sess["sid"] if sess else None,
                          "name": words[1], "value": int(reply)})
                elif cmd == "PUT" and len(words) >= 4:
                    name, value, fence = words[1], int(words[2]), int(words[3])
                    top = highest.get(name, 0)
                    sess = open_sessions.get(conn)
                    ok = fence >= top
                    if ok:
                        highest[name] = fence
                        counter[name] = value
                    else:
                        reply = f"STALE {top}"
                    emit({"t": now, "ev": "put", "sid": sess["sid"] if sess else None,
                          "name": name, "value": value, "fence": fence, "ok": ok,
                          "highest_before": top})
                elif cmd == "SIG":
                    sess = open_sessions.get(conn)
                    emit({"t": now, "ev": "sig", "sid": sess["sid"] if sess else None,
                          "what": words[1] if len(words) > 1 else ""})
                elif cmd == "END":
                    sess = open_sessions.get(conn)
                    if sess is not None:
                        sess["ended"] = True
                        emit({"t": now, "ev": "end", "sid": sess["sid"]})
                elif cmd == "OP" and len(words) >= 4:
                    emit({"t": now, "ev": "op", "client": words[1], "op": words[2],
                          "phase": words[3], "arg": words[4] if len(words) > 4 else ""})
                elif cmd == "WHO" and len(words) >= 2:
                    least = float(words[2]) if len(words) > 2 else 0.0
                    pids = [s["pid"] for s in open_sessions.values()
                            if s["name"] == words[1] and not s.get("ended")
                            and s["hold"] - (now - s["t0"]) >= least]
                    reply = " ".join(map(str, pids)) or "-"
                elif cmd == "QUIT":
                    for c in list(open_sessions):
                        close(c)
                    log.close()
                    try:
                        conn.sendall(b"OK\n")
                    except OSError:
                        pass
                    return
                else:
                    reply = "ERR"
                try:
                    conn.sendall((reply + "\n").encode())
                except OSError:
                    pass


if __name__ == "__main__":
    main()
