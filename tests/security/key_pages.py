#!/usr/bin/env python3
"""Where a process holds a key, read as root would read it: every readable
mapping of /proc/PID/mem is searched for the key's 32 bytes, and each hit's
mapping must carry VmFlags dd (left out of core dumps); the environment the
process was started with (/proc/PID/environ) must not hold the key's hex
digits. Prints what it found, exits 1 on any hit outside a dd mapping, on
no hit at all, or on the digits in the environment.

  key_pages.py PID HEX
"""
import re
import sys

pid, hexkey = sys.argv[1], sys.argv[2].lower()
key = bytes.fromhex(hexkey)
bad = 0

environ = open("/proc/%s/environ" % pid, "rb").read()
if hexkey.encode() in environ.lower():
    print("the key's hex digits are in /proc/%s/environ" % pid)
    bad = 1
else:
    print("environ: no key digits (%d bytes)" % len(environ))

maps = []  # (lo, hi, perms, name, flags)
cur = None
for line in open("/proc/%s/smaps" % pid):
    m = re.match(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$", line)
    if m:
        cur = [int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4), ""]
        maps.append(cur)
    elif line.startswith("VmFlags:") and cur is not None:
        cur[4] = line.split(":", 1)[1].split()

# Under AddressSanitizer (the sanitizer CI build) the process also maps the
# sanitizer's shadow: terabytes of anonymous memory at fixed addresses
# (x86_64: 0x7fff8000 up to 0x10007fff8000) whose bytes say which
# application bytes may be touched - metadata, never a copy of data, and
# far too large to read. Skipped there only, and only whole mappings
# inside that range; an ordinary build maps nothing there.
SHADOW = (0x7FFF8000, 0x10007FFF8000)
asan = any("libasan" in m[3] for m in maps)


def shadow(lo, hi, name):
    return asan and not name and SHADOW[0] <= lo and hi <= SHADOW[1]


hits = 0
with open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for lo, hi, perms, name, flags in maps:
        if perms[0] != "r" or name in ("[vvar]", "[vsyscall]", "[vvar_vclock]") or shadow(lo, hi, name):
            continue
        tail = b""  # the last bytes of the previous chunk: a key across two chunks
        for at in range(lo, hi, 1 << 24):  # 16 MiB at a time
            try:
                mem.seek(at)
                chunk = mem.read(min(1 << 24, hi - at))
            except OSError:
                break
            data = tail + chunk
            base = at - len(tail)
            i = data.find(key)
            while i >= 0:
                hits += 1
                where = "%x (%s %s)" % (base + i, perms, name or "anonymous")
                if "dd" in flags:
                    print("key bytes at %s: dd" % where)
                else:
                    print("key bytes at %s: NOT dd, flags %s" % (where, " ".join(flags)))
                    bad = 1
                i = data.find(key, i + 1)
            tail = chunk[-(len(key) - 1):]
if hits == 0:
    print("the key's bytes are nowhere in the process")
    bad = 1
sys.exit(bad)
