#!/usr/bin/env bash
# Real DPDK ports on a real Linux bridge: N members, each on the af_packet PMD
# over its own veth, all veths on one bridge, inside a network namespace this
# test creates (and removes on any exit). Every broadcast must be verified.
#
# usage: af_packet_bridge_test.sh path/to/lanecast [NODES]
set -u
bin=${1:?usage: af_packet_bridge_test.sh path/to/lanecast [NODES]}
nodes=${2:-4}
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create a namespace, a bridge and veths"
  exit 77
fi
ns=lcbr$$
cleanup() { ip netns del "$ns" 2>/dev/null || true; }
trap cleanup EXIT INT TERM
ip netns add "$ns" || { echo "SKIP: cannot create network namespaces here"; exit 77; }
in_ns() { ip netns exec "$ns" "$@"; }
in_ns ip link add br0 type bridge
in_ns ip link set br0 up
ports=""
for ((i = 0; i < nodes; i++)); do
  in_ns ip link add "v${i}" type veth peer name "b${i}"
  in_ns ip link set "b${i}" master br0
  in_ns ip link set "b${i}" up
  in_ns ip link set "v${i}" up
  ports+="net_af_packet${i},iface=v${i};"
done
# Nothing but our frames: no IPv6 chatter on the veths.
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || true

status=0
for algo in linear binomial chain; do
  out=$(timeout 300 ip netns exec "$ns" "$bin" bench --ports "$ports" --algo "$algo" \
        --sizes 1,1399,1400,1401,64K,1M --iters 3 --warmup 1 --counters 2>&1)
  rc=$?
  echo "$out"
  if [[ $rc -ne 0 ]] || grep -q " NO$\|FAILED" <<<"$out"; then
    echo "FAIL: $algo over af_packet (exit $rc)"
    status=1
  fi
done
exit $status
