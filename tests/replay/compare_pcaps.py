#!/usr/bin/env python3
"""Compares the messages of two captures, read independently of lanecast:
the UDP payloads (or, --whole-frame, the frames) of SOURCE, LOOPS times
over, must equal those of each RECORDED file, in order, byte for byte.

usage: compare_pcaps.py SOURCE RECORDED... [--loops N] [--whole-frame]
Reads pcap (microsecond or nanosecond) and pcapng with Ethernet frames.
Exit 0 when every file matches; prints one line per file.
"""
import argparse
import struct
import sys


def frames(path):
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic == 0x0A0D0D0A:  # pcapng
        at = 0
        while at + 12 <= len(data):
            btype, total = struct.unpack("<II", data[at:at + 8])
            if btype == 6:
                caplen = struct.unpack("<I", data[at + 20:at + 24])[0]
                yield data[at + 28:at + 28 + caplen]
            elif btype == 3:
                plen = struct.unpack("<I", data[at + 8:at + 12])[0]
                yield data[at + 12:at + 12 + plen]
            at += total
        return
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit(f"{path}: not a little-endian pcap or pcapng file")
    at = 24
    while at + 16 <= len(data):
        caplen = struct.unpack("<I", data[at + 8:at + 12])[0]
        yield data[at + 16:at + 16 + caplen]
        at += 16 + caplen


def udp_payload(f):
    if len(f) < 14:
        return None
    at, etype = 12, struct.unpack("!H", f[12:14])[0]
    while etype in (0x8100, 0x88A8):
        at += 4
        etype = struct.unpack("!H", f[at:at + 2])[0]
    ip = f[at + 2:]
    if etype == 0x0800 and len(ip) >= 20 and ip[9] == 17:
        ihl = (ip[0] & 0xF) * 4
        if struct.unpack("!H", ip[6:8])[0] & 0x3FFF:
            return None
        udp = ip[ihl:]
    elif etype == 0x86DD and len(ip) >= 40 and ip[6] == 17:
        udp = ip[40:]
    else:
        return None
    n = struct.unpack("!H", udp[4:6])[0]
    return udp[8:n] if n >= 8 and len(udp) >= n else None


def messages(path, whole):
    out = []
    for f in frames(path):
        m = f if whole else udp_payload(f)
        if m is not None:
            out.append(m)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("recorded", nargs="+")
    ap.add_argument("--loops", type=int, default=1)
    ap.add_argument("--whole-frame", action="store_true")
    a = ap.parse_args()
    want = messages(a.source, a.whole_frame) * a.loops
    bad = 0
    for r in a.recorded:
        got = messages(r, a.whole_frame)
        first = next((i for i, (x, y) in enumerate(zip(want, got)) if x != y), None)
        if len(got) != len(want) or first is not None:
            bad += 1
            print(f"{r}: {len(got)} messages, {len(want)} expected; first difference at "
                  f"{first if first is not None else min(len(got), len(want))}")
        else:
            print(f"{r}: {len(got)} messages, equal to the source's, in order")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
