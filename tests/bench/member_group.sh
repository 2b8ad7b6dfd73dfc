# Sourced by the benchmarks that run one lanecast member process per node of
# tools/testbed.sh (process_testbed.sh, mpi_vs_lanecast.sh): the steps they
# share. Functions only; nothing runs when sourced.

# The af_packet PMD's ring devargs for frames of MTU bytes (empty when its
# defaults hold them). The rules (DPDK 22.11 rte_eth_af_packet.c and the
# kernel's packet_set_ring): the kernel writes a frame at offset 34 of a ring
# frame, so framesz >= 34 + frame; framesz a multiple of 16, blocksz a multiple
# of the page size and of framesz, framecnt a multiple of frames per block.
ring_devargs() {  # MTU
  local need=$((34 + $1 + 14))
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
# output) if any member failed.
run_members() {  # LANECAST TESTBED_NAME NODES FILE OUT_DIR ARGS...
  local lanecast=$1 tb=$2 nodes=$3 file=$4 out=$5 i rc=0
  shift 5
  local started=()
  for ((i = 0; i < nodes; i++)); do
    timeout 1800 ip netns exec "${tb}n$i" "$lanecast" bench --config "$file" --rank "$i" --yield-when-idle "$@" \
      >"$out/rank$i.out" 2>&1 &
    started+=($!)
  done
  for ((i = 0; i < nodes; i++)); do
    wait "${started[i]}" || { rc=1; echo "# rank $i failed:"; sed 's/^/#   /' "$out/rank$i.out"; }
  done
  return $rc
}
