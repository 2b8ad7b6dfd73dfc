#!/usr/bin/env python3
"""Writes a pcapng capture of UDP datagrams with nanosecond time stamps
(an interface description block with if_tsresol = 9), built by hand so no
capture tool is needed: lanecast replay's second test file.

usage: make_pcapng.py OUT.pcapng [--packets N] [--gap-us G] [--seed S]

Packets are Ethernet / IPv4 / UDP from 10.1.0.1:5000 to 239.1.2.3:6000 with
payloads of 0..1400 bytes (each starts with its number), spaced G us apart
with jitter of a few hundred nanoseconds, so the nanoseconds matter; every
tenth packet is not UDP (ARP), to be skipped.
"""
import argparse
import random
import struct


def block(btype, body):
    pad = (-len(body)) % 4
    total = 12 + len(body) + pad
    return struct.pack("<II", btype, total) + body + b"\0" * pad + struct.pack("<I", total)


def option(code, value):
    return struct.pack("<HH", code, len(value)) + value + b"\0" * ((-len(value)) % 4)


def ip_checksum(h):
    s = sum(struct.unpack("!10H", h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(payload):
    eth = bytes.fromhex("01005e010203") + bytes.fromhex("020000000001") + b"\x08\x00"
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(payload), 0, 0x4000, 8, 17, 0,
                     bytes([10, 1, 0, 1]), bytes([239, 1, 2, 3]))
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 5000, 6000, 8 + len(payload), 0)
    return eth + ip + udp + payload


def arp_frame():
    return bytes.fromhex("ffffffffffff020000000001") + b"\x08\x06" + bytes(28)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--packets", type=int, default=5000)
    ap.add_argument("--gap-us", type=float, default=200)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    shb = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + option(0, b""))
    idb = block(0x00000001, struct.pack("<HHI", 1, 0, 262144) + option(9, bytes([9])) + option(0, b""))
    t = 1_700_000_000_000_000_000  # ns since the epoch
    out = [shb, idb]
    for i in range(a.packets):
        if i % 10 == 9:
            frame = arp_frame()
        else:
            size = rng.choice([0, 8, 64, 200, 512, 1000, 1400, rng.randrange(8, 1401)])
            body = struct.pack("<Q", i) + bytes(rng.randrange(256) for _ in range(max(0, size - 8)))
            frame = udp_frame(body[:size] if size < 8 else body)
        t += int(a.gap_us * 1000) + rng.randrange(-300, 301)
        out.append(block(0x00000006, struct.pack("<IIIII", 0, t >> 32, t & 0xFFFFFFFF, len(frame), len(frame))
                         + frame + b"\0" * ((-len(frame)) % 4) + option(0, b"")))
    with open(a.out, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    main()
