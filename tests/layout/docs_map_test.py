#!/usr/bin/env python3
"""docs/architecture.md against the tree, so the map cannot drift:

  - every path it names in backticks (algos/..., engine/..., tests/..., ...)
    exists;
  - every source folder of the engine, the drivers and the commands is named
    in it (a folder added without a word in the map fails);
  - each step of "a data frame's path" - a file and a function in
    backticks - names a function defined in that file.

usage: docs_map_test.py SOURCE_ROOT
"""
import os
import re
import sys

TOPS = ("algos", "ipc", "engine", "drivers", "apps", "include", "tests", "config", "tools", "docs")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    doc_path = os.path.join(root, "docs", "architecture.md")
    doc = open(doc_path, encoding="utf-8").read()
    problems = []

    paths = set(re.findall(r"`((?:%s)/[A-Za-z0-9_./-]*)`" % "|".join(TOPS), doc))
    for p in sorted(paths):
        if "*" not in p and not os.path.exists(os.path.join(root, p.rstrip("/"))):
            problems.append(f"docs/architecture.md names `{p}`, which is not in the tree")

    # Folders are named as a path (`engine/node/`) or, inside their parent's
    # row, by their last part (`node/`).
    named = {p.rstrip("/") for p in paths} | {m for m in re.findall(r"`([a-z_]+)/`", doc)}
    for top in ("engine", "drivers", "apps"):
        for sub in sorted(os.listdir(os.path.join(root, top))):
            full = os.path.join(root, top, sub)
            if not os.path.isdir(full) or not any(n.endswith((".h", ".cc")) for n in os.listdir(full)):
                continue
            if f"{top}/{sub}" not in named and sub not in named and not re.search(r"`%s`" % re.escape(sub), doc):
                problems.append(f"{top}/{sub}/ is not in docs/architecture.md's map")

    steps = re.findall(r"`((?:%s)/[A-Za-z0-9_./-]+\.(?:cc|h))` `([A-Za-z_][A-Za-z0-9_:]*)`" % "|".join(TOPS), doc)
    if len(steps) < 10:
        problems.append(f"docs/architecture.md's frame path names {len(steps)} functions (expected the whole path)")
    for path, fn in steps:
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            continue  # reported above
        text = open(full, encoding="utf-8", errors="replace").read()
        if not re.search(r"(?<![A-Za-z0-9_:])%s\s*\(" % re.escape(fn), text):
            problems.append(f"docs/architecture.md: `{path}` defines no `{fn}`")

    for p in problems:
        print("FAIL:", p)
    print(f"docs map: {len(paths)} paths, {len(steps)} steps of the frame's path checked; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
