#!/usr/bin/env bash
# The three bootstraps on one testbed: 3 member processes, each in its own
# network namespace with a veth to a Linux bridge, form the group by the
# static bootstrap (addresses from the file), by discovery (hellos on the
# wire) and by PMIx (Open MPI's mpirun started them; the key-value store).
# Every broadcast must be verified and the three endpoint tables must be the
# same (ranks and addresses; epochs differ by design). Then what PMIx must
# refuse, each by a clear message: a --rank other than the launcher's, a job
# of another size, a member with another group file, a record that is not
# one, a fence a member never reaches, no launcher at all, a launcher's
# server that is gone.
#
# mpirun runs in node 0's namespace; its PMIx server listens on v0's IPv4
# address (PMIX_MCA_ptl_tcp_remote_connections, _if_include) so members in
# the other namespaces reach it across the bridge. Everything this test
# creates is removed on any exit; every process is bounded by `timeout`.
#
# usage: pmix_test.sh path/to/lanecast path/to/pmix_impostor|built-without-pmix
set -u
bin=${1:?usage: pmix_test.sh path/to/lanecast path/to/pmix_impostor}
impostor=${2:?usage: pmix_test.sh path/to/lanecast path/to/pmix_impostor}
nodes=3
if [[ $impostor == built-without-pmix ]]; then
  echo "SKIP: lanecast was built without PMIx (apt-get install libpmix-dev, reconfigure)"
  exit 77
fi
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
  echo "SKIP: needs root and iproute2 to create namespaces, a bridge and veths"
  exit 77
fi
if ! command -v mpirun >/dev/null; then
  echo "SKIP: needs mpirun (apt-get install openmpi-bin) to start members under PMIx"
  exit 77
fi
tag=lcpx$$
# shellcheck source=tests/net/member_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/member_net.sh"
member_net_test "$tag" "$nodes" 10.77.0  # with addresses: PMIx's TCP
write_group() { write_member_group "$1" "$2" "px$nodes" 23 15000 1M "$nodes"; }  # BOOTSTRAP FILE
sizes=1,1428,1429,64K,1M
nsizes=5
run_args=(--yield-when-idle --sizes "$sizes" --iters 2 --show-endpoints)

status=0
fail() { echo "FAIL: $*"; status=1; }

# Static and discovery: one process per namespace, started by this script.
for boot in static discovery; do
  write_group "$boot" "$work/$boot.toml"
  pids=()
  for ((i = 0; i < nodes; i++)); do
    timeout -k 5 30 ip netns exec "${tag}n$i" "$bin" run --config "$work/$boot.toml" --rank "$i" "${run_args[@]}" \
      >"$work/$boot.$i.out" 2>&1 &
    pids+=($!)
  done
  for ((i = 0; i < nodes; i++)); do
    wait "${pids[i]}"
    echo $? >"$work/$boot.$i.rc"
  done
  pids=()
done

# Under mpirun: each member (an app context of its own, so it can enter its
# namespace) writes its output and exit status to files named by its rank.
cat >"$work/member.sh" <<'EOF'
#!/bin/sh
# member.sh NS OUT COMMAND...: one process of the job, in namespace NS.
# timeout --foreground stays in this process group, which mpirun kills
# when another process of the job fails.
ns=$1 out=$2
shift 2
ip netns exec "$ns" timeout -k 5 --foreground 20 "$@" >"$out" 2>&1
rc=$?
echo $rc >"$out.rc"
exit $rc
EOF
chmod +x "$work/member.sh"
# launch NAME NP CMD_FOR_RANK: mpirun NP processes, process i in namespace i
# running the words CMD_FOR_RANK prints for i; output in NAME.i.out.
launch() {
  local name=$1 np=$2 make=$3 i app=() words
  for ((i = 0; i < np; i++)); do
    ((i)) && app+=(:)
    read -r -a words <<<"$($make "$i")"
    app+=(-np 1 "$work/member.sh" "${tag}n$i" "$work/$name.$i.out" "${words[@]}")
  done
  PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include=v0 \
    timeout -k 5 40 ip netns exec "${tag}n0" mpirun --allow-run-as-root --oversubscribe --bind-to none \
    -x PMIX_MCA_ptl_tcp_remote_connections -x PMIX_MCA_ptl_tcp_if_include "${app[@]}" >"$work/$name.mpirun" 2>&1
}
# The members take their rank from the launcher (process 0 also says it).
pmix_member() { echo "$bin run --config $work/pmix.toml ${run_args[*]} $( (($1 == 0)) && echo --rank 0)"; }
write_group pmix "$work/pmix.toml"
launch pmix "$nodes" pmix_member || fail "mpirun exited $? (its output: $(head -5 "$work/pmix.mpirun"))"

for boot in static discovery pmix; do
  for ((i = 0; i < nodes; i++)); do
    sed "s/^/[$boot rank $i] /" "$work/$boot.$i.out"
    rc=$(cat "$work/$boot.$i.out.rc" "$work/$boot.$i.rc" 2>/dev/null | head -1)
    if [[ $rc != 0 ]]; then
      fail "$boot bootstrap, rank $i exited ${rc:-(killed)}"
    elif [[ $(grep -c " yes$" "$work/$boot.$i.out") -ne $nsizes ]]; then
      fail "$boot bootstrap, rank $i did not verify all $nsizes sizes"
    fi
    grep "^rank [0-9]* lane" "$work/$boot.$i.out" >"$work/$boot.$i.endpoints"
    [[ -s $work/$boot.$i.endpoints ]] || fail "$boot bootstrap, rank $i printed no endpoint table"
    cmp -s "$work/$boot.0.endpoints" "$work/$boot.$i.endpoints" ||
      fail "$boot bootstrap: ranks 0 and $i found different tables"
  done
  epochs=$(sed -n 's/^# lanecast run: .*, epoch \([0-9]*\),.*/\1/p' "$work/$boot".*.out | sort -u)
  echo "# $boot: epoch(s) $(echo $epochs)"
  [[ $(wc -w <<<"$epochs") -eq 1 ]] || fail "$boot bootstrap: the members disagree on the epoch ($(echo $epochs))"
done
for boot in discovery pmix; do
  if ! cmp -s "$work/static.0.endpoints" "$work/$boot.0.endpoints"; then
    fail "the static and $boot bootstraps found different endpoint tables:"
    diff "$work/static.0.endpoints" "$work/$boot.0.endpoints"
  fi
done
echo "# endpoint table (static = discovery = pmix):"
sed 's/^/#   /' "$work/static.0.endpoints"

# What PMIx must refuse. expect NAME "PROCESSES" STATUS PATTERN: each listed
# process of the run NAME said PATTERN and exited STATUS - or was killed by
# mpirun once another had failed (a failing process ends the job, sometimes
# before the others got as far as saying why), but at least one exited by
# itself.
expect() {
  local name=$1 list=$2 want=$3 pattern=$4 i rc exited=0
  for i in $list; do
    rc=$(cat "$work/$name.$i.out.rc" 2>/dev/null)
    if [[ -z $rc ]] && ! grep -qE -- "$pattern" "$work/$name.$i.out"; then
      echo "# $name, process $i: killed by mpirun before it said why"
      continue
    fi
    if [[ -n $rc && $rc != "$want" ]] || ! grep -qE -- "$pattern" "$work/$name.$i.out"; then
      fail "$name: process $i exited ${rc:-(killed)}, wanted $want and /$pattern/; it said:"
      sed 's/^/    /' "$work/$name.$i.out" | head -5
      return
    fi
    [[ -n $rc ]] && exited=$((exited + 1))
    echo "# $name, process $i (exit ${rc:-killed}): $(grep -E -- "$pattern" "$work/$name.$i.out" | head -1)"
  done
  ((exited > 0)) || fail "$name: every process was killed; none exited by itself"
}
# A --rank that is not the launcher's (processes 0 and 1 swapped).
swapped() { echo "$bin run --config $work/pmix.toml --rank $(($1 < 2 ? 1 - $1 : $1)) --sizes 1"; }
launch swapped "$nodes" swapped
expect swapped "0 1" 2 "--rank (0, but the PMIx launcher started this process as rank 1|1, but the PMIx launcher started this process as rank 0) "
# A job of two processes for a group of three.
short() { echo "$bin run --config $work/pmix.toml --sizes 1"; }
launch short 2 short
expect short "0 1" 2 "the group has 3 members, but the PMIx launcher started 2 processes"
# Rank 2 with another group file (another window): refused by rank, by all.
sed 's/^max_message = .*/&\nwindow = 64/' "$work/pmix.toml" >"$work/other.toml"
other() { echo "$bin run --config $work/$( (($1 == 2)) && echo other || echo pmix).toml --sizes 1"; }
launch other "$nodes" other
expect other "0 1 2" 3 "rank [02] was started with other group settings"
# Rank 2 is not lanecast: bytes that only look like a record, then a string.
key="lanecast.endpoint.23.px$nodes"
for kind in garbage string; do
  fake() { if (($1 == 2)); then echo "$impostor $key $kind"; else short; fi; }
  launch "fake-$kind" "$nodes" fake
done
expect fake-garbage "0 1" 3 "rank 2's endpoint record is unusable: ends inside lane 0's address"
expect fake-string "0 1" 3 "rank 2's 'lanecast.endpoint.23.px3' is not bytes"
# Rank 2 never reaches the fence: the others give up after the timeout.
sed 's/^bootstrap_timeout_ms = .*/bootstrap_timeout_ms = 2000/' "$work/pmix.toml" >"$work/quick.toml"
absent() { if (($1 == 2)); then echo "sleep 15"; else echo "$bin run --config $work/quick.toml --sizes 1"; fi; }
t0=$(date +%s%N)
launch absent "$nodes" absent
echo "# absent: mpirun done $((($(date +%s%N) - t0) / 1000000)) ms after it started"
expect absent "0 1" 3 "gave up waiting in the PMIx fence after 2 s \(bootstrap_timeout_ms 2000\)"
# Not started by a launcher at all.
timeout -k 5 20 ip netns exec "${tag}n0" "$bin" run --config "$work/pmix.toml" --rank 0 --sizes 1 >"$work/alone.0.out" 2>&1
echo $? >"$work/alone.0.out.rc"
expect alone "0" 3 "not started by a PMIx launcher \(mpirun/prterun/srun\)"
# A launcher's environment whose server is gone: refused, no crash.
PMIX_RANK=0 PMIX_NAMESPACE=gone timeout -k 5 20 ip netns exec "${tag}n0" "$bin" run --config "$work/pmix.toml" --sizes 1 \
  >"$work/gone.0.out" 2>&1
echo $? >"$work/gone.0.out.rc"
expect gone "0" 3 "PMIx_Init failed: UNREACHABLE .*server cannot be reached"
exit $status
