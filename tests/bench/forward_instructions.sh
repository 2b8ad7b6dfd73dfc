#!/usr/bin/env bash
# Instructions a forwarded frame costs the measured member of forward_bench
# (rank 1 of a 3-member chain: receive, checks, channel, CRC and copy,
# machine, zero-copy forward, acks), counted by callgrind - deterministic,
# unlike cycles on a shared machine, so two builds compare in one run: this
# build's bench beside another's (a copy of build/tests/bench/forward_bench
# from before a change), with the ratio.
#
# usage: tests/bench/forward_instructions.sh [BASE_FORWARD_BENCH] [SEGMENTS...]
#        (default segments: 64 1400; after tools/setup.sh; needs valgrind)
#
# Only rank 1's poll is counted (--toggle-collect on its out-of-line call,
# measured_poll), over 1 MiB broadcasts for one second of valgrind's time,
# divided by the frames it forwarded. Valgrind runs no AVX-512, so the
# payload's CRC takes the SSE4.2 path here, not the one this CPU would.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bench=build/tests/bench/forward_bench
[[ -x $bench ]] || { echo "build first: tools/setup.sh" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "valgrind missing (apt-get install valgrind)" >&2; exit 2; }
base=""
if (($#)) && [[ ! $1 =~ ^[0-9]+$ ]]; then
  base=$1
  shift
  [[ -x $base ]] || { echo "not an executable: $base" >&2; exit 2; }
fi
segments=("$@")
((${#segments[@]})) || segments=(64 1400)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Instructions per forwarded frame of one bench binary at one segment size.
per_frame() {
  local bin=$1 seg=$2 out frames collected
  out=$(valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" --toggle-collect='*measured_poll*' \
    "$bin" "$seg" 1 1 2>"$work/err") || { grep -v '^==' "$work/err" >&2; return 1; }
  frames=$(awk 'NR == 2 { print $2 }' <<<"$out")
  collected=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$work/err")
  [[ -n $frames && $frames -gt 0 && -n $collected ]] || { echo "no count for $bin at $seg B" >&2; return 1; }
  awk -v c="$collected" -v f="$frames" 'BEGIN { printf "%.1f", c / f }'
}

printf "%-8s %18s %18s %8s\n" segment instructions/frame base ratio
for seg in "${segments[@]}"; do
  ours=$(per_frame "$bench" "$seg")
  theirs=nan ratio=nan
  if [[ -n $base ]]; then
    theirs=$(per_frame "$base" "$seg")
    ratio=$(awk -v a="$ours" -v b="$theirs" 'BEGIN { printf "%.4f", a / b }')
  fi
  printf "%-8s %18s %18s %8s\n" "$seg" "$ours" "$theirs" "$ratio"
done
