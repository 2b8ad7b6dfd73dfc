#!/usr/bin/env python3
"""Idle TCP connections to HOST:PORT: N opened and held, saying nothing,
each one the server closes opened again at once, for S seconds. Prints
"open" once N are open (or after 5 s with as many as it got), and at the
end how many it opened in all.

  idle_connections.py HOST PORT N S
"""
import select
import socket
import sys
import time

host, port, n, wait = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])


def dial():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.connect_ex((host, port))
    return s


conns = [dial() for _ in range(n)]
opened = n
print("open", flush=True)
deadline = time.monotonic() + wait
while time.monotonic() < deadline:
    ready, _, _ = select.select(conns, [], [], 0.05)
    for s in ready:
        try:
            closed = s.recv(64) == b""
        except OSError:
            closed = True
        if closed:
            s.close()
            conns.remove(s)
            conns.append(dial())
            opened += 1
print("opened %d connections" % opened, flush=True)
