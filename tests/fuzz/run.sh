#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz (clang, ASan + UBSan, every
# finding fatal), checks that the committed seed corpus is what
# make_fuzz_corpus writes, and fuzzes each target for SECONDS (default 60),
# all at once. Any crash, sanitizer report, leak, failed check or input
# slower than 30 s fails the run; the input is kept in
# build-fuzz/findings/ and the target's log in build-fuzz/fuzz-<target>.log.
# Ends with a line "N passed, N failed" (targets).
#
# usage: tests/fuzz/run.sh [SECONDS]
# Needs clang-14 and libclang-rt-14-dev: tools/setup.sh --fuzz installs them.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds=${1:-60}
targets=(wire_fuzz node_fuzz stream_fuzz group_file_fuzz shm_fuzz)

if [[ ! -f build-fuzz/build.ninja ]]; then
  # -O1 -g1 (after debugoptimized's -O2 -g): compiles about twice as fast
  # with the sanitizers and still names file:line in every report.
  CXX=clang++-14 meson setup build-fuzz --buildtype=debugoptimized -Dfuzz=enabled \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dcpp_args='-O1 -g1 -fno-sanitize-recover=all -fno-omit-frame-pointer' >/dev/null
fi
# Only what fuzzing needs, not the whole project a second time.
ninja -C build-fuzz -j "${LANECAST_JOBS:-$(nproc)}" tests/fuzz/make_fuzz_corpus "${targets[@]/#/tests/fuzz/}"

# The seeds must be what the generator writes (extra files, such as inputs
# kept from past findings, are allowed).
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
build-fuzz/tests/fuzz/make_fuzz_corpus "$fresh"
for f in "$fresh"/*/*; do
  rel=${f#"$fresh"/}
  if ! cmp -s "$f" "tests/fuzz/corpus/$rel"; then
    echo "tests/fuzz/corpus/$rel differs from what make_fuzz_corpus writes;" \
         "regenerate: build-fuzz/tests/fuzz/make_fuzz_corpus tests/fuzz/corpus" >&2
    exit 1
  fi
done

mkdir -p build-fuzz/findings
pids=()
for t in "${targets[@]}"; do
  # New inputs go to build-fuzz/corpus/<target> (the first directory);
  # the committed seeds are only read.
  mkdir -p "build-fuzz/corpus/$t"
  build-fuzz/tests/fuzz/$t -max_total_time="$seconds" -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/findings/$t-" \
    "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" >"build-fuzz/fuzz-$t.log" 2>&1 &
  pids+=($!)
done
passed=0 failed=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    passed=$((passed + 1))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/fuzz-$t.log")
    echo "fuzz $t: ok, ${runs:-?} inputs in ${seconds} s"
  else
    failed=$((failed + 1))
    echo "fuzz $t: FAILED (build-fuzz/fuzz-$t.log; input in build-fuzz/findings/)"
    # From the first report (the target's own check, a sanitizer's, or
    # libFuzzer's) on: what failed, where, and the input it wrote.
    sed -n '/^[a-z]*_fuzz: \|^==[0-9]*==ERROR\|runtime error:\|^SUMMARY/,$p' "build-fuzz/fuzz-$t.log" | head -60
  fi
done
echo "$passed passed, $failed failed"
((failed == 0))
