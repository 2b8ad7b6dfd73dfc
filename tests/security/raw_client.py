#!/usr/bin/env python3
"""Connections to `lanecast daemon` that the client library would never make
(ipc/protocol.h spelled out with struct): they say nothing, or too little,
or speak another version. Prints the daemon's answer to each: the refusal's
number (ipc::Refusal) and reason, or 'closed' when it hung up saying nothing.

  raw_client.py SOCKET silent N     N connections that never say hello
  raw_client.py SOCKET short        a hello of 10 bytes
  raw_client.py SOCKET version V    a well-formed hello of format V
  raw_client.py SOCKET hold ROLE N S  N well-formed hellos (ROLE 1 publisher,
                                    2 subscriber), each answer printed
                                    ("0 welcomed" or the refusal); then,
                                    reading nothing and mapping nothing,
                                    "hung up" for each connection the daemon
                                    closes within S seconds, "held" for the rest
"""
import select
import socket
import struct
import sys
import time

HELLO = struct.Struct("<IB3xQQ32s")   # version, role, ring sizes, name
WELCOME = struct.Struct("<iIQ192s")   # status, client id, file bytes, reason


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(path)
    return s


def answer(s, timeout=20):
    s.settimeout(timeout)
    try:
        try:
            data = s.recv(4096)
        except ConnectionResetError:  # refused before it read the hello: the answer is still there
            data = s.recv(4096)
    except socket.timeout:
        return "no answer"
    if len(data) != WELCOME.size:
        return "closed" if not data else "bad answer of %d bytes" % len(data)
    status, _, _, reason = WELCOME.unpack(data)
    return "%d %s" % (status, reason.split(b"\0")[0].decode())


def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode == "silent":
        conns = [connect(path) for _ in range(int(sys.argv[3]))]
        print("open", flush=True)
        start = time.monotonic()
        for s in conns:
            print(answer(s), "after %.1f s" % (time.monotonic() - start))
    elif mode == "short":
        s = connect(path)
        s.send(b"\x02" * 10)
        print(answer(s))
    elif mode == "version":
        s = connect(path)
        s.send(HELLO.pack(int(sys.argv[3]), 3, 0, 0, b"raw"))
        print(answer(s))
    elif mode == "hold":
        role, n, wait = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
        welcomed = []
        for i in range(n):
            s = connect(path)
            s.send(HELLO.pack(2, role, 0, 0, b"holder%d" % i))
            a = answer(s)
            print("welcomed" if a.startswith("0 ") else a, flush=True)
            if a.startswith("0 "):
                welcomed.append(s)
        # The memfd came with the welcome and was closed unread (recv takes
        # no descriptors): a client that never maps or reads its memory.
        deadline = time.monotonic() + wait
        while welcomed and time.monotonic() < deadline:
            ready, _, _ = select.select(welcomed, [], [], 0.1)
            for s in ready:
                if s.recv(64) == b"":
                    print("hung up", flush=True)
                    welcomed.remove(s)
        for _ in welcomed:
            print("held", flush=True)
    else:
        sys.exit("unknown mode " + mode)


main()
