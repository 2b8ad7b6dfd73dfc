#!/usr/bin/env bash
# README command 2: set up, build, and run the whole test suite.
#
#   tools/test.sh [--sanitize] [--fuzz SECONDS] [--static] [MESON TEST ARGS...]
#
#   --sanitize    also build the suite with ASan + UBSan (build-asan) and run it
#   --fuzz SECS   also build the libFuzzer targets (build-fuzz, clang) and run
#                 each for SECS seconds (tests/fuzz/run.sh)
#   --static      also build the fully static lanecast (build-static,
#                 -Dstatic_binary=true) and run it in an empty root
#                 (tests/static/static_binary_test.sh)
#
# Prints one closing line "N passed, N failed" (and skipped, if any). With
# either option, each part first prints its own such line and the closing
# line sums them; any failing part fails the script. CI (.ci/run) uses both.
# A test of suite `security` that skips (exit 77: not root, a tool missing)
# fails the script: the attack it stands for was not tried. So does the plot
# test: tools/setup.sh installs the python3-matplotlib it needs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

sanitize=0 fuzz_seconds="" static=0
while (($#)); do
  case $1 in
    --sanitize) sanitize=1; shift ;;
    --fuzz) fuzz_seconds=${2:?--fuzz needs a number of seconds}; shift 2 ;;
    --static) static=1; shift ;;
    *) break ;;
  esac
done

if [[ -n $fuzz_seconds ]]; then tools/setup.sh --fuzz; else tools/setup.sh; fi

# Counts the results of meson test logs: prints "passed failed skipped".
count() {
  python3 - "$@" <<'PY'
import json, sys
counts = {}
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line:
            r = json.loads(line).get("result", "ERROR")
            counts[r] = counts.get(r, 0) + 1
passed = counts.get("OK", 0) + counts.get("EXPECTEDFAIL", 0)
failed = sum(counts.get(k, 0) for k in ("FAIL", "TIMEOUT", "ERROR", "UNEXPECTEDPASS"))
print(passed, failed, counts.get("SKIP", 0))
PY
}
# "N passed, N failed" (", N skipped" when some were).
line() { echo "$1 passed, $2 failed$( (($3)) && echo ", $3 skipped")"; }
# Tests that may not skip: a security test that skips where a tool is
# missing would let the suite pass without trying the attack, and the plot
# test stands for the picture tools/demo.sh promises. Prints each skipped
# test of suite security, or whose program is in tests/security/ (such as
# forged_frames in suite net), or the plot test, and fails when there is one
# (tools/setup.sh installs what they need; run as root).
required_skips() {  # BUILD_DIR LOG...
  local dir=$1
  shift
  meson introspect "$dir" --tests | python3 -c '
import json, os, sys
security = {t["name"] for t in json.load(sys.stdin)
            if any(s.split(":")[-1] == "security" for s in t["suite"])
            or any("/tests/security/" in os.path.normpath(c) for c in t["cmd"])}
skipped = []
for path in sys.argv[1:]:
    for line in open(path):
        line = line.strip()
        if line:
            t = json.loads(line)
            if t.get("result") == "SKIP" and (t.get("name") in security or t.get("name") == "plot"):
                skipped.append(t["name"])
for name in skipped:
    if name == "plot":
        print("plot test skipped: Debian\x27s python3-matplotlib is missing (tools/setup.sh installs it)")
    else:
        print(f"security test skipped: {name} (a security test must run: as root, with tools/setup.sh\x27s packages)")
sys.exit(1 if skipped else 0)
' "$@"
}

status=0
meson test -C build --print-errorlogs --num-processes 1 "$@" || status=1
# meson's own summary, restated in the plain form CI reads.
read -r passed failed skipped < <(count build/meson-logs/testlog.json)
required_skips build build/meson-logs/testlog.json || status=1
total=("$passed" "$failed" "$skipped")
if ((sanitize == 0 && static == 0)) && [[ -z $fuzz_seconds ]]; then
  line "$passed" "$failed" "$skipped"
  exit $status
fi
echo "main suite: $(line "$passed" "$failed" "$skipped")"

add() { total=($((total[0] + $1)) $((total[1] + $2)) $((total[2] + $3))); }

if ((sanitize)); then
  # The whole suite (tests/net too: af_packet runs fine under ASan) with
  # AddressSanitizer (LeakSanitizer included) and UBSan; -fno-sanitize-recover
  # makes every UBSan finding abort its test. -O1 -g1 (after debugoptimized's
  # -O2 -g, which keeps asserts on): compiles twice as fast as -O2 -g with the
  # sanitizers and still names file:line. DPDK needs no suppression: it is
  # not built with ASan and maps its memory itself, so ASan neither checks nor
  # reports inside it (mbuf overruns are the fuzzers' job: tests/fuzz).
  if [[ ! -f build-asan/build.ninja ]]; then
    meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined -Db_lundef=false \
      -Dcpp_args='-O1 -g1 -fno-sanitize-recover=all -fno-omit-frame-pointer' >/dev/null
  fi
  ninja -C build-asan -j "${LANECAST_JOBS:-$(nproc)}"
  export UBSAN_OPTIONS=print_stacktrace=1
  # Leaks inside libraries we link but do not build (tools/lsan.supp says which).
  export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp print_suppressions=0"
  asan_status=0
  meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
    --no-suite algos || asan_status=1
  cp build-asan/meson-logs/testlog.json build-asan/meson-logs/testlog-engine.json
  # The model sweeps run 3-10x slower under the sanitizers: one seed instead
  # of three, and without Sweep.LargeMessages (130 s here; the same machines
  # and paths as EdgeSizes and ManySegments, which stay). The release run
  # above keeps them all.
  LANECAST_SEED=1 GTEST_FILTER='-Registered/Sweep.LargeMessages/*' \
    meson test -C build-asan --no-rebuild --print-errorlogs --num-processes 1 --timeout-multiplier 3 \
    --suite algos || asan_status=1
  read -r p f s < <(count build-asan/meson-logs/testlog-engine.json build-asan/meson-logs/testlog.json)
  required_skips build-asan build-asan/meson-logs/testlog-engine.json || asan_status=1
  echo "asan+ubsan: $(line "$p" "$f" "$s")"
  add "$p" "$f" "$s"
  ((asan_status == 0)) || status=1
fi

if [[ -n $fuzz_seconds ]]; then
  fuzz_log=$(mktemp)
  fuzz_status=0
  tests/fuzz/run.sh "$fuzz_seconds" 2>&1 | tee "$fuzz_log" || fuzz_status=1
  read -r p f < <(tail -1 "$fuzz_log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p') || true
  rm -f "$fuzz_log"
  if [[ -z ${p:-} ]]; then p=0 f=1; fi  # it stopped before fuzzing (build, corpus check)
  echo "fuzz: $(line "$p" "$f" 0)"
  add "$p" "$f" 0
  ((fuzz_status == 0 && f == 0)) || status=1
fi

if ((static)); then
  static_status=0
  if [[ ! -f build-static/build.ninja ]]; then
    meson setup build-static -Dstatic_binary=true -Dpmix=disabled >/dev/null || static_status=1
  fi
  # Only the program: the suite is the same code, run above.
  if ((static_status == 0)) && ninja -C build-static -j "${LANECAST_JOBS:-$(nproc)}" apps/lanecast >/dev/null; then
    tests/static/static_binary_test.sh build-static/apps/lanecast || static_status=$?
  else
    echo "static: the build failed"
    static_status=1
  fi
  case $static_status in
    0) echo "static: $(line 1 0 0)"; add 1 0 0 ;;
    77) echo "static: $(line 0 0 1)"; add 0 0 1 ;;
    *) echo "static: $(line 0 1 0)"; add 0 1 0; status=1 ;;
  esac
fi

line "${total[@]}"
exit $status
