#!/usr/bin/env bash
# lanecast beside Open MPI on the same shaped links, in the same run.
#
# The testbed of tools/testbed.sh (N namespaces, one veth each to a Linux
# bridge, tbf both ways). Open MPI 4.1's MPI_Bcast over TCP, one rank per
# namespace (tests/bench/mpi_bcast.c, timed as osu_bcast), with its default
# decision, each forced algorithm (coll_tuned_bcast_algorithm 1..9) and the
# pipeline (3) with 4K, 8K, 16K, 32K and 64K segments; then lanecast, one member
# process per namespace (bench --config, osu_bcast-style too). Two tables,
# each per size: the line rate, Open MPI's default, Open MPI's best (and
# which), lanecast's best (and which), and the ratios - first by the osu
# figure (the largest of the ranks' average times in the call), then by the
# span (the root's entry to the last rank holding the message, host clock),
# which the ranks' skew after a barrier cannot shorten.
#
# usage: tests/bench/mpi_vs_lanecast.sh [--nodes N] [--rate MBIT] [--mtu M]
#          [--uplink-queue FRAMES] [--sizes LIST] [--iters K] [--warmup W]
#          [--algos LIST] [--progress calls|cores] [--lanecast PATH]
#          [--repeats R] [--mpi-sweep full|pipeline]
# --repeats: the whole comparison R times on one testbed, Open MPI's sweep
# and lanecast's run in turn (default 1). On a small shared machine a job's
# average moves by a tenth from one job to the next (8 MiB pipeline/8K on
# one testbed: 0.81-0.87 of the line in four jobs, single broadcasts
# 0.67-0.95 in one): the tables take each side's best over the repeats, and
# a last table shows every repeat's, so the spread stays in view.
# --mpi-sweep pipeline: Open MPI's default and its pipeline with 4K-64K
# segments only (its best in every run so far), a quarter of the full
# sweep's time (full: also algorithms 1-9).
# --progress: how lanecast's members progress (bench --progress; default
# calls: one thread per process, as the MPI ranks have). --uplink-queue:
# the nodes' uplink queue (lanecast testbed up --help; default a host NIC's
# 1000 frames, where TCP backs off without losing; 0: 5 ms, the testbed
# before, where TCP dropped its own packets).
# Needs root, iproute2, openmpi-bin and libopenmpi-dev (mpicc).
set -euo pipefail

nodes=8 rate=200 mtu=1500 uplink_queue=1000 sizes=2,64K,256K,1M,8M iters=5 warmup=2 algos=chain,bintree progress=calls
repeats=1 sweep=full
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --uplink-queue) uplink_queue=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --algos) algos=$2; shift ;;
    --progress) progress=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --mpi-sweep) sweep=$2; shift ;;
    -h|--help) sed -n '2,34p' "$0"; exit 0 ;;
    *) echo "mpi_vs_lanecast: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "mpi_vs_lanecast: --repeats takes a count from 1, not '$repeats'" >&2; exit 2; }
[[ $sweep == full || $sweep == pipeline ]] || { echo "mpi_vs_lanecast: --mpi-sweep is full or pipeline, not '$sweep'" >&2; exit 2; }
probe=$(dirname "$lanecast")/../tests/bench/link_probe
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"
for t in mpirun mpicc; do command -v $t >/dev/null || { echo "mpi_vs_lanecast: needs $t (apt-get install openmpi-bin libopenmpi-dev)" >&2; exit 2; }; done
[[ -x $lanecast && -x $probe ]] || { echo "mpi_vs_lanecast: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcmv$(($$ % 100000))
work=$(mktemp -d)
cleanup() {
  pkill -9 -f -- "$work/" 2>/dev/null || true
  "$repo/tools/testbed.sh" down --name "$tag"
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$repo/tools/testbed.sh" up "$nodes" --rate "$rate" --mtu "$mtu" --uplink-queue "$uplink_queue" --name "$tag"
mpicc -O2 -o "$work/mpi_bcast" "$repo/tests/bench/mpi_bcast.c"

size_list=()
for s in ${sizes//,/ }; do size_list+=("$(size_bytes "$s")"); done

line=$(line_rate "$probe" "$tag" "$mtu")
echo "# line rate (link_probe p0->p1, $((mtu + 14))-byte frames): $line MB/s payload"

# Open MPI: rank I in namespace I; mpirun itself in namespace 0.
mpi() {  # LABEL [--mca k v ...]
  local label=$1 i app=()
  shift
  for ((i = 0; i < nodes; i++)); do
    ((i)) && app+=(:)
    app+=(-np 1 ip netns exec "${tag}n$i" "$work/mpi_bcast" "$iters" "$warmup" "${size_list[@]}")
  done
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=v0 \
    timeout 1200 ip netns exec "${tag}n0" mpirun --allow-run-as-root --oversubscribe --bind-to none \
    -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.78.0.0/24 --mca oob_tcp_if_include v0 \
    --mca mpi_yield_when_idle 1 "$@" "${app[@]}" 2>"$work/mpi.err" |
    awk -v l="$label" -v r="$repeat" '/^mpi / { for (k = 2; k <= NF; k++) { split($k, kv, "="); v[kv[1]] = kv[2] }
                                 print l, v["size"], v["avg_us"], v["MBps"], v["verified"], v["span_us"], r }' >>"$work/rows" ||
    echo "# Open MPI $label failed: $(head -3 "$work/mpi.err")"
}
echo "# Open MPI $(mpirun --version 2>/dev/null | head -1 | awk '{ print $NF }'): default, $([[ $sweep == full ]] && echo "algorithms 1-9, ")pipeline segments; $repeats repeat(s)"
write_member_group "$work/group.toml" mpi-side-by-side 44 "$nodes" 1 "$rate" "$mtu" "$(largest_size "$sizes")"
names=(x basic_linear chain pipeline split_binary_tree binary_tree binomial knomial scatter_allgather scatter_allgather_ring)
for ((repeat = 1; repeat <= repeats; repeat++)); do
  mpi ompi:default
  if [[ $sweep == full ]]; then
    for a in 1 2 3 4 5 6 7 8 9; do
      mpi "ompi:${names[a]}" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm "$a"
    done
  fi
  for seg in 4096 8192 16384 32768 65536; do
    mpi "ompi:pipeline/$((seg / 1024))K" --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_bcast_algorithm 3 \
      --mca coll_tuned_bcast_algorithm_segmentsize "$seg"
  done

  # lanecast: one member process per namespace, the same sizes.
  run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" \
    --algo "$algos" --sizes "$sizes" --iters "$iters" --warmup "$warmup" --progress "$progress" || true
  awk -v sz="${size_list[*]}" -v r="$repeat" 'BEGIN { n = split(sz, s, " ") }
    /^[a-z_]+ +[0-9.]+[KMG]? +[0-9]+ / { k = ++seen[$1]; print "lanecast:" $1, s[k], $4, $6, $8, $9, r }' \
    "$work/rank0.out" >>"$work/rows"
done

echo
echo "# every run: osu time and MB/s, span (2 B: microseconds)"
sort -k2,2n -k1,1 -k7,7n "$work/rows" |
  awk -v many="$((repeats > 1))" '{ printf "%-28s %10s %12s us %9s MB/s %12s us span %s%s\n", $1, $2, $3, $4, $6, $5, many ? " (repeat " $7 ")" : "" }'

table() {  # TITLE COLUMN (3: the osu time, 6: the span)
  echo
  echo "# per size by $1: MB/s and x_line (2 B: us); best = fastest verified run of its kind"
  printf "%10s %9s | %-22s | %-34s | %-28s | %8s %8s\n" size line "ompi default" "ompi best" "lanecast best" "lc/best" "lc/dflt"
  awk -v line="$line" -v col="$2" '
    $5 != "yes" || $col == "" { next }
    { k = ($1 ~ /^lanecast/) ? "lc" : "ompi"; t = $col + 0; size[$2] = 1
      if ($1 == "ompi:default") dflt[$2] = t
      if (!(($2, k) in best) || t < best[$2, k]) { best[$2, k] = t; who[$2, k] = $1 } }
    END {
      for (s in size) order[++n] = s + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
      for (i = 1; i <= n; i++) {
        s = order[i]; d = dflt[s]; b = best[s, "ompi"]; l = best[s, "lc"]
        if (s <= 64) {
          printf "%10d %9s | %14.1f us      | %14.1f us %-16s | %14.1f us %-10s | %8.2f %8.2f\n", s, "-", d, b, who[s, "ompi"], l, who[s, "lc"], b / l, d / l
        } else {
          printf "%10d %9.2f | %7.2f MB/s %5.3f | %7.2f MB/s %5.3f %-14s | %7.2f MB/s %5.3f %-8s | %8.2f %8.2f\n", s, line,
                 s / d, s / d / line, s / b, s / b / line, who[s, "ompi"], s / l, s / l / line, who[s, "lc"], b / l, d / l
        }
      }
    }' "$work/rows"
}
table "the osu time" 3
table "the span" 6
if ((repeats > 1)); then
  echo
  echo "# each repeat by the span: x_line of each side's best in that repeat (2 B: us)"
  printf "%10s %6s | %-26s | %-24s | %8s\n" size repeat "ompi best" "lanecast best" "lc/best"
  awk -v line="$line" '
    $5 != "yes" || $6 == "" { next }
    { k = ($1 ~ /^lanecast/) ? "lc" : "ompi"; key = $2 SUBSEP $7 SUBSEP k; t = $6 + 0; size[$2] = 1; rep[$7] = 1
      if (!(key in best) || t < best[key]) { best[key] = t; who[key] = $1 } }
    END {
      for (s in size) order[++n] = s + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
      for (r in rep) reps[++m] = r + 0
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (reps[j] < reps[i]) { t = reps[i]; reps[i] = reps[j]; reps[j] = t }
      for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) {
        s = order[i]; r = reps[j]; b = best[s, r, "ompi"]; l = best[s, r, "lc"]
        if (b == "" || l == "") continue
        if (s <= 64) printf "%10d %6d | %11.1f us %-11s | %11.1f us %-9s | %8.2f\n", s, r, b, who[s, r, "ompi"], l, who[s, r, "lc"], b / l
        else printf "%10d %6d | %5.3f %-20s | %5.3f %-18s | %8.2f\n", s, r, s / b / line, who[s, r, "ompi"], s / l / line, who[s, r, "lc"], b / l
      }
    }' "$work/rows"
fi
