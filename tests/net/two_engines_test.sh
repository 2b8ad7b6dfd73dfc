#!/usr/bin/env bash
# Two engines on one host always start. Two member processes of one group
# share a network namespace, one on v0 and one on v1 of one bridge, started
# one right after the other - the pair whose af_packet ports DPDK once gave
# the same fanout group id (pid ^ ifindex), so that the second failed to open
# its port about half the time (drivers/dpdk/af_packet_fanout.cc). PAIRS
# pairs back to back; every pair must form its group and verify a broadcast.
# Everything this test creates is removed on any exit.
#
# usage: two_engines_test.sh path/to/lanecast [PAIRS]
set -u
bin=${1:?usage: two_engines_test.sh path/to/lanecast [PAIRS]}
pairs=${2:-20}
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create a namespace, a bridge and veths"
  exit 77
fi
# The members' namespace holds only v0 and v1 (ifindex 2 and 3: neighbours,
# as in the report); the bridge and the veths' other ends live in another.
ns=lc2e$$
sw=lc2s$$
work=$(mktemp -d)
cleanup() {
  local n
  for n in "$ns" "$sw"; do
    ip netns pids "$n" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$n" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM
ip netns add "$ns" || { echo "SKIP: cannot create network namespaces here"; exit 77; }
ip netns add "$sw"
ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip netns exec "$sw" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
ip -n "$sw" link add br0 type bridge
ip -n "$sw" link set br0 up
for i in 0 1; do
  ip -n "$ns" link add "v$i" address "02:00:00:00:2e:0$i" type veth peer name "b$i" netns "$sw"
  ip -n "$sw" link set "b$i" master br0 up
  ip -n "$ns" link set "v$i" up
done
cat >"$work/pair.toml" <<TOML
[group]
name = "pair"
id = 33
bootstrap = "static"
epoch = 5
bootstrap_timeout_ms = 10000
peer_timeout_ms = 3000
max_message = "1M"

[[member]]
rank = 0
lanes = ["net_af_packet0,iface=v0,qdisc_bypass=0"]
macs = ["02:00:00:00:2e:00"]

[[member]]
rank = 1
lanes = ["net_af_packet1,iface=v1,qdisc_bypass=0"]
macs = ["02:00:00:00:2e:01"]
TOML

formed=0
for ((k = 0; k < pairs; k++)); do
  # Started by exec straight from this shell, one after the other, so
  # their pids follow each other as a supervisor's restarts would; the
  # wait for them is bounded. DPDK's id collided for
  # an even first pid: every other pair forks once more first, so both
  # parities are tried whatever this shell's pid.
  if ((k % 2)); then (:); fi
  pids=()
  for r in 0 1; do
    ip netns exec "$ns" "$bin" run --config "$work/pair.toml" --rank "$r" --yield-when-idle \
      --sizes 64K --iters 2 >"$work/pair$k.$r.out" 2>&1 &
    pids+=($!)
  done
  for ((t = 0; t < 600; t++)); do  # at most 60 s for the pair
    running=0
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=1; done
    ((running)) || break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null
  ok=1
  for r in 0 1; do
    if ! wait "${pids[r]}" || [[ $(grep -c " yes$" "$work/pair$k.$r.out") -ne 1 ]]; then
      ok=0
      echo "pair $k, rank $r failed:"
      sed "s/^/  /" "$work/pair$k.$r.out" | tail -5
    fi
  done
  ((formed += ok))
done
echo "$formed of $pairs pairs formed their group and verified a broadcast"
((formed == pairs))
