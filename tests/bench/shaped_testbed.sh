#!/usr/bin/env bash
# The shaped testbed: N lanecast members on real kernel links of a known rate,
# with the links' own line rate and the kernel's UDP latency measured in the
# same run, so every lanecast number has a yardstick beside it.
#
# usage: tests/bench/shaped_testbed.sh [--nodes N] [--rate MBIT] [--mtu M]
#          [--algos LIST] [--sizes LIST] [--iters K] [--warmup W] [--runs R]
#          [--lanecast PATH] [--keep] [--no-links] [--no-udp] [-- extra bench args]
#        tests/bench/shaped_testbed.sh --down     remove leftovers of earlier runs
#
# Topology (namespaces named by PREFIX and this script's pid):
#   lctbn<pid>  v0..v(N-1): the node ends; one `lanecast bench` runs here with
#               one DPDK af_packet port per member (qdisc_bypass=0, see below)
#   lctbs<pid>  br0 with b0..b(N-1) (the switch ports) and bu0, bu1
#   lctba<pid>, lctbb<pid>  u0 10.77.0.1/24 and u1 10.77.0.2/24: UDP ping-pong
# Every veth end has a tbf root qdisc: vI/uI egress is the node's uplink, bI/buI
# egress the switch's downlink towards it. Rate R, burst max(400 us of R, two
# full frames), latency 5 ms; MTU M everywhere; IPv6 off; no IPv4 on v*/b*.
#
# Before lanecast runs, the same testbed is measured without it: link_probe's
# raw AF_PACKET blast on one hop (the line rate, next to the nominal rate R/8
# x segment/frame) and on all N-1 hops of a chain at once (what this machine's
# CPUs can move through every link together), and udp_pingpong's 2-byte RTT.
# Then one `lanecast bench` per (algo, size, run), each member's lane paced to
# the links' rate (--port-rate R --port-overhead 0: tbf counts no preamble or
# gap; unpaced, frames pile up behind tbf until af_packet's transmit blocks
# the polling core, 0.3 of the line rate instead of 0.98; arguments after --
# override both), each printed as a row:
#   avg_us, min_us, MB/s      from bench (text mode, --counters)
#   x_line, x_nom             MB/s over the measured and the nominal line rate
#   retx                      tx_retransmits summed over members
#   cpu, wall_s               CPUs the bench process kept busy over its life
#                             (EAL start-up included), and that life
#   up_*/dn_*                 tc counters of this run (after - before) summed
#                             over uplinks v* and downlinks b*: MB, packets,
#                             drops; per link below the row unless --no-links
#   load                      1-minute load average (other programs' noise)
# and at the end the median over runs, and one-frame sizes beside UDP RTT/2.
#
# Latency rows need a warm-up longer than af_packet's ring (framecnt, 512 frames
# per port by default): until each ring has gone round once, every frame costs
# the kernel about 3.5 us more (2-byte linear, 8 nodes: the last member holds
# 25 us after the first for broadcasts 1-512, 2 us after; with framecnt=1024
# the step moves to 1024). E.g. --sizes 2 --iters 1000 --warmup 600.
#
# Needs root, iproute2 (ip, tc, bridge), and the build: lanecast, and
# link_probe and udp_pingpong from tests/bench (in lanecast's build directory).
# Exit status: 0 all verified, 1 a broadcast failed or was not verified,
# 2 bad usage or missing prerequisites; another nonzero status if building
# the testbed failed (the failing command says why).
set -euo pipefail

readonly PREFIX=lctb
readonly UDP_PORT=7777

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"  # ring_devargs, size_bytes
nodes=8 rate=200 mtu=1500 algos=chain sizes=8M iters=5 warmup=1 runs=3
lanecast=$repo/build/apps/lanecast keep=0 links=1 udp=1
extra=()

usage() { sed -n '6,9p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
die() { echo "shaped_testbed: $*" >&2; exit 2; }

# ---------------------------------------------------------------- options

parse_args() {
  while (($#)); do
    case $1 in
      --keep|--no-links|--no-udp|--down|-h|--help|--) ;;
      *) (($# >= 2)) || die "$1 needs a value" ;;
    esac
    case $1 in
      --nodes) nodes=$2; shift ;;
      --rate) rate=$2; shift ;;
      --mtu) mtu=$2; shift ;;
      --algos) algos=$2; shift ;;
      --sizes) sizes=$2; shift ;;
      --iters) iters=$2; shift ;;
      --warmup) warmup=$2; shift ;;
      --runs) runs=$2; shift ;;
      --lanecast) lanecast=$2; shift ;;
      --keep) keep=1 ;;
      --no-links) links=0 ;;
      --no-udp) udp=0 ;;
      --down) need_root; teardown_leftovers; exit 0 ;;
      -h|--help) usage 0 ;;
      --) shift; extra=("$@"); break ;;
      *) echo "shaped_testbed: unknown option $1" >&2; usage 2 ;;
    esac
    shift
  done
  local v
  for v in nodes rate mtu iters warmup runs; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "--$v must be a whole number, not '${!v}'"
  done
  ((nodes >= 2 && nodes <= 64)) || die "--nodes must be 2..64"
  ((rate >= 1 && rate <= 100000)) || die "--rate must be 1..100000 Mbit/s"
  ((mtu >= 576 && mtu <= 9000)) || die "--mtu must be 576..9000"
  ((runs >= 1 && runs <= 100)) || die "--runs must be 1..100"
  ((iters >= 1)) || die "--iters must be at least 1"
}

need_root() { [[ $(id -u) -eq 0 ]] || die "must run as root (it creates namespaces, veths and qdiscs)"; }

check_prerequisites() {
  need_root
  command -v ip >/dev/null || die "'ip' (iproute2) is missing: apt-get install iproute2"
  command -v tc >/dev/null || die "'tc' (iproute2) is missing: apt-get install iproute2"
  command -v bridge >/dev/null || die "'bridge' (iproute2) is missing: apt-get install iproute2"
  command -v timeout >/dev/null || die "'timeout' (coreutils) is missing"
  [[ -x $lanecast ]] || die "lanecast binary '$lanecast' is missing: build first (meson setup build && ninja -C build)"
  lanecast=$(realpath "$lanecast")
  local builddir
  builddir=$(dirname "$(dirname "$lanecast")")
  probe=$builddir/tests/bench/link_probe
  pingpong=$builddir/tests/bench/udp_pingpong
  [[ -x $probe ]] || die "$probe is missing: ninja -C $builddir tests/bench/link_probe"
  [[ -x $pingpong ]] || die "$pingpong is missing: ninja -C $builddir tests/bench/udp_pingpong"
  ip netns add "${PREFIX}probe$$" 2>/dev/null || die "cannot create network namespaces here"
  ip netns del "${PREFIX}probe$$"
  modprobe -q sch_tbf 2>/dev/null || true
}

# ---------------------------------------------------------------- derived settings

# lanecast's frame is 14 (Ethernet) + 72 (its headers) + the segment; pick the
# largest round segment that fits the MTU unless the caller chose one.
choose_segment() {
  segment=""
  local i
  for ((i = 0; i < ${#extra[@]}; i++)); do
    [[ ${extra[i]} == --segment ]] && segment=${extra[i + 1]:-}
  done
  if [[ -n $segment ]]; then
    segment_args=()
  else
    if ((mtu >= 8192 + 72)); then segment=8192
    elif ((mtu >= 1400 + 72)); then segment=1400
    else segment=$((mtu - 72)); fi
    segment_args=(--segment "$segment")
  fi
  [[ $segment =~ ^[0-9]+$ ]] || die "--segment must be a number of bytes (K/M suffixes not handled here)"
  frame=$((14 + 72 + segment))
  ((frame <= mtu + 14)) || die "segment $segment makes $frame-byte frames, more than MTU $mtu allows"
}

# tbf burst: 400 us of the rate, but at least two full frames (a burst below
# one frame would drop every full-size frame). Bytes.
tbf_burst() {
  local b=$((rate * 50)) two=$((2 * (mtu + 14)))  # R Mbit/s x 400 us / 8 bits
  echo $((b > two ? b : two))
}

# One af_packet port per member. qdisc_bypass=0 is essential: by default the
# PMD sets PACKET_QDISC_BYPASS and its frames would skip the uplink's tbf.
port_list() {
  local i ring out=""
  ring=$(ring_devargs "$mtu")
  for ((i = 0; i < nodes; i++)); do
    out+="net_af_packet$i,iface=v$i,qdisc_bypass=0$ring;"
  done
  echo "${out%;}"
}

# ---------------------------------------------------------------- topology

ns_node=${PREFIX}n$$ ns_switch=${PREFIX}s$$ ns_u0=${PREFIX}a$$ ns_u1=${PREFIX}b$$
server_pid="" child_pid="" workdir="" phase=init
declare -A udp_half=([block]=nan [busy]=nan)  # udp_pingpong's median RTT/2, us

# A namespace with IPv6 off before any interface exists in it (no router
# solicitations or MLD reports on the links we measure).
make_namespace() {
  ip netns add "$1"
  ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
}

shape() {  # ns dev: tbf root qdisc on dev's egress
  tc -n "$1" qdisc replace dev "$2" root tbf rate "${rate}mbit" burst "$(tbf_burst)" latency 5ms
}

# A veth from namespace $1 (end $2) to the switch (end $3 on br0), both ends
# at MTU M and shaped: $2's egress is the uplink, $3's the downlink. The
# bridge is told where $2's MAC lives: otherwise it floods every frame to a
# not-yet-heard member through all downlinks, and the first broadcast of a
# fresh testbed would carry up to N-1 times its bytes.
add_link() {
  local ns=$1 near=$2 far=$3 mac
  ip -n "$ns" link add "$near" mtu "$mtu" type veth peer name "$far" mtu "$mtu" netns "$ns_switch"
  ip -n "$ns_switch" link set "$far" master br0
  mac=$(ip -n "$ns" -br link show dev "$near" | awk '{ print $3 }')
  bridge -n "$ns_switch" fdb replace "$mac" dev "$far" master static
  shape "$ns" "$near"
  shape "$ns_switch" "$far"
  ip -n "$ns_switch" link set "$far" up
  ip -n "$ns" link set "$near" up
}

# Stp is off by default; forward_delay 0 makes that explicit so no port
# waits in the learning state while the bench starts.
make_switch() {
  ip -n "$ns_switch" link add br0 mtu "$mtu" type bridge stp_state 0 forward_delay 0
  ip -n "$ns_switch" link set br0 up
}

build_testbed() {
  make_namespace "$ns_node"
  make_namespace "$ns_switch"
  make_switch
  local i
  for ((i = 0; i < nodes; i++)); do add_link "$ns_node" "v$i" "b$i"; done
  if ((udp)); then
    make_namespace "$ns_u0"
    make_namespace "$ns_u1"
    add_link "$ns_u0" u0 bu0
    add_link "$ns_u1" u1 bu1
    ip -n "$ns_u0" addr add 10.77.0.1/24 dev u0
    ip -n "$ns_u1" addr add 10.77.0.2/24 dev u1
  fi
  ip -n "$ns_switch" link set br0 mtu "$mtu"  # the bridge takes its ports' minimum; say it
  local ns
  for ns in "$ns_node" "$ns_switch"; do
    [[ -z $(ip -n "$ns" -6 addr show) ]] || die "IPv6 addresses remain in $ns"
  done
}

teardown() {
  local ns
  for ns in "$ns_u1" "$ns_u0" "$ns_switch" "$ns_node"; do ip netns del "$ns" 2>/dev/null || true; done
}

# Namespaces of earlier runs, except those of a run still alive.
teardown_leftovers() {
  local ns pid n=0
  while read -r ns _; do
    [[ $ns =~ ^${PREFIX}[nsab]([0-9]+)$ ]] || continue
    pid=${BASH_REMATCH[1]}
    if [[ $pid != "$$" ]] && grep -qs shaped_testbed "/proc/$pid/cmdline"; then
      echo "keeping $ns: run $pid is still alive"
      continue
    fi
    ip netns del "$ns" && n=$((n + 1))
  done < <(ip netns list)
  echo "removed $n namespace(s)"
}

# Stops what this run started (by pid), then removes or keeps the testbed.
# shellcheck disable=SC2317  # reached through the EXIT trap
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  set +e  # tear down as much as possible whatever fails
  [[ $rc -ne 0 && $phase == setup ]] && echo "shaped_testbed: building the testbed failed (exit $rc)" >&2
  local pid
  for pid in $child_pid $server_pid; do
    kill -TERM "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if ((keep)); then
    echo "# --keep: testbed left up: namespaces $ns_node $ns_switch$( ((udp)) && echo " $ns_u0 $ns_u1")"
    echo "#   e.g. ip netns exec $ns_node $lanecast bench --ports '$(port_list 2>/dev/null)' ..."
    echo "#   remove with: $0 --down   (or: ip netns del $ns_node; ip netns del $ns_switch ...)"
    echo "#   logs in $workdir"
  else
    teardown
    [[ -n $workdir ]] && rm -rf "$workdir"
  fi
  exit "$rc"
}

# Runs a command in the background and waits, so INT/TERM reach the trap at
# once; `timeout` bounds it either way.
run_bounded() {
  local secs=$1
  shift
  timeout -k 5 "$secs" "$@" &
  child_pid=$!
  local rc=0
  wait "$child_pid" || rc=$?
  child_pid=""
  return "$rc"
}

# ---------------------------------------------------------------- yardsticks

# Raw AF_PACKET frames v0 -> br0 -> v1 through both tbf, lanecast's frame size.
measure_line_rate() {
  local out
  probe v0 v1 >"$workdir/probe.out"
  out=$(<"$workdir/probe.out")
  line_mbps=$(kv payload_MBps <<<"$out")
  line_fps=$(kv delivered_fps <<<"$out")
  nominal_mbps=$(awk -v r="$rate" -v s="$segment" -v f="$frame" 'BEGIN { printf "%.3f", r / 8 * s / f }')
  echo "# line rate (link_probe v0->v1, $frame-byte frames, 2 s after 0.5 s warm-up): $line_fps frames/s," \
       "payload $line_mbps MB/s; nominal ${rate} Mbit/s x $segment/$frame = $nominal_mbps MB/s"
  echo "#   $out"
}

# The same blast on every hop of a chain at once (v0->v1 ... vN-2->vN-1):
# all links share this machine's CPUs for veth, bridge and tbf work, so this
# is roughly what the testbed can carry when N-1 links are busy (its slowest
# hop bounds a pipelined broadcast), whatever the nominal rate says. Rough:
# the probe's own threads compete for the same CPUs as the links.
measure_concurrent_rate() {
  local tx="" rx="" i out
  for ((i = 0; i + 1 < nodes; i++)); do tx+="v$i,"; rx+="v$((i + 1)),"; done
  probe "${tx%,}" "${rx%,}" >"$workdir/probe_chain.out"
  out=$(<"$workdir/probe_chain.out")
  echo "# concurrent ceiling ($((nodes - 1)) hops v0->v1..v$((nodes - 2))->v$((nodes - 1)) blasting at once):" \
       "slowest hop $(kv min_pair_payload_MBps <<<"$out") MB/s payload, mean $(kv payload_MBps <<<"$out")," \
       "all hops $(kv total_payload_MBps <<<"$out") MB/s"
  echo "#   $out"
}

probe() {
  run_bounded 30 ip netns exec "$ns_node" "$probe" --tx "$1" --rx "$2" --frame "$frame" \
    --seconds 2 --warmup 0.5 >"$workdir/probe.tmp" 2>&1 || die "link_probe failed: $(cat "$workdir/probe.tmp")"
  cat "$workdir/probe.tmp"
}

# 2-byte UDP round trips u0 -> u1 and back, each way through two tbf.
measure_udp() {
  local mode out
  for mode in block busy; do
    local flag=()
    [[ $mode == busy ]] && flag=(--busy)
    ip netns exec "$ns_u1" "$pingpong" server 10.77.0.2 "$UDP_PORT" "${flag[@]}" --idle 5 >/dev/null &
    server_pid=$!
    sleep 0.2
    run_bounded 60 ip netns exec "$ns_u0" "$pingpong" client 10.77.0.2 "$UDP_PORT" "${flag[@]}" \
      --count 2000 --warmup 200 >"$workdir/udp.$mode" 2>&1 || echo "# udp_pingpong ($mode) failed" >&2
    out=$(<"$workdir/udp.$mode")
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
    udp_half[$mode]=$(kv half_median_us <<<"$out")
    echo "# udp 2-byte ping-pong, $mode recv ($([[ $mode == busy ]] && echo 'spinning on MSG_DONTWAIT, like a polling core' || echo 'sleeping in poll()')):" \
         "RTT min/median/p99 $(kv min_us <<<"$out")/$(kv median_us <<<"$out")/$(kv p99_us <<<"$out") us," \
         "RTT/2 median $(kv half_median_us <<<"$out") us"
  done
}

kv() { tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2; exit }'; }

# ---------------------------------------------------------------- tc counters

# "dev bytes packets dropped overlimits" for every uplink (v*) and downlink (b*).
tc_snapshot() {
  local i
  for ((i = 0; i < nodes; i++)); do
    tc -n "$ns_node" -s qdisc show dev "v$i" | tc_parse "v$i"
    tc -n "$ns_switch" -s qdisc show dev "b$i" | tc_parse "b$i"
  done
}

tc_parse() {
  awk -v dev="$1" '/^qdisc tbf/ { t = 1 }
    t && /Sent/ { d = $7; sub(",", "", d); o = $9; sub(",", "", o); print dev, $2, $4, d, o; exit }'
}

# after - before, per device (both files in tc_snapshot's format, same order).
tc_diff() {
  paste -d' ' "$1" "$2" | awk '{ print $1, $7 - $2, $8 - $3, $9 - $4, $10 - $5 }'
}

# ---------------------------------------------------------------- one bench run

# Bounds a run generously: linear sends N-1 copies from the root's uplink.
bench_timeout() {
  local bytes
  bytes=$(size_bytes "$1")
  awk -v b="$bytes" -v n="$nodes" -v r="$rate" -v k=$((iters + warmup)) \
    'BEGIN { printf "%d", 120 + 4 * k * b * 1.1 * n * 8 / (r * 1e6) }'
}

# Runs lanecast bench once (text mode: it prints --counters only there) and
# appends one result row; the raw output stays in $workdir for inspection.
bench_once() {
  local algo=$1 size=$2 run=$3 tag="$1.$2.$3"
  local out=$workdir/$tag.out before=$workdir/$tag.tc0 after=$workdir/$tag.tc1 rc=0
  tc_snapshot >"$before"
  local t0 c0 c1 t1
  t0=$(date +%s.%N)
  children_cpu >"$workdir/cpu0"
  run_bounded "$(bench_timeout "$size")" ip netns exec "$ns_node" "$lanecast" bench --ports "$ports" \
    --algo "$algo" --sizes "$size" --iters "$iters" --warmup "$warmup" --counters \
    --port-rate "$rate" --port-overhead 0 "${segment_args[@]}" "${extra[@]}" >"$out" 2>&1 || rc=$?
  children_cpu >"$workdir/cpu1"
  t1=$(date +%s.%N)
  c0=$(<"$workdir/cpu0")
  c1=$(<"$workdir/cpu1")
  tc_snapshot >"$after"
  tc_diff "$before" "$after" >"$workdir/$tag.tc"
  local cpu wall
  wall=$(awk -v s="$t0" -v e="$t1" 'BEGIN { printf "%.1f", e - s }')
  cpu=$(awk -v a="$c0" -v b="$c1" -v w="$wall" 'BEGIN { printf "%.2f", (b - a) / w }')
  parse_bench "$out" "$rc" "$algo" "$size" "$run" "$cpu" "$wall" "$workdir/$tag.tc" \
    "$(cut -d' ' -f1 /proc/loadavg)" >>"$workdir/rows"
  print_row "$(tail -n 1 "$workdir/rows")"
  ((links)) && print_links "$workdir/$tag.tc" "$size"
  if [[ $rc -ne 0 ]] || ! grep -q ' yes' "$out"; then
    status=1
    echo "#   FAILED (exit $rc); bench said:" >&2
    grep -v '^rank\|^  port' "$out" | tail -n 5 | sed 's/^/#     /' >&2
  fi
}

# CPU seconds (user + sys) of this shell's waited-for children so far.
# `times` must run in this shell (a subshell's children start from zero), so
# callers redirect it instead of capturing it with $(...).
children_cpu() {
  times >"$workdir/times"
  awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.3f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
    "$workdir/times"
}

# One row of $workdir/rows, fields:
#   1 algo  2 size  3 run  4 avg_us  5 min_us  6 MB/s  7 x_line  8 x_nominal
#   9 retransmits  10 cpu (CPUs busy over the process's life)  11 wall_s  12 ok
#   13-15 uplinks' bytes, packets, drops  16-18 the same for downlinks
#   19 the machine's load average when the run ended (other programs' noise)
parse_bench() {
  local out=$1 rc=$2 algo=$3 size=$4 run=$5 cpu=$6 wall=$7 tcf=$8 load=$9
  awk -v algo="$algo" -v size="$size" -v run="$run" -v cpu="$cpu" -v wall="$wall" -v rc="$rc" -v load="$load" \
      -v line="$line_mbps" -v nom="$nominal_mbps" -v tcf="$tcf" '
    # Columns by their header names: bench grows columns now and then.
    /^ *size +iters/ { for (i = 1; i <= NF; i++) col[$i] = i; hdr = 1; next }
    hdr && !row && /FAILED/ { row = 1; failed = 1 }
    hdr && !row && NF >= 4 {
      row = 1; avg = $col["avg_us"]; mn = $col["min_us"]; mbps = $col["MB/s"]; ok = ($col["verified"] == "yes") }
    /^rank / { for (i = 1; i <= NF; i++) if ($i ~ /^tx_retransmits=/) { split($i, kvp, "="); retx += kvp[2] } }
    END {
      while ((getline l < tcf) > 0) {
        split(l, f, " ")
        if (f[1] ~ /^v/) { ub += f[2]; up += f[3]; ud += f[4] } else { db += f[2]; dp += f[3]; dd += f[4] }
      }
      if (!row || failed) { avg = "nan"; mn = "nan"; mbps = "nan"; ok = 0 }
      xl = (mbps != "nan" && line > 0) ? sprintf("%.3f", mbps / line) : "nan"
      xn = (mbps != "nan" && nom > 0) ? sprintf("%.3f", mbps / nom) : "nan"
      print algo, size, run, avg, mn, mbps, xl, xn, retx + 0, cpu, wall, (ok && rc == 0) ? "yes" : "NO", \
            ub + 0, up + 0, ud + 0, db + 0, dp + 0, dd + 0, load
    }' "$out"
}

print_table_header() {
  printf "%-9s %5s %3s %10s %10s %7s %6s %6s %6s %4s %5s %3s | %7s %6s %5s | %7s %6s %5s | %4s\n" \
    algo size run avg_us min_us MB/s x_line x_nom retx cpu wall_s ok up_MB up_pkt up_dr dn_MB dn_pkt dn_dr load
}

print_row() {
  awk '{ printf "%-9s %5s %3s %10s %10s %7s %6s %6s %6s %4s %5s %3s | %7.2f %6d %5d | %7.2f %6d %5d | %4s\n",
         $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 / 1e6, $14, $15, $16 / 1e6, $17, $18, $19 }' <<<"$1"
}

# Per link: what each uplink sent and each downlink delivered in this run,
# beside what every receiver must get (payload only, and with lanecast's
# 86 header bytes per data frame: Ethernet 14, lanecast 72).
print_links() {
  local tcf=$1 size bytes per
  bytes=$(size_bytes "$2")
  per=$((bytes * (iters + warmup)))
  local frames=$(((bytes + segment - 1) / segment * (iters + warmup)))
  awk -v per="$per" -v wire=$((per + frames * 86)) '
    /^v/ { up = up sprintf(" %s %.2f/%d/%d", $1, $2 / 1e6, $3, $4) }
    /^b/ { dn = dn sprintf(" %s %.2f/%d/%d", $1, $2 / 1e6, $3, $4) }
    END { printf "#   up   MB/pkt/drop:%s\n#   down MB/pkt/drop:%s\n", up, dn
          printf "#   each receiver needs %.2f MB payload (%.2f MB with data headers)\n", per / 1e6, wire / 1e6 }' "$tcf"
}

# Median over the verified runs per (algo, size) of the timing columns,
# both ratios, retransmits, CPU and the tc drops.
print_medians() {
  echo
  echo "# median over verified runs"
  printf "%-9s %5s %4s %10s %10s %7s %6s %6s %6s %4s %5s %5s\n" \
    algo size ok avg_us min_us MB/s x_line x_nom retx cpu up_dr dn_dr
  awk '{ k = $1 " " $2; if (!(k in n)) order[++m] = k; if (!(k in ok)) ok[k] = 0; n[k]++
         if ($12 != "yes") next
         ok[k]++; v[k, 15, ok[k]] = $15; v[k, 18, ok[k]] = $18
         for (c = 4; c <= 10; c++) v[k, c, ok[k]] = $c }
       function med(k, c, fmt,   i, j, t, a, cnt) {
         cnt = ok[k]; if (!cnt) return "nan"
         for (i = 1; i <= cnt; i++) a[i] = v[k, c, i] + 0
         for (i = 2; i <= cnt; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
         return sprintf(fmt, cnt % 2 ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2) }
       END { for (i = 1; i <= m; i++) { k = order[i]; split(k, p, " ")
               printf "%-9s %5s %4s %10s %10s %7s %6s %6s %6s %4s %5s %5s\n", p[1], p[2], ok[k] "/" n[k],
                 med(k, 4, "%.1f"), med(k, 5, "%.1f"), med(k, 6, "%.1f"), med(k, 7, "%.3f"),
                 med(k, 8, "%.3f"), med(k, 9, "%d"), med(k, 10, "%.2f"), med(k, 15, "%d"), med(k, 18, "%d") } }' "$workdir/rows"
}

# Messages of one frame: their time is latency, so put it beside the
# kernel's (udp_pingpong's median RTT/2, one hop through two tbf).
print_latency() {
  ((udp)) || return 0
  local rows
  rows=$(awk -v seg="$segment" '{ b = $2 + 0; u = toupper(substr($2, length($2)))
    b *= u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1 }
    $12 == "yes" && b <= seg' "$workdir/rows")
  [[ -n $rows ]] || return 0
  echo
  echo "# one-frame messages beside UDP RTT/2 (median; block ${udp_half[block]} us, busy ${udp_half[busy]} us)"
  printf "%-9s %5s %3s %10s %10s %12s %12s\n" algo size run avg_us min_us min/udp_blk min/udp_busy
  awk -v b="${udp_half[block]}" -v p="${udp_half[busy]}" '{
    xb = b > 0 ? sprintf("%.1f", $5 / b) : "nan"; xp = p > 0 ? sprintf("%.1f", $5 / p) : "nan"
    printf "%-9s %5s %3s %10s %10s %12s %12s\n", $1, $2, $3, $4, $5, xb, xp }' <<<"$rows"
}

# ---------------------------------------------------------------- main

main() {
  parse_args "$@"
  check_prerequisites
  choose_segment
  ports=$(port_list)
  workdir=$(mktemp -d /tmp/shaped_testbed.XXXXXX)
  trap cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  phase=setup
  build_testbed
  phase=run
  status=0

  echo "# shaped testbed: $nodes nodes, tbf $rate Mbit/s burst $(tbf_burst) B latency 5 ms on every uplink and" \
       "downlink, MTU $mtu, segment $segment B ($frame-byte frames), lanecast $lanecast"
  echo "# ports: ${ports%%;*};... ($nodes ports, v0..v$((nodes - 1)))"
  echo "# bench args: --port-rate $rate --port-overhead 0 ${segment_args[*]} ${extra[*]}"
  echo "# commit: $(git -C "$(dirname "$lanecast")" describe --always --dirty 2>/dev/null || echo unknown)," \
       "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
  measure_line_rate
  measure_concurrent_rate
  ((udp)) && measure_udp
  echo
  print_table_header
  local algo size run
  for algo in ${algos//,/ }; do
    for size in ${sizes//,/ }; do
      for ((run = 1; run <= runs; run++)); do bench_once "$algo" "$size" "$run"; done
    done
  done
  print_medians
  print_latency
  exit "$status"
}

main "$@"
