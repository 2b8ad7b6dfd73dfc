#!/usr/bin/env bash
# Two independent jobs on one switch: each floods the other's ports with its
# multicast, as a switch without IGMP snooping does.
#
# The testbed of tools/testbed.sh (namespaces, one veth each to one Linux
# bridge, tbf both ways, uplink queue of a host NIC). Job A and job B each run
# N member processes (`lanecast bench --config`), one per namespace:
#   --layout apart   2N nodes, job B on nodes N..2N-1: no link is shared, but
#                    each job's multicast floods the other's downlinks, and
#                    the two share the CPUs (default)
#   --layout shared  both on the same N nodes: every link is shared too
# Neither job is told a rate (rate_control = true, no port_rate_mbit): each
# finds its share. For each size the two start at once and broadcast that
# size K times (--iters, or enough for about 2 s at half the line), after
# --warmup broadcasts; the Linux bridge floods every multicast frame of each
# to every port (it prunes IP multicast only). Each job verifies every byte;
# a job that fails fails the script.
#
# Printed: per run, job and size, the span (the root's posting to the last
# member holding the message, averaged) and MB/s by it as a fraction of the
# line (link_probe's payload rate of one link); what the members counted of
# the other job's frames and of losses. A job alone on the same testbed
# first (--alone 0 skips it), as the baseline. The last table gives each
# job's worst fraction over the runs.
#
# usage: tests/bench/two_jobs.sh [--runs R] [--nodes N] [--layout apart|shared] [--rate MBIT] [--mtu M]
#          [--algo NAME] [--sizes LIST] [--iters K] [--warmup W] [--alone 0|1]
#          [--save DIR] [--lanecast PATH] [--probe PATH]
# --save: every member's output of every run kept in DIR/<run>/<size>/<job>/.
# Needs root and iproute2.
set -euo pipefail

runs=3 nodes=8 layout=apart rate=200 mtu=1500 algo=mcast_chain sizes=1M,8M iters=0 warmup=2 alone=1 save=""
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
probe=$repo/build/tests/bench/link_probe
while (($#)); do
  case $1 in
    --runs) runs=$2; shift ;;
    --nodes) nodes=$2; shift ;;
    --layout) layout=$2; shift ;;
    --rate) rate=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --algo) algo=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --alone) alone=$2; shift ;;
    --save) save=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    --probe) probe=$2; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "two_jobs: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "two_jobs: --runs takes a count from 1, not '$runs'" >&2; exit 2; }
[[ $iters =~ ^[0-9]+$ && $warmup =~ ^[0-9]+$ ]] || { echo "two_jobs: --iters and --warmup take counts" >&2; exit 2; }
case $layout in shared|apart) ;; *) echo "two_jobs: --layout is apart or shared, not '$layout'" >&2; exit 2 ;; esac
[[ $(id -u) -eq 0 ]] || { echo "two_jobs: needs root" >&2; exit 2; }
[[ -x $lanecast ]] || { echo "two_jobs: no lanecast at $lanecast (build first)" >&2; exit 2; }
[[ -x $probe ]] || { echo "two_jobs: no link_probe at $probe (build first)" >&2; exit 2; }
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"

tag=lc2j$(($$ % 10000))
export LANECAST=$lanecast
tb_nodes=$nodes
[[ $layout == apart ]] && tb_nodes=$((2 * nodes))
start_testbed "$repo" "$probe" "$tag" "$tb_nodes" "$rate" "$mtu"
ring=$(ring_devargs "$mtu")

# Job J's group file for messages of MAX bytes: discovery, rates found by
# rate control, one lane.
job_file() {  # J MAX
  local f=$work/job$1.toml i
  {
    printf '[group]\nname = "job%s"\nid = %d\nbootstrap = "discovery"\nbootstrap_timeout_ms = 30000\n' "$1" \
      $((7700 + $(printf '%d' "'$1")))
    printf 'max_message = %d\nrate_control = true\nlanes = 1\n' "$2"
    for ((i = 0; i < nodes; i++)); do
      printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0%s"]\n' "$i" "$ring"
    done
  } >"$f"
  echo "$f"
}

# Broadcasts of SIZE bytes for about 2 s at half the line (at least 5).
iters_for() {  # SIZE_BYTES
  ((iters > 0)) && { echo "$iters"; return; }
  awk -v s="$1" -v line="$line" 'BEGIN { n = int(2 * line * 1e6 / 2 / s); print n < 5 ? 5 : n }'
}

# Runs the jobs named (A, B) at once, SIZE each, in $work/<job>/; prints
# "JOB SIZE_BYTES SPAN_US VERIFIED" from each one's rank 0.
run_jobs() {  # SIZE JOB...
  local size=$1 bytes j pids=() rc=0 k=0
  shift
  bytes=$(size_bytes "$size")
  for j in "$@"; do
    rm -rf "${work:?}/$j"
    mkdir -p "$work/$j"
    local first_node=0
    [[ $j == B && $layout == apart ]] && first_node=$nodes
    run_members "$lanecast" "$tag" "$nodes" "$(job_file "$j" "$bytes")" "$work/$j" \
      --algo "$algo" --sizes "$size" --iters "$(iters_for "$bytes")" --warmup "$warmup" --counters \
      >"$work/$j/members.log" 2>&1 &
    pids+=($!)
  done
  for j in "$@"; do
    wait "${pids[k]}" || { rc=1; echo "# job $j failed:" >&2; cat "$work/$j/members.log" >&2; }
    k=$((k + 1))
    awk -v a="$algo" '$1 == a && NF >= 9 { print $9, $8 }' "$work/$j/rank0.out" |
      while read -r span ok; do echo "$j $bytes $span $ok"; done
  done
  return $rc
}

# What a job's members counted, summed over its ranks: the other job's frames
# that reached them (the kernel's filter drops most before: drivers/dpdk/
# kernel_rx_filter.h), losses and repairs, and the CPU the members used.
job_counters() {  # JOB
  awk '/^rank [0-9]+:/ { for (i = 3; i <= NF; i++) { split($i, kv, "="); c[kv[1]] += kv[2] } }
    /^ *cpu:/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); c["cpu_" kv[1]] += kv[2] } }
    END { printf "rx_not_for_us=%d rx_foreign_group=%d tx_retransmits=%d rto_timeouts=%d rate_cut_loss=%d cpu=%.2fs\n",
          c["rx_not_for_us"], c["rx_foreign_group"], c["tx_retransmits"], c["rto_timeouts"], c["rate_cut_loss"],
          c["cpu_user"] + c["cpu_sys"] }' "$work/$1"/rank*.out
}

keep() {  # RUN SIZE JOB...
  [[ -n $save ]] || return 0
  local d=$save/$1/$2 j
  shift 2
  mkdir -p "$d"
  for j in "$@"; do cp -r "$work/$j" "$d/"; done
}

echo "# two jobs on one switch: $nodes nodes each ($layout), ${rate} Mbit/s, MTU $mtu, $algo, sizes $sizes, $runs runs; line $line MB/s"
printf '%-5s %-5s %10s %6s %12s %9s %7s %9s\n' run job size iters span_us MB/s x_line verified
rows=$work/rows
: >"$rows"
print_rows() {  # RUN
  while read -r j s span ok; do
    awk -v r="$1" -v j="$j" -v s="$s" -v span="$span" -v line="$line" -v ok="$ok" -v it="$(iters_for "$s")" \
      'BEGIN { mbps = span > 0 ? s / span : 0; printf "%-5s %-5s %10d %6d %12.1f %9.2f %7.3f %9s\n", r, j, s, it, span, mbps, mbps / line, ok }' |
      tee -a "$rows"
  done
}
status=0
for size in ${sizes//,/ }; do
  ((alone)) || break
  run_jobs "$size" A | print_rows alone || status=1
  echo "#   alone A $size: $(job_counters A)"
  keep alone "$size" A
done
for ((r = 1; r <= runs; r++)); do
  for size in ${sizes//,/ }; do
    run_jobs "$size" A B | print_rows "$r" || status=1
    echo "#   run $r $size A: $(job_counters A)"
    echo "#   run $r $size B: $(job_counters B)"
    keep "$r" "$size" A B
  done
done
echo
echo "# the worst over the $runs runs of two jobs (x_line), per job and size"
awk '$1 != "alone" { k = $2 " " $3; if (!(k in w) || $7 < w[k]) w[k] = $7; if ($8 != "yes") bad[k] = 1 }
  END { for (k in w) printf "%-5s %10s worst %.3f%s\n", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1), w[k],
        (k in bad) ? " NOT VERIFIED" : "" }' "$rows" | sort
exit $status
