#!/usr/bin/env bash
# liblanecast-mpi under an unmodified MPI program, beside the MPI library's
# own MPI_Bcast and beside lanecast's own members, on one fair testbed in the
# same run (8 ranks, 200 Mbit/s, MTU 1500, node uplinks queueing 1000 frames
# as a host NIC does).
#
# The program is tests/bench/mpi_bcast.c, timed as osu_bcast times: a barrier
# before each broadcast, each rank's average time inside MPI_Bcast, the
# figure the largest rank average (and beside it the span: the root's entry
# to the last rank's exit, host clock). Rows per size:
#   ompi:default          Open MPI 4.1's MPI_Bcast over TCP, its own decision
#   ompi:pipeline/S       Open MPI's pipeline (tuned algorithm 3), S-byte segments
#                         (4K-64K): its best tuned setting so far
#   ompi+lanecast         the same program, liblanecast-mpi.so preloaded
#   ompi+lanecast/bcast-barrier   the same at 2 B and 1 KiB, the program's
#                         barrier made of 1-byte MPI_Bcast calls from each rank
#                         in turn (MPI_BCAST_BARRIER=bcast): lanecast bench's own
#                         barrier, so the two leave it alike
#   mpich:default         MPICH 4.0's own (ch4:ucx): ranks of one host - every
#                         rank of this testbed - talk through shared memory, not
#                         the links (a figure of no link; shown as MPICH runs)
#   mpich:links           MPICH made to use the links (MPIR_CVAR_NOLOCAL=1,
#                         UCX_TLS=tcp,self): its ranks poll without sleeping, 8 of
#                         them on 2 CPUs; its jobs never leave MPI_Finalize and
#                         are stopped after their sizes (--no-mpich-links: left out)
#   mpich+lanecast        MPICH's default with liblanecast-mpi-mpich.so preloaded
#   lanecast:bench        lanecast's own member processes (`lanecast bench
#                         --config`, as `bench --testbed` runs them), algorithm auto
# The tables give each kind's best over the repeats, as MB/s and share of the
# line (2 B and 1 KiB: microseconds), and the ratios: ompi+lanecast over
# Open MPI's best; at small sizes, the spans over lanecast bench's span.
#
# Sizes up to 1 KiB run as jobs of their own, with --small-iters (default
# 200) timed broadcasts each, as osu_bcast times small messages more often.
#
# usage: tests/bench/mpi_shim.sh [--nodes N] [--rate MBIT] [--mtu M] [--uplink-queue F]
#          [--sizes LIST] [--iters K] [--small-iters K] [--warmup W] [--repeats R]
#          [--no-mpich-links] [--build DIR] [--save-rows FILE]
#        tests/bench/mpi_shim.sh --report FILE   (the tables of a saved run)
# Needs root, iproute2, openmpi-bin + libopenmpi-dev, mpich + libmpich-dev, and
# lanecast built with them (DIR/apps/mpi/liblanecast-mpi*.so).
set -euo pipefail

nodes=8 rate=200 mtu=1500 uplink_queue=1000 sizes=2,1K,64K,1M,8M iters=10 small_iters=200 warmup=3 repeats=1
mpich_links=1 save_rows="" report_from=""
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$repo/build
while (($#)); do
  case $1 in
    --nodes) nodes=$2; shift ;;
    --rate) rate=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --uplink-queue) uplink_queue=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --small-iters) small_iters=$2; shift ;;
    --warmup) warmup=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --no-mpich-links) mpich_links=0 ;;
    --save-rows) save_rows=$2; shift ;;
    --report) report_from=$2; shift ;;
    --build) build=$(cd "$2" && pwd); shift ;;
    -h|--help) sed -n '2,38p' "$0"; exit 0 ;;
    *) echo "mpi_shim: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $repeats =~ ^[1-9][0-9]*$ ]] || { echo "mpi_shim: --repeats takes a count from 1" >&2; exit 2; }

# The tables, from the rows of a run ("LABEL SIZE OSU_US MBPS VERIFIED
# SPAN_US REPEAT ACKED_US", below) and the line rate.
report() {  # ROWS_FILE LINE_MB_S
  local rows_file line=$2
  rows_file=$(mktemp)
  grep -v '^#' "$1" >"$rows_file"
  echo
  echo "# every run: osu time (the largest rank average in MPI_Bcast; bench: held_us), MB/s, span (bench: and acked_us)"
  sort -k2,2n -k1,1 -k7,7n "$rows_file" |
    awk '{ printf "%-28s %10s %12s us %9s MB/s %12s us span %s (repeat %s)%s\n", $1, $2, $3, $4, $6, $5, $7,
           $8 == "-" ? "" : sprintf(", acked %s us", $8) }'

  echo
  echo "# per size, each kind's best over the repeats by the osu time: MB/s and x_line (up to 1 KiB: us)"
  printf "%9s | %-21s | %-29s | %-21s | %-21s | %-21s | %-21s | %7s\n" size "ompi default" "ompi best tuned" \
    "ompi+lanecast" "mpich default (shm)" "mpich links" "mpich+lanecast" "lc/best"
  awk -v line="$line" '
    $5 != "yes" || $3 == "" { next }
    { k = $1; if (k ~ /^ompi:pipeline/) k = "ompi:best"; t = $3 + 0; size[$2] = 1
      if (!(($2, k) in best) || t < best[$2, k]) { best[$2, k] = t; who[$2, k] = $1 } }
    function cell(s, k,   t) {
      if (!((s, k) in best)) return sprintf("%-21s", "-")
      t = best[s, k]
      if (s <= 1024) return sprintf("%15.1f us   ", t)
      return sprintf("%7.2f MB/s  %5.3f", s / t, s / t / line)
    }
    END {
      for (s in size) order[++n] = s + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
      for (i = 1; i <= n; i++) {
        s = order[i]; b = best[s, "ompi:best"]; l = best[s, "ompi+lanecast"]
        w = who[s, "ompi:best"]; sub(/^ompi:/, "", w)
        printf "%9d | %s | %s %-7s | %s | %s | %s | %s | %7.2f\n", s, cell(s, "ompi:default"), cell(s, "ompi:best"), w,
               cell(s, "ompi+lanecast"), cell(s, "mpich:default"), cell(s, "mpich:links"), cell(s, "mpich+lanecast"),
               ((l > 0 && b > 0) ? b / l : 0)
      }
    }' "$rows_file"
  echo "# lc/best: Open MPI's best tuned time over ompi+lanecast's (above 1: lanecast faster)"

  echo
  echo "# small sizes beside lanecast's own bench, each kind's best over the repeats: the osu time (bench:"
  echo "# held_us, its members' own times from posting), bench's acked_us (the root until every member"
  echo "# acknowledged) and the span (the root's entry to the last rank's exit; bench: to the last holding)"
  printf "%9s | %-19s | %-19s | %-29s | %-29s | %9s %9s\n" size "ompi default" "ompi+lanecast" \
    "ompi+lanecast, bcast barrier" "lanecast bench" "span/lc" "bb/lc"
  awk '
    $5 != "yes" || $2 > 1024 { next }
    { size[$2] = 1; k = $1
      if (!(($2, k, "osu") in best) || $3 + 0 < best[$2, k, "osu"]) best[$2, k, "osu"] = $3 + 0
      if (!(($2, k, "span") in best) || $6 + 0 < best[$2, k, "span"]) best[$2, k, "span"] = $6 + 0
      if ($8 != "-" && (!(($2, k, "acked") in best) || $8 + 0 < best[$2, k, "acked"])) best[$2, k, "acked"] = $8 + 0 }
    function two(s, k) {
      if (!((s, k, "osu") in best)) return sprintf("%-19s", "-")
      return sprintf("%7.1f / %7.1f  ", best[s, k, "osu"], best[s, k, "span"])
    }
    END {
      for (s in size) order[++n] = s + 0
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (order[j] < order[i]) { t = order[i]; order[i] = order[j]; order[j] = t }
      for (i = 1; i <= n; i++) {
        s = order[i]; c = best[s, "lanecast:bench", "span"]
        bench = ((s, "lanecast:bench", "osu") in best) ? sprintf("%6.1f / %6.1f / %6.1f", best[s, "lanecast:bench", "osu"],
                best[s, "lanecast:bench", "acked"], c) : "-"
        printf "%9d | %s | %s | %s          | %-29s | %9.2f %9.2f\n", s, two(s, "ompi:default"), two(s, "ompi+lanecast"),
               two(s, "ompi+lanecast/bcast-barrier"), bench,
               (c > 0 ? best[s, "ompi+lanecast", "span"] / c : 0), (c > 0 ? best[s, "ompi+lanecast/bcast-barrier", "span"] / c : 0)
      }
    }' "$rows_file"
  echo "# (us: osu / span; bench: held / acked / span.) span/lc: ompi+lanecast's span over bench's; bb/lc: the same"
  echo "# program with bench's barrier, over bench's"
  rm -f "$rows_file"
}

if [[ -n $report_from ]]; then  # --report: the tables of a saved run again
  report "$report_from" "$(sed -n '1s/^# line //p' "$report_from")"
  exit 0
fi

lanecast=$build/apps/lanecast probe=$build/tests/bench/link_probe
shim_ompi=$build/apps/mpi/liblanecast-mpi.so shim_mpich=$build/apps/mpi/liblanecast-mpi-mpich.so
[[ $(id -u) -eq 0 ]] || { echo "mpi_shim: needs root (namespaces)" >&2; exit 2; }
for f in "$lanecast" "$probe" "$shim_ompi" "$shim_mpich"; do
  [[ -e $f ]] || { echo "mpi_shim: $f is missing: build lanecast with Open MPI and MPICH installed" >&2; exit 2; }
done
for t in mpicc.openmpi mpirun.openmpi mpicc.mpich mpiexec.hydra; do
  command -v $t >/dev/null || { echo "mpi_shim: needs $t (openmpi-bin, libopenmpi-dev, mpich, libmpich-dev)" >&2; exit 2; }
done
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"


tag=lcms$(($$ % 100000))
work=$(mktemp -d)
chmod 755 "$work"
cleanup() {
  pkill -9 -f -- "$work/" 2>/dev/null || true
  "$lanecast" testbed down --name "$tag" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$lanecast" testbed up "$nodes" --rate "$rate" --mtu "$mtu" --uplink-queue "$uplink_queue" --name "$tag" --quiet
mpicc.openmpi -O2 -o "$work/bcast.openmpi" "$repo/tests/bench/mpi_bcast.c"
mpicc.mpich -O2 -o "$work/bcast.mpich" "$repo/tests/bench/mpi_bcast.c"
size_list=()
for s in ${sizes//,/ }; do size_list+=("$(size_bytes "$s")"); done
line=$(line_rate "$probe" "$tag" "$mtu")
echo "# testbed: $nodes nodes, tbf $rate Mbit/s both ways, MTU $mtu, uplink queue $uplink_queue frames"
echo "# line rate (link_probe p0->p1, $((mtu + 14))-byte frames): $line MB/s payload"
echo "# $(mpirun.openmpi --version 2>/dev/null | head -1), MPICH $(mpichversion 2>/dev/null | awk '/Version/ { print $3 }'); $iters timed + $warmup warm-up broadcasts per size ($small_iters up to 1 KiB); $repeats repeat(s)"

# A job of the program, rank I in namespace I; its "mpi ..." lines become
# rows "LABEL SIZE OSU_US MBPS VERIFIED SPAN_US REPEAT ACKED_US" (ACKED_US:
# lanecast bench's root until every member acknowledged; "-" for the rest).
rows() {  # LABEL
  awk -v l="$1" -v r="$repeat" '/^mpi / { for (k = 2; k <= NF; k++) { split($k, kv, "="); v[kv[1]] = kv[2] }
    print l, v["size"], v["avg_us"], v["MBps"], v["verified"], v["span_us"], r, "-" }' >>"$work/rows"
}
ompi() {  # LABEL ENV [MCA ARGS...]   (ENV: VAR=VALUE words for every rank; $job_sizes, $job_iters)
  local label=$1 env=$2 i app=()
  shift 2
  for ((i = 0; i < nodes; i++)); do
    ((i)) && app+=(:)
    # shellcheck disable=SC2086
    app+=(-np 1 ip netns exec "${tag}n$i" env $env "$work/bcast.openmpi" "$job_iters" "$warmup" $job_sizes)
  done
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=v0 \
    timeout 1200 ip netns exec "${tag}n0" mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
    -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include \
    --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.78.0.0/24 --mca oob_tcp_if_include v0 \
    --mca mpi_yield_when_idle 1 "$@" "${app[@]}" 2>"$work/err" | rows "$label" ||
    echo "# $label failed: $(grep -v '^$' "$work/err" | head -3)"
}
mpich() {  # LABEL TIMEOUT ENV...
  local label=$1 limit=$2 i app=()
  shift 2
  for ((i = 0; i < nodes; i++)); do
    ((i)) && app+=(:)
    # shellcheck disable=SC2086
    app+=(-n 1 ip netns exec "${tag}n$i" env "$@" "$work/bcast.mpich" "$job_iters" "$warmup" $job_sizes)
  done
  timeout "$limit" mpiexec.hydra -launcher fork "${app[@]}" 2>"$work/err" | rows "$label" ||
    echo "# $label did not finish within $limit s (rows it printed are kept)"
}

small_sizes="" large_sizes=""
for s in "${size_list[@]}"; do if ((s <= 1024)); then small_sizes+="$s "; else large_sizes+="$s "; fi; done
write_member_group "$work/group.toml" mpi-shim-bench 46 "$nodes" 1 "$rate" "$mtu" "$(largest_size "$sizes")"
for ((repeat = 1; repeat <= repeats; repeat++)); do
  for job_sizes in "$small_sizes" "$large_sizes"; do
    [[ -n $job_sizes ]] || continue
    job_iters=$iters
    [[ $job_sizes == "$small_sizes" ]] && job_iters=$small_iters
    ompi ompi:default ""
    for seg in 4096 8192 16384 32768 65536; do
      ompi "ompi:pipeline/$((seg / 1024))K" "" --mca coll_tuned_use_dynamic_rules 1 \
        --mca coll_tuned_bcast_algorithm 3 --mca coll_tuned_bcast_algorithm_segmentsize "$seg"
    done
    ompi ompi+lanecast "LD_PRELOAD=$shim_ompi"
    # The same, its barrier made as lanecast bench makes its own (a 1-byte
    # broadcast from each rank in turn, which the library carries): what is
    # left of a difference from bench at small sizes is the library's.
    [[ $job_sizes == "$small_sizes" ]] && ompi ompi+lanecast/bcast-barrier "LD_PRELOAD=$shim_ompi MPI_BCAST_BARRIER=bcast"
    mpich mpich:default 600
    # Its 8-rank jobs print every size and then never leave MPI_Finalize:
    # given long enough for the sizes, then stopped.
    ((mpich_links)) && mpich mpich:links "$([[ $job_sizes == "$small_sizes" ]] && echo 60 || echo 150)" \
      MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=v0
    mpich mpich+lanecast 600 LD_PRELOAD="$shim_mpich"
    # lanecast's own members on the same testbed (bench --config, as bench
    # --testbed runs them: told the links' rate).
    bench_sizes=$(tr ' ' '\n' <<<"$job_sizes" | grep . | paste -sd,)
    if run_members "$lanecast" "$tag" "$nodes" "$work/group.toml" "$work" --algo auto --sizes "$bench_sizes" \
        --iters "$job_iters" --warmup "$warmup" --progress calls >/dev/null; then
      awk -v sz="$job_sizes" -v r="$repeat" 'BEGIN { n = split(sz, s, " ") }
        /^[a-z_]+ +[0-9.]+[KMG]? +[0-9]+ / { k = ++seen; print "lanecast:bench", s[k], $4, $6, $8, $9, r, $7 }' \
        "$work/rank0.out" >>"$work/rows"
    fi
  done
done

report "$work/rows" "$line"
if [[ -n $save_rows ]]; then
  { echo "# line $line"; cat "$work/rows"; } >"$save_rows"
  echo "# rows saved in $save_rows (tests/bench/mpi_shim.sh --report $save_rows prints these tables again)"
fi
