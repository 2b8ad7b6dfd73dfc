#!/usr/bin/env bash
# How long N member processes take to form their group, by bootstrap:
# discovery (hellos on the wire) and pmix (Open MPI's mpirun and its PMIx
# key-value store). One member per namespace of tools/testbed.sh (links
# unshaped: a high rate), each running `lanecast run` for one 1-byte
# broadcast; every member prints where its time went (lanecast run's
# "# group formed" line). Per run, the table gives:
#
#   wall       launching the members (mpirun included) -> the last formed
#   engine     DPDK start-up in the member (EAL), the largest over members
#   pools      its buffer pools; port: opening its port
#   bootstrap  the bootstrap step as the member saw it, waiting for slower
#              members included
#   exchange   the last member entering the bootstrap -> the last leaving
#              it: the exchange itself once everyone is there
#   start      handing the member to a polling core
#   init/fence PMIx_Init and put + fence (pmix), the largest over members
#
# Members progress in calls by default (--progress calls: no polling
# thread, the member's one thread may run on any CPU), as bench --testbed
# runs them; --progress cores gives each a polling core.
#
# usage: tests/bench/bootstrap_time.sh [--nodes N] [--runs K] [--max-message SIZE]
#          [--progress cores|calls] [--lanecast PATH]
# Needs root, iproute2 and openmpi-bin (mpirun), and lanecast built with PMIx.
set -euo pipefail

nodes=16 runs=3 max_message="" progress=calls
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --runs) runs=$2; shift ;;
    --max-message) max_message=$2; shift ;;
    --progress) progress=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "bootstrap_time: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
command -v mpirun >/dev/null || { echo "bootstrap_time: needs mpirun (apt-get install openmpi-bin)" >&2; exit 2; }
[[ -x $lanecast ]] || { echo "bootstrap_time: build lanecast first ($lanecast)" >&2; exit 2; }

tag=lcbt$(($$ % 100000))
work=$(mktemp -d)
cleanup() {
  local i
  for ((i = 0; i < nodes; i++)); do ip netns pids "${tag}n$i" 2>/dev/null | xargs -r kill -9 2>/dev/null || true; done
  "$repo/tools/testbed.sh" down --name "$tag"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$repo/tools/testbed.sh" up "$nodes" --rate 10000 --name "$tag" >/dev/null

for boot in discovery pmix; do
  {
    printf '[group]\nname = "bt%d"\nid = 41\nbootstrap = "%s"\nbootstrap_timeout_ms = 60000\n' "$nodes" "$boot"
    [[ -n $max_message ]] && printf 'max_message = "%s"\n' "$max_message"
    for ((i = 0; i < nodes; i++)); do
      printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0"]\n' "$i"
    done
  } >"$work/$boot.toml"
done
run_args=(--sizes 1 --iters 1 --yield-when-idle --progress "$progress")

# Under mpirun each member writes its own output (an app context per
# namespace; timeout --foreground stays in the group mpirun kills).
cat >"$work/member.sh" <<'EOF'
#!/bin/sh
ns=$1 out=$2
shift 2
exec ip netns exec "$ns" timeout --foreground 120 "$@" >"$out" 2>&1
EOF
chmod +x "$work/member.sh"

launch() {  # BOOTSTRAP RUN: start every member, wait for all; prints the launch time
  local boot=$1 run=$2 i t0 app=()
  rm -f "$work/$boot.$run".*.out
  t0=$(date +%s.%N)
  if [[ $boot == discovery ]]; then
    local started=()
    for ((i = 0; i < nodes; i++)); do
      timeout 120 ip netns exec "${tag}n$i" "$lanecast" run --config "$work/$boot.toml" --rank "$i" "${run_args[@]}" \
        >"$work/$boot.$run.$i.out" 2>&1 &
      started+=($!)
    done
    for p in "${started[@]}"; do wait "$p" || true; done
  else
    for ((i = 0; i < nodes; i++)); do
      ((i)) && app+=(:)
      app+=(-np 1 "$work/member.sh" "${tag}n$i" "$work/$boot.$run.$i.out" "$lanecast" run --config "$work/$boot.toml"
        "${run_args[@]}")
    done
    PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=v0 \
      timeout 150 ip netns exec "${tag}n0" mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include "${app[@]}" \
      >"$work/$boot.$run.mpirun" 2>&1 || true
  fi
  echo "$t0"
}

# One row from the members' "# group formed" lines (fields by keyword).
row() {  # BOOTSTRAP RUN LAUNCH_TIME
  cat "$work/$1.$2".*.out | awk -v boot="$1" -v run="$2" -v t0="$3" -v n="$nodes" '
    / yes$/ { ok++ }
    /^# group formed/ {
      gsub(/[(),:]/, " ")
      for (i = 1; i <= NF; i++) {
        if ($i == "at") T = $(i + 1)
        if ($i == "engine") E = $(i + 2)
        if ($i == "pools") P = $(i + 1)
        if ($i == "port") Q = $(i + 1)
        if ($i == "bootstrap") B = $(i + 1)
        if ($i == "init") I = $(i + 1)
        if ($i == "fence") F = $(i + 1)
        if ($i == "start" && $(i - 1) != "engine") S = $(i + 1)
      }
      formed++
      end = T - S / 1000; begin = end - B / 1000
      if (formed == 1 || T > lastT) lastT = T
      if (formed == 1 || end > lastEnd) lastEnd = end
      if (formed == 1 || begin > lastBegin) lastBegin = begin
      if (E > mE) mE = E; if (P > mP) mP = P; if (Q > mQ) mQ = Q; if (B > mB) mB = B
      if (S > mS) mS = S; if (I > mI) mI = I; if (F > mF) mF = F
    }
    END {
      if (formed < n) { printf "%-9s %3d  only %d of %d members formed the group\n", boot, run, formed, n; exit }
      init = boot == "pmix" ? sprintf("%7.1f", mI) : "      -"
      fence = boot == "pmix" ? sprintf("%7.1f", mF) : "      -"
      printf "%-9s %3d %8.1f %8.1f %8.1f %6.1f %9.1f %8.1f %6.1f %s %s %5d/%d\n", boot, run, (lastT - t0) * 1000,
             mE, mP, mQ, mB, (lastEnd - lastBegin) * 1000, mS, init, fence, ok, n
    }'
}

echo "# $nodes member processes, one per namespace, on $(nproc) CPUs; max_message ${max_message:-16M (default)}; progress in $progress; ms"
printf "%-9s %3s %8s %8s %8s %6s %9s %8s %6s %7s %7s %8s\n" bootstrap run wall engine pools port bootstrap exchange \
  start init fence verified
for ((run = 1; run <= runs; run++)); do
  for boot in discovery pmix; do
    t0=$(launch "$boot" "$run")
    row "$boot" "$run" "$t0" | tee -a "$work/rows"
    if [[ $(tail -1 "$work/rows" | awk '{ print $NF }') != "$nodes/$nodes" ]]; then
      echo "#   $boot run $run: not every member formed the group and verified its broadcast:"
      grep -h -m1 "lanecast run:\|FAILED\|rror" "$work/$boot.$run".*.out "$work/$boot.$run.mpirun" 2>/dev/null |
        head -3 | sed 's/^/#     /'
    fi
  done
done
echo
echo "# median of $runs runs"
for boot in discovery pmix; do
  awk -v b="$boot" '$1 == b && $NF ~ /\// && NF == 12 { n++; for (k = 3; k <= 11; k++) v[k, n] = $k }
    END {
      if (!n) exit
      for (k = 3; k <= 11; k++) {
        for (i = 1; i <= n; i++) a[i] = v[k, i]
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
        m[k] = a[int((n + 1) / 2)]
      }
      printf "%-9s %3s %8s %8s %8s %6s %9s %8s %6s %7s %7s\n", b, "med", m[3], m[4], m[5], m[6], m[7], m[8], m[9], m[10], m[11]
    }' "$work/rows"
done
