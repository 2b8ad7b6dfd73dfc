#!/usr/bin/env python3
"""The layering of lanecast's sources, as each folder's README.md states it.

Every folder of algos/, ipc/, engine/, drivers/, apps/ and include/ that holds
sources has a README.md: a paragraph saying what lives there, and a line

    May include: PREFIX, PREFIX, ...

naming the folders (or single headers) its files may #include "..." from -
its own folder is always allowed - and the word DPDK if they may include
DPDK's headers (<rte_*.h>). This test reads those lines and checks every
#include of every source against them, so the rules in the READMEs are the
rules the code follows (and no source grows past MAX_LINES): algos/ stays pure, include/lanecast/ names nothing
of the libraries' insides, ipc/ knows no engine, a command reaches into the
engine only through the headers its README lists.

usage: layers_test.py SOURCE_ROOT
"""
import os
import re
import sys

TOPS = ["algos", "ipc", "engine", "drivers", "apps", "include"]
SOURCE = (".h", ".cc")
# Files of one job stay small: a source past this many lines is split by
# responsibility (tests are not held to it).
MAX_LINES = 550


def rules_of(root, folder):
    """(prefixes, dpdk) from FOLDER/README.md, or an error string."""
    path = os.path.join(root, folder, "README.md")
    if not os.path.isfile(path):
        return f"{folder}/ has no README.md saying what lives there and what it may include"
    text = open(path, encoding="utf-8").read()
    prose = [l for l in text.splitlines() if l.strip() and not l.startswith("#") and not l.startswith("May include:")]
    if not prose:
        return f"{folder}/README.md says nothing of what lives there"
    lines = [l for l in text.splitlines() if l.startswith("May include:")]
    if len(lines) != 1:
        return f"{folder}/README.md needs exactly one 'May include:' line"
    items = [i.strip() for i in lines[0][len("May include:"):].split(",") if i.strip()]
    dpdk = "DPDK" in items
    prefixes = [i for i in items if i != "DPDK"] + [folder]
    for p in prefixes:
        if not os.path.exists(os.path.join(root, p)):
            return f"{folder}/README.md allows {p}, which does not exist"
    return prefixes, dpdk


def allowed(target, prefixes):
    return any(target == p or target.startswith(p.rstrip("/") + "/") for p in prefixes)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    problems, files, includes = [], 0, 0
    for top in TOPS:
        for folder, _, names in os.walk(os.path.join(root, top)):
            sources = sorted(n for n in names if n.endswith(SOURCE))
            if not sources:
                continue
            rel = os.path.relpath(folder, root)
            rules = rules_of(root, rel)
            if isinstance(rules, str):
                problems.append(rules)
                continue
            prefixes, dpdk = rules
            for name in sources:
                files += 1
                path = os.path.join(folder, name)
                lines = sum(1 for _ in open(path, encoding="utf-8", errors="replace"))
                if lines > MAX_LINES:
                    problems.append(f"{rel}/{name} has {lines} lines, more than {MAX_LINES}: split it by what its parts do")
                for n, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if m:
                        includes += 1
                        inc = m.group(1)
                        target = "include/" + inc if inc.startswith("lanecast/") else inc
                        if not allowed(target, prefixes):
                            problems.append(f"{rel}/{name}:{n} includes \"{inc}\": {rel}/README.md does not allow it")
                    elif not dpdk and re.match(r"\s*#\s*include\s+<rte_", line):
                        problems.append(f"{rel}/{name}:{n} includes a DPDK header: {rel}/README.md does not allow DPDK")
    for p in problems:
        print("FAIL:", p)
    print(f"layers: {files} files, {includes} includes checked against their folders' README.md; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
