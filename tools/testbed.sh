#!/usr/bin/env bash
# A shaped testbed of N nodes, one network namespace each - what a cluster of
# N hosts on one switch looks like to lanecast and to MPI:
#
#   NAMEn0..NAMEn(N-1)  one veth v0 each (MAC 02:00:00:01:hh:ll, IPv4
#                       10.78.0.(I+1)/24 for TCP programs such as MPI); with
#                       --lanes 2 also w0, the same MAC, on a second switch
#                       (two NICs on two switches)
#   NAMEs               the switches: br0 with b0..b(N-1), bp0, bp1; br1 with
#                       c0..c(N-1) for lane 1
#   NAMEp               a probe pair p0, p1 on the same bridge (line rate)
#
# tbf on both directions of every link (the node's uplink on vI, the switch's
# downlink on bI): rate R, burst max(400 us of R, two frames), queue 5 ms;
# MTU M; IPv6 off.
#
# usage: tools/testbed.sh up N [--lanes 1|2] [--rate MBIT] [--mtu M] [--name NAME]
#        tools/testbed.sh down [--name NAME]
#        tools/testbed.sh status [--name NAME]
# Default NAME: lctb. Needs root and iproute2. `up` removes what it built if
# any step fails; `down` removes every namespace of NAME.
set -euo pipefail

cmd=${1:-}
shift || true
nodes=0 rate=200 mtu=1500 name=lctb lanes=1
if [[ $cmd == up ]]; then
  nodes=${1:?usage: testbed.sh up N [--rate MBIT] [--mtu M] [--name NAME]}
  shift
fi
while (($#)); do
  case $1 in
    --rate) rate=$2; shift ;;
    --lanes) lanes=$2; shift ;;
    --mtu) mtu=$2; shift ;;
    --name) name=$2; shift ;;
    *) echo "testbed: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[[ $name =~ ^[a-z][a-z0-9]{0,8}$ ]] || { echo "testbed: --name must be 1-9 lowercase letters/digits" >&2; exit 2; }

down() {
  local ns
  for ns in $(ip netns list | awk '{ print $1 }' | grep -E "^${name}(n[0-9]+|s|p)$" || true); do
    ip netns del "$ns"
  done
}

status() {
  local ns
  for ns in $(ip netns list | awk '{ print $1 }' | grep -E "^${name}(n[0-9]+|s|p)$" | sort -V || true); do
    echo "== $ns"
    tc -s -n "$ns" qdisc show | awk '/^qdisc tbf/ { print "  " $0; t = 1; next } t && /Sent/ { print "    " $0; t = 0 }'
  done
}

case $cmd in
  down) down; exit 0 ;;
  status) status; exit 0 ;;
  up) ;;
  *) sed -n '2,20p' "$0"; exit 2 ;;
esac

[[ $nodes =~ ^[0-9]+$ ]] && ((nodes >= 2 && nodes <= 250)) || { echo "testbed: N must be 2..250" >&2; exit 2; }
[[ $lanes == 1 || $lanes == 2 ]] || { echo "testbed: --lanes must be 1 or 2" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || { echo "testbed: needs root" >&2; exit 2; }
if ip netns list | grep -qE "^${name}s\b"; then
  echo "testbed: $name is up already (tools/testbed.sh down --name $name)" >&2
  exit 2
fi
trap 'echo "testbed: setting up failed; removing it" >&2; down' ERR INT TERM

modprobe -q sch_tbf 2>/dev/null || true
burst=$((rate * 50)); two=$((2 * (mtu + 14))); ((burst > two)) || burst=$two
shape() { tc -n "$1" qdisc replace dev "$2" root tbf rate "${rate}mbit" burst "$burst" latency 5ms; }
make_ns() {
  ip netns add "$1"
  ip netns exec "$1" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
  ip -n "$1" link set lo up
}
sw=${name}s
make_ns "$sw"
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 mtu "$mtu" up
if ((lanes == 2)); then
  ip -n "$sw" link add br1 type bridge
  ip -n "$sw" link set br1 mtu "$mtu" up
fi
link() {  # NS IF SWITCH_PORT MAC [BRIDGE]
  ip -n "$1" link add "$2" address "$4" mtu "$mtu" type veth peer name "$3" netns "$sw"
  ip -n "$sw" link set "$3" mtu "$mtu" master "${5:-br0}" up
  ip -n "$1" link set "$2" up
  shape "$1" "$2"
  shape "$sw" "$3"
}
mac() { printf '02:00:00:%02x:%02x:%02x' "$1" $(($2 >> 8)) $(($2 & 255)); }
for ((i = 0; i < nodes; i++)); do
  make_ns "${name}n$i"
  link "${name}n$i" v0 "b$i" "$(mac 1 "$i")"
  ip -n "${name}n$i" addr add "10.78.0.$((i + 1))/24" dev v0
  ((lanes == 2)) && link "${name}n$i" w0 "c$i" "$(mac 1 "$i")" br1
done
make_ns "${name}p"
link "${name}p" p0 bp0 "$(mac 2 0)"
link "${name}p" p1 bp1 "$(mac 2 1)"
trap - ERR INT TERM
echo "testbed $name: $nodes nodes (${name}n0..${name}n$((nodes - 1)), v0$( ((lanes == 2)) && echo " and w0 on a second switch"), 10.78.0.1-$nodes), switch ${name}s, probe ${name}p;" \
     "tbf $rate Mbit/s burst $burst B latency 5 ms both ways; MTU $mtu"
