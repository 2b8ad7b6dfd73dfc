#!/usr/bin/env python3
"""An impostor `lanecast daemon`: listens at DIR/control.sock (making DIR,
0755, if it can) as whoever runs it, and reports every byte a client sends
it. Prints "listening" once it listens (or "cannot make DIR: why" and exits
1), then one line per connection: "connection: N bytes"; stops after S
seconds.

  impostor_listener.py DIR S
"""
import os
import select
import socket
import sys
import time

path, wait = sys.argv[1], float(sys.argv[2])
try:
    os.makedirs(path, mode=0o755, exist_ok=True)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    srv.bind(os.path.join(path, "control.sock"))
    os.chmod(os.path.join(path, "control.sock"), 0o666)
    srv.listen(8)
except OSError as e:
    print("cannot make %s: %s" % (path, e.strerror), flush=True)
    sys.exit(1)
print("listening", flush=True)
deadline = time.monotonic() + wait
while time.monotonic() < deadline:
    ready, _, _ = select.select([srv], [], [], 0.1)
    if not ready:
        continue
    c, _ = srv.accept()
    c.settimeout(2)
    got = 0
    try:
        while True:
            d = c.recv(4096)
            if not d:
                break
            got += len(d)
    except (socket.timeout, OSError):
        pass
    print("connection: %d bytes" % got, flush=True)
    c.close()
