"""A minimal RESP client for the campaign's own questions to the servers
(PING, INFO, SCAN, PTTL, SENTINEL, CLUSTER). It connects from the
campaign's admin address, which no partition rule matches."""
import socket

ADMIN_SOURCE = "10.77.0.6"


class RespError(Exception):
    pass


class Conn:
    def __init__(self, host, port, timeout=0.5, source=ADMIN_SOURCE):
        self.sock = socket.socket()
        self.sock.settimeout(timeout)
        if source:
            self.sock.bind((source, 0))
        self.sock.connect((host, port))
        self.f = self.sock.makefile("rb")

    def close(self):
        try:
            self.f.close()
            self.sock.close()
        except OSError:
            pass

    def send(self, *cmds):
        out = bytearray()
        for args in cmds:
            out += b"*%d\r\n" % len(args)
            for a in args:
                a = a if isinstance(a, bytes) else str(a).encode()
                out += b"$%d\r\n%s\r\n" % (len(a), a)
        self.sock.sendall(out)

    def read(self):
        line = self.f.readline()
        if not line:
            raise ConnectionError("closed")
        t, rest = line[:1], line[1:-2]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            data = self.f.read(n + 2)[:-2]
            try:
                return data.decode()
            except UnicodeDecodeError:
                return data
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        raise ConnectionError("bad reply")

    def call(self, *args):
        self.send(args)
        r = self.read()
        if isinstance(r, RespError):
            raise r
        return r

    def pipeline(self, cmds):
        self.send(*cmds)
        return [self.read() for _ in cmds]


def call(host, port, *args, timeout=0.5):
    c = Conn(host, port, timeout)
    try:
        return c.call(*args)
    finally:
        c.close()
