#!/usr/bin/env bash
# liblanecast-mpi under unmodified MPI programs: tests/mpi/bcast_check.c,
# compiled with each MPI's own mpicc, one rank per namespace of a `lanecast
# testbed` (8 nodes), the library preloaded in every rank. Every byte of
# every MPI_Bcast is checked by the program itself (against the root's
# pattern and against PMPI_Bcast); this script holds the library's counters
# (LANECAST_MPI_STATS=1) to the program's own count of its calls, so a
# broadcast that went to MPI unseen fails, and counts the warnings.
#
# For each MPI (Open MPI's mpirun, MPICH's hydra):
#   carried     every size 0 B .. 16 MiB, every root, a split, a dup freed and
#               made again, a vector datatype against contiguous ints:
#               carried = calls on every rank, nothing fell back
#   no_raw      rank 3 without CAP_NET_RAW (setpriv): the job agrees to fall
#               back as a whole, completes, one warning names rank 3 and why
#   non_root    the whole job as nobody in one namespace: falls back, one warning
#   min_bytes   LANECAST_MPI_MIN_BYTES=1K on rank 0 alone: every rank sends the
#               same calls to MPI (rank 0's settings are the job's)
#   off         LANECAST_MPI=off: all to MPI, nothing said
#   multiple    MPI_THREAD_MULTIPLE: all to MPI, one notice
#   many        (Open MPI) tests/mpi/many_comms.c: 40 communicators alive at
#               once, more than a process can give groups: those that cannot
#               form fall back alike on every rank, one warning each, every
#               byte right
#
# usage: mpi_shim_test.sh LANECAST SHIM_OPENMPI|none SHIM_MPICH|none [NODES]
set -u
lanecast=${1:?usage: mpi_shim_test.sh LANECAST SHIM_OPENMPI SHIM_MPICH [NODES]}
shim_ompi=${2:-none}
shim_mpich=${3:-none}
nodes=${4:-8}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to build the testbed"
  exit 77
fi
command -v setpriv >/dev/null || { echo "SKIP: needs setpriv (util-linux)"; exit 77; }

tag=lm$(($$ % 100000))
work=$(mktemp -d /tmp/lanecast-mpi.XXXXXX)
chmod 755 "$work"
cleanup() {
  pkill -9 -f -- "$work/" 2>/dev/null || true
  "$lanecast" testbed down --name "$tag" >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
"$lanecast" testbed up "$nodes" --rate 10000 --name "$tag" --quiet || { echo "FAIL: testbed up"; exit 1; }

status=0
fail() {
  echo "FAIL: $*"
  status=1
}

# Runs FLAVOUR's job of $nodes ranks, rank I in namespace I, each with
# LD_PRELOAD and LANECAST_MPI_STATS=1 in its environment, and $all_env
# (VAR=VALUE words); rank 0 also $rank0_env; rank 3 runs under $rank3_wrap
# (a command prefix) when set. Output in $work/LABEL.out.
all_env="" rank0_env="" rank3_wrap="" program=bcast_check
run_job() {  # FLAVOUR LABEL ARGS...
  local flavour=$1 label=$2 i app=()
  shift 2
  local prog=$work/$program.$flavour shim=${shims[$flavour]}
  for ((i = 0; i < nodes; i++)); do
    ((i)) && app+=(:)
    if [[ $flavour == openmpi ]]; then app+=(-np 1); else app+=(-n 1); fi
    app+=(ip netns exec "${tag}n$i")
    # shellcheck disable=SC2206
    ((i == 3)) && [[ -n $rank3_wrap ]] && app+=($rank3_wrap)
    # shellcheck disable=SC2206
    app+=(env LD_PRELOAD="$shim" LANECAST_MPI_STATS=1 $all_env $( ((i == 0)) && echo "$rank0_env") "$prog" "$@")
  done
  if [[ $flavour == openmpi ]]; then
    PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=v0 \
      timeout 300 ip netns exec "${tag}n0" mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include \
      --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include 10.78.0.0/24 --mca oob_tcp_if_include v0 \
      --mca mpi_yield_when_idle 1 "${app[@]}" >"$work/$label.out" 2>&1
  else
    timeout 300 mpiexec.hydra -launcher fork "${app[@]}" >"$work/$label.out" 2>&1
  fi
}

# Every rank said "ok", and its counters: carried and fell back (the reason
# given) against its own count of calls. EXPECT: carried | fallback:REASON.
check_counts() {  # LABEL RANKS EXPECT
  local label=$1 ranks=$2 expect=$3 r calls line carried fell reason_n
  for ((r = 0; r < ranks; r++)); do
    calls=$(sed -n "s/^bcast_check: rank $r calls \([0-9]*\) bytes [0-9]* ok$/\1/p" "$work/$label.out")
    line=$(grep "^lanecast-mpi: rank $r of $ranks: carried" "$work/$label.out")
    if [[ -z $calls || -z $line ]]; then
      fail "$label: rank $r did not finish with every byte right and its counters"
      continue
    fi
    carried=$(sed -n 's/.*: carried \([0-9]*\) .*/\1/p' <<<"$line")
    fell=$(sed -n 's/.*fell back \([0-9]*\) .*/\1/p' <<<"$line")
    case $expect in
      carried)
        [[ $carried == "$calls" && $fell == 0 ]] || fail "$label: rank $r made $calls calls, carried $carried, fell back $fell"
        ;;
      fallback:*)
        reason_n=$(grep -oE "[(, ]${expect#fallback:} [0-9]+" <<<"$line" | grep -oE "[0-9]+$")
        [[ $carried == 0 && $fell == "$calls" && $reason_n == "$calls" ]] ||
          fail "$label: rank $r made $calls calls, carried $carried, fell back $fell (${expect#fallback:} $reason_n)"
        ;;
    esac
  done
}

# The lines lanecast-mpi printed besides the counters: exactly WANT of them,
# each matching PATTERN (an ERE).
check_said() {  # LABEL WANT PATTERN
  local said n
  said=$(grep "lanecast-mpi:" "$work/$1.out" | grep -v ": carried [0-9]" | grep -v " joined in: " || true)
  n=$(grep -c . <<<"$said" || true)
  [[ -z $said ]] && n=0
  if [[ $n != "$2" ]]; then
    fail "$1: lanecast-mpi said $n line(s) besides its counters, expected $2: ${said:-nothing}"
  elif (($2)) && ! grep -qE "$3" <<<"$said"; then
    fail "$1: its warning does not say /$3/: $said"
  fi
  # DPDK's own lines stay quiet (LANECAST_MPI_LOG): the warning says it all.
  if grep -qE "^(EAL|open_packet_iface|PMD|ETHDEV)" "$work/$1.out"; then
    fail "$1: DPDK's own log lines leaked: $(grep -E "^(EAL|open_packet_iface|PMD|ETHDEV)" "$work/$1.out" | head -2)"
  fi
}

show() {  # LABEL: the job's output, indented, for the log
  sed "s/^/    [$1] /" "$work/$1.out" | grep -v "bcast_check: rank [0-9]* calls" | head -40
}

declare -A shims=([openmpi]=$shim_ompi [mpich]=$shim_mpich)
declare -A compilers=([openmpi]=mpicc.openmpi [mpich]=mpicc.mpich)
declare -A launchers=([openmpi]=mpirun.openmpi [mpich]=mpiexec.hydra)
ran=0
for flavour in openmpi mpich; do
  shim=${shims[$flavour]}
  if [[ $shim == none || ! -f $shim ]]; then
    echo "# $flavour: no liblanecast-mpi built for it (meson found no ${flavour/openmpi/ompi-c}.pc): not run"
    continue
  fi
  for t in "${compilers[$flavour]}" "${launchers[$flavour]}"; do
    command -v "$t" >/dev/null || { fail "$flavour: $t is missing"; continue 2; }
  done
  "${compilers[$flavour]}" -O2 -Wall -Werror -o "$work/bcast_check.$flavour" "$here/bcast_check.c" ||
    { fail "$flavour: bcast_check does not compile"; continue; }
  chmod 755 "$work/bcast_check.$flavour"
  "${compilers[$flavour]}" -O2 -Wall -Werror -o "$work/many_comms.$flavour" "$here/many_comms.c" ||
    { fail "$flavour: many_comms does not compile"; continue; }
  ran=$((ran + 1))

  label=$flavour.carried
  all_env="LANECAST_MPI_STATS=2"  # also each group alive at MPI_Finalize: MPI_COMM_WORLD and the dup
  run_job "$flavour" "$label" || fail "$label: the job failed"
  all_env=""
  check_counts "$label" "$nodes" carried
  check_said "$label" 0 ""
  formed=$(grep -c "groups 4 formed, 0 refused; lanes af_packet on v0$" "$work/$label.out")
  [[ $formed == "$nodes" ]] || fail "$label: $formed of $nodes ranks formed their 4 groups on af_packet"
  alive=$(grep -cE "^lanecast-mpi: rank [0-9]+: (MPI_COMM_WORLD \\($nodes ranks\\)|a communicator of $nodes ranks): rx_frames=[1-9].* joined in: pools" "$work/$label.out")
  [[ $alive == $((2 * nodes)) ]] || fail "$label: $alive lines of groups' counters at MPI_Finalize, not $((2 * nodes))"
  echo "# $label: $(grep -c " ok$" "$work/$label.out") ranks ok; $(grep "^lanecast-mpi: rank 0 " "$work/$label.out")"

  label=$flavour.no_raw
  rank3_wrap="setpriv --bounding-set -net_raw"
  run_job "$flavour" "$label" quick || fail "$label: the job failed"
  rank3_wrap=""
  check_counts "$label" "$nodes" fallback:off
  check_said "$label" 1 "^lanecast-mpi: rank 3 cannot carry broadcasts: .*CAP_NET_RAW.*every MPI_Bcast of this job goes to MPI$"
  echo "# $label: $(grep "cannot carry" "$work/$label.out")"

  # Rank 0's settings are the job's: a threshold in its environment alone
  # sends the same calls to MPI on every rank.
  label=$flavour.min_bytes
  rank0_env="LANECAST_MPI_MIN_BYTES=1K"
  run_job "$flavour" "$label" quick || fail "$label: the job failed"
  rank0_env=""
  smalls=$(sed -n 's/.* small \([0-9]*\), .*/\1/p' "$work/$label.out" | sort -u)
  carried=$(sed -n 's/.*: carried \([0-9]*\) .*/\1/p' "$work/$label.out" | sort -u | tr '\n' ' ')
  [[ $(grep -c . <<<"$smalls") == 1 && $smalls != 0 ]] || fail "$label: the ranks sent different numbers to MPI: $smalls"
  check_said "$label" 0 ""
  echo "# $label: every rank sent $smalls broadcasts below 1K to MPI, carried $carried"

  label=$flavour.off
  all_env="LANECAST_MPI=off"
  run_job "$flavour" "$label" quick || fail "$label: the job failed"
  all_env=""
  check_counts "$label" "$nodes" fallback:off
  check_said "$label" 0 ""

  label=$flavour.multiple
  run_job "$flavour" "$label" quick multiple || fail "$label: the job failed"
  check_counts "$label" "$nodes" fallback:off
  check_said "$label" 1 "MPI_THREAD_MULTIPLE: .*every MPI_Bcast of this job goes to MPI$"

  if [[ $flavour == openmpi ]]; then
    label=$flavour.many
    program=many_comms all_env="LANECAST_MPI_MAX_MESSAGE=64K"
    run_job "$flavour" "$label" || fail "$label: the job failed"
    program=bcast_check all_env=""
    [[ $(grep -c "^many_comms: rank [0-9]* calls 80 ok$" "$work/$label.out") == "$nodes" ]] ||
      fail "$label: not every rank made its 80 broadcasts with every byte right"
    # Every rank formed and refused the same communicators, and carried or
    # passed each call accordingly.
    counts=$(sed -n 's/.*: carried \([0-9]*\) .*fell back \([0-9]*\) .*no group \([0-9]*\)); groups \([0-9]*\) formed, \([0-9]*\) refused.*/\1 \2 \3 \4 \5/p' "$work/$label.out" | sort -u)
    read -r carried fell no_group formed refused <<<"$counts"
    if [[ $(grep -c . <<<"$counts") != 1 ]]; then
      fail "$label: the ranks disagree (carried, fell back, no group, formed, refused): $(tr '\n' ';' <<<"$counts")"
    elif ((carried + fell != 80 || fell != no_group || formed + refused != 40 || formed == 0 || refused == 0)); then
      fail "$label: carried $carried, fell back $fell ($no_group no group), $formed formed, $refused refused of 40"
    fi
    warned=$(grep -c "no lanecast group, its broadcasts go to MPI" "$work/$label.out")
    [[ $warned == "${refused:-x}" ]] || fail "$label: $warned warnings for $refused communicators refused"
    echo "# $label: $formed of 40 communicators formed a group, $refused went to MPI; $(grep -m1 "no lanecast group" "$work/$label.out")"
  fi

  # The whole job as nobody, in one namespace: no CAP_NET_RAW anywhere.
  label=$flavour.non_root
  if [[ $flavour == openmpi ]]; then
    timeout 120 ip netns exec "${tag}n0" setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" \
      mpirun -np 4 --oversubscribe --bind-to none --mca btl tcp,self,vader \
      -x LD_PRELOAD="$shim" -x LANECAST_MPI_STATS=1 "$work/bcast_check.$flavour" quick >"$work/$label.out" 2>&1 ||
      fail "$label: the job failed"
  else
    timeout 120 ip netns exec "${tag}n0" setpriv --reuid=nobody --regid=nogroup --clear-groups env HOME="$work" \
      mpiexec.hydra -launcher fork -genv LD_PRELOAD "$shim" -genv LANECAST_MPI_STATS 1 \
      -n 4 "$work/bcast_check.$flavour" quick >"$work/$label.out" 2>&1 || fail "$label: the job failed"
  fi
  check_counts "$label" 4 fallback:off
  check_said "$label" 1 "^lanecast-mpi: rank 0 cannot carry broadcasts: .*CAP_NET_RAW.*\(4 of 4 ranks cannot\); every MPI_Bcast of this job goes to MPI$"
  echo "# $label: $(grep "cannot carry" "$work/$label.out")"
  ((status)) && for l in carried no_raw min_bytes off multiple many non_root; do [[ -f $work/$flavour.$l.out ]] && show "$flavour.$l"; done
done
((ran)) || { echo "SKIP: no liblanecast-mpi built (no MPI found)"; exit 77; }
((status == 0)) && echo "mpi shim: ok ($ran MPI(s), $nodes ranks)"
exit $status
