#!/usr/bin/env bash
# Faults on joined members' ports: three member processes, each in its own
# network namespace on a bridge, run `lanecast bench --config` on a group
# file with a [group.faults] table (5% loss, 2% reordering, 1% duplication,
# 0.5% corruption of every frame received) and a [[group.faults.link]] rule
# (member 0, the root, loses a third of the multicasts it sends). Every member checks
# every byte; each port's counters must show what its rules did - and only
# its rules. Everything it creates is removed on any exit.
#
# usage: faults_test.sh path/to/lanecast
set -u
bin=${1:?usage: faults_test.sh path/to/lanecast}
nodes=3
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create namespaces, a bridge and veths"
  exit 77
fi
tag=lcft$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/member_net.sh"
member_net_test "$tag" "$nodes"
file=$work/faults.toml
write_member_group static "$file" "faults$nodes" 31 20000 4M "$nodes"
cat >>"$file" <<'TOML'

[group.faults]
seed = 11
loss = 0.05
reorder = 0.02
dup = 0.01
corrupt = 0.005

[[group.faults.link]]
member = 0
direction = "send"
frames = "multicast"
loss = 0.3
TOML

status=0
for ((i = 0; i < nodes; i++)); do
  timeout 120 ip netns exec "${tag}n$i" "$bin" bench --config "$file" --rank "$i" --yield-when-idle --counters \
    --algo chain,mcast_chain --sizes 1,1428,64K,1M --iters 3 --warmup 1 >"$work/$i.out" 2>&1 &
  pids+=($!)
done
for ((i = 0; i < nodes; i++)); do
  wait "${pids[i]}"
  rc=$?
  sed "s/^/[rank $i] /" "$work/$i.out"
  if [[ $rc -ne 0 ]]; then
    echo "FAIL: rank $i exited $rc"
    status=1
  elif ! grep -qE "^  faults received: lost=[1-9]" "$work/$i.out"; then
    echo "FAIL: rank $i's port lost nothing it received"
    status=1
  fi
  # Only member 0 sends with faults: its multicasts, lost a third at a time.
  if ((i == 0)) && ! grep -qE "^  faults sent: lost=[1-9]" "$work/$i.out"; then
    echo "FAIL: rank 0's port lost none of the multicasts it sent"
    status=1
  elif ((i != 0)) && grep -q "^  faults sent:" "$work/$i.out"; then
    echo "FAIL: rank $i's port had faults on what it sent; only rank 0's rule says so"
    status=1
  fi
done
pids=()
if [[ $(grep -c " yes " "$work/0.out") -ne 8 ]]; then
  echo "FAIL: rank 0 did not verify all 8 rows (2 algorithms x 4 sizes)"
  status=1
fi
grep -q "^# faults: loss 0.05, reorder 0.02, dup 0.01, corrupt 0.005 on frames every member receives; loss 0.3 on frames member 0 sends (multicast); seed 11$" \
  "$work/0.out" || { echo "FAIL: rank 0's header does not say the faults"; status=1; }
((status == 0)) && echo "PASS: $nodes member processes under faults, every byte checked"
exit $status
