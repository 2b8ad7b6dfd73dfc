#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite.
# Prints one closing line "N passed, N failed" (and skipped, if any).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tools/setup.sh
status=0
meson test -C build --print-errorlogs --num-processes 1 "$@" || status=$?
# meson's own summary, restated in the plain form CI reads.
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "TIMEOUT": 0, "ERROR": 0, "EXPECTEDFAIL": 0, "UNEXPECTEDPASS": 0}
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        r = json.loads(line).get("result", "ERROR")
        counts[r] = counts.get(r, 0) + 1
passed = counts["OK"] + counts["EXPECTEDFAIL"]
failed = counts["FAIL"] + counts["TIMEOUT"] + counts["ERROR"] + counts["UNEXPECTEDPASS"]
line = f"{passed} passed, {failed} failed"
if counts["SKIP"]:
    line += f", {counts['SKIP']} skipped"
print(line)
PY
exit $status
