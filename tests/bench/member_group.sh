# Sourced by the benchmarks that run one lanecast member process per node of
# `lanecast testbed` with group files of their own (mpi_vs_lanecast.sh,
# plan_vs_measured.sh, two_sites.sh; process_testbed.sh takes line_rate only:
# `lanecast bench --testbed` does the rest there): the steps they share.
# Functions only; nothing runs when sourced.

# The af_packet PMD's ring devargs for frames of MTU bytes (empty when its
# defaults hold them; drivers/dpdk/af_packet_ring.h computes the same for
# bench --testbed and liblanecast-mpi: change both). The rules (DPDK 22.11 rte_eth_af_packet.c and the
# kernel's packet_set_ring): the kernel writes a frame at offset 66 of a ring
# frame (drivers/dpdk/af_packet_ring.h), so framesz >= 66 + frame; framesz a
# multiple of 16, blocksz a multiple of the page size and of framesz, framecnt
# a multiple of frames per block.
ring_devargs() {  # MTU
  local need=$((66 + $1 + 14))
  ((need <= 2048)) && return 0
  local framesz=$(((need + 1023) / 1024 * 1024)) page g b t
  page=$(getconf PAGESIZE)
  g=$framesz b=$page
  while ((b)); do t=$((g % b)); g=$b; b=$t; done
  local blocksz=$((framesz / g * page))
  local per=$((blocksz / framesz))
  echo ",framesz=$framesz,blocksz=$blocksz,framecnt=$(((512 + per - 1) / per * per))"
}

# The line rate: raw frames of lanecast's size (segment = MTU - 72) blasted
# through the testbed's shaped probe pair; prints the payload MB/s.
line_rate() {  # LINK_PROBE TESTBED_NAME MTU
  local out
  out=$(timeout 30 ip netns exec "${2}p" "$1" --tx p0 --rx p1 --frame "$(($3 + 14))" --seconds 2 --warmup 0.5)
  tr ' ' '\n' <<<"$out" | awk -F= '$1 == "payload_MBps" { print $2 }'
}

# "64K" -> 65536 (K, M, G: powers of 1024).
size_bytes() {  # SIZE
  awk -v s="$1" 'BEGIN { m = 1; u = toupper(substr(s, length(s)));
    if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824;
    if (m > 1) s = substr(s, 1, length(s) - 1); printf "%d", s * m }'
}

# "64K,1M" -> the largest, in bytes.
largest_size() {  # LIST
  local s b max=0
  for s in ${1//,/ }; do
    b=$(size_bytes "$s")
    ((b > max)) && max=$b
  done
  echo "$max"
}

# A group file for one member per node of the testbed: discovery bootstrap,
# lanes paced to RATE (tbf counts no wire overhead), lane 0 on v0 and lane 1
# (LANES = 2) on w0.
write_member_group() {  # FILE NAME ID NODES LANES RATE MTU MAX_MESSAGE
  local file=$1 name=$2 id=$3 nodes=$4 lanes=$5 rate=$6 ring i
  ring=$(ring_devargs "$7")
  {
    printf '[group]\nname = "%s"\nid = %d\nbootstrap = "discovery"\nbootstrap_timeout_ms = 30000\n' "$name" "$id"
    printf 'max_message = %d\nport_rate_mbit = %s\nport_overhead = 0\nlanes = %d\n' "$8" "$rate" "$lanes"
    for ((i = 0; i < nodes; i++)); do
      printf '\n[[member]]\nrank = %d\nlanes = ["net_af_packet0,iface=v0,qdisc_bypass=0%s"' "$i" "$ring"
      ((lanes == 2)) && printf ', "net_af_packet1,iface=w0,qdisc_bypass=0%s"' "$ring"
      printf ']\n'
    done
  } >"$file"
}

# `lanecast bench --config FILE --rank I ARGS...` in every node's namespace at
# once, output in OUT_DIR/rankI.out; returns nonzero (and prints the member's
# output) if any member failed. Rank I runs on node I, or on node
# $first_node + I when the caller sets first_node (two_jobs.sh: a second job
# on nodes of its own).
run_members() {  # LANECAST TESTBED_NAME NODES FILE OUT_DIR ARGS...
  local lanecast=$1 tb=$2 nodes=$3 file=$4 out=$5 i rc=0 first=${first_node:-0}
  shift 5
  local started=()
  for ((i = 0; i < nodes; i++)); do
    timeout 1800 ip netns exec "${tb}n$((first + i))" "$lanecast" bench --config "$file" --rank "$i" --yield-when-idle "$@" \
      >"$out/rank$i.out" 2>&1 &
    started+=($!)
  done
  for ((i = 0; i < nodes; i++)); do
    wait "${started[i]}" || { rc=1; echo "# rank $i failed:"; sed 's/^/#   /' "$out/rank$i.out"; }
  done
  return $rc
}

# t0 of the testbed, in us: the time of a 2-byte broadcast between two
# member processes (one hop, no emulated distance), bench's held_us, past the
# af_packet rings' first round (warm-up 600).
hop_t0_us() {  # LANECAST TESTBED_NAME RATE MTU WORK_DIR
  write_member_group "$5/pair.toml" hop-t0 36 2 1 "$3" "$4" 64
  run_members "$1" "$2" 2 "$5/pair.toml" "$5" --algo chain --sizes 2 --iters 300 --warmup 600 >/dev/null || return 1
  awk '$1 == "chain" { print $4 }' "$5/rank0.out"
}

# What `lanecast plan` predicts (us) for one algorithm and size.
plan_us() {  # LANECAST ALGO NODES SIZE T0_US MBPS SEGMENT [PLAN ARGS...]
  local lanecast=$1 algo=$2 nodes=$3 size=$4 t0=$5 bw=$6 seg=$7
  shift 7
  "$lanecast" plan --algo "$algo" --nodes "$nodes" --size "$size" --t0 "$t0" --bw "$bw" --segment "$seg" "$@" |
    awk '$1 == "predicted" { print $2 }'
}

# Rank 0's bench rows as "ALGO BYTES SPAN_US HELD_US" lines.
bench_rows() {  # RANK0_OUT
  awk '/^#/ || /^algo/ { next } NF >= 9 { print $1, $2, $9, $4 }' "$1" |
    while read -r a s span held; do echo "$a $(size_bytes "$s") $span $held"; done
}

# The testbed of one benchmark run: NODES namespaces named TAG (tools/testbed.sh),
# a work directory, both removed on any exit (members still running from the
# work directory killed first); sets `work` and `line` (link_probe's MB/s).
start_testbed() {  # REPO PROBE TAG NODES RATE MTU
  tb_repo=$1 tb_tag=$3  # for the exit trap, which runs after this returns
  work=$(mktemp -d)
  trap 'pkill -9 -f -- "--config $work/" 2>/dev/null || true; "$tb_repo/tools/testbed.sh" down --name "$tb_tag"; rm -rf "$work"' EXIT
  trap 'exit 130' INT TERM
  "$tb_repo/tools/testbed.sh" up "$4" --rate "$5" --mtu "$6" --name "$tb_tag" >/dev/null
  line=$(line_rate "$2" "$tb_tag" "$6")
}
