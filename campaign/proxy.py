#!/usr/bin/env python3
"""A small TCP fault proxy, in Toxiproxy's vocabulary.

  proxy.py CONTROL_PORT LISTEN_HOST LISTEN_PORT:UPSTREAM_HOST:UPSTREAM_PORT...

Each listener forwards to its upstream. A line on the control port (on
127.0.0.1) sets the toxic of one listener (or of every one with `*`):

  latency PORT MS JITTER_MS   every chunk waits MS +- JITTER_MS, both ways
  slicer PORT SIZE DELAY_MS   the server's replies drip SIZE bytes at a time
  reset_peer PORT             every connection is reset (RST) now, and new
                              ones at once, until cleared
  timeout PORT                a black hole: data is dropped both ways and the
                              connections stay open, until cleared
  clear PORT                  no toxic
Every command is answered with OK.
"""
import random
import socket
import struct
import sys
import threading
import time

toxics = {}  # listen port -> (kind, args)
conns = {}  # listen port -> set of sockets
lock = threading.Lock()


def reset(sock):
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()
    except OSError:
        pass


def pump(port, src, dst, downstream, rng):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            kind, args = toxics.get(port, (None, ()))
            if kind == "timeout":
                continue
            if kind == "reset_peer":
                break
            if kind == "latency":
                ms, jitter = args
                time.sleep(max(0.0, ms + rng.uniform(-jitter, jitter)) / 1000)
            if kind == "slicer" and downstream:
                size, delay = args
                for i in range(0, len(data), size):
                    dst.sendall(data[i:i + size])
                    time.sleep(delay / 1000)
                continue
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            if toxics.get(port, (None,))[0] == "reset_peer":
                reset(s)
            else:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        with lock:
            conns.get(port, set()).discard(src)
            conns.get(port, set()).discard(dst)


def listener(host, port, up_host, up_port):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind((host, port))
    srv.listen(128)
    rng = random.Random(port)
    while True:
        client, _ = srv.accept()
        if toxics.get(port, (None,))[0] == "reset_peer":
            reset(client)
            continue
        try:
            upstream = socket.create_connection((up_host, up_port), timeout=2)
            upstream.settimeout(None)
        except OSError:
            reset(client)
            continue
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with lock:
            conns.setdefault(port, set()).update((client, upstream))
        threading.Thread(target=pump, args=(port, client, upstream, False, rng), daemon=True).start()
        threading.Thread(target=pump, args=(port, upstream, client, True, rng), daemon=True).start()


def control(port, listen_ports):
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)
    print("ready", flush=True)
    while True:
        c, _ = srv.accept()
        f = c.makefile("rw")
        for line in f:
            w = line.split()
            if len(w) < 2:
                continue
            ports = listen_ports if w[1] == "*" else [int(w[1])]
            for p in ports:
                if w[0] == "clear":
                    toxics.pop(p, None)
                elif w[0] == "latency":
                    toxics[p] = ("latency", (float(w[2]), float(w[3])))
                elif w[0] == "slicer":
                    toxics[p] = ("slicer", (int(w[2]), float(w[3])))
                elif w[0] == "timeout":
                    toxics[p] = ("timeout", ())
                elif w[0] == "reset_peer":
                    toxics[p] = ("reset_peer", ())
                    with lock:
                        victims = list(conns.get(p, ()))
                    for s in victims:
                        reset(s)
            f.write("OK\n")
            f.flush()
        c.close()


def main():
    control_port, host = int(sys.argv[1]), sys.argv[2]
    ports = []
    for spec in sys.argv[3:]:
        lp, uh, up = spec.split(":")
        ports.append(int(lp))
        threading.Thread(target=listener, args=(host, int(lp), uh, int(up)), daemon=True).start()
    control(control_port, ports)


if __name__ == "__main__":
    main()
