#!/usr/bin/env bash
# A hostile client against `lanecast daemon`, beside honest ones. The daemon
# (a one-member group on an af_packet veth in a namespace) serves two honest
# publishers and two honest subscribers (apps/examples) while
# tests/security/hostile_client rewrites every word of its own shared
# memory with random and adversarial values for ROUNDS rounds (connecting
# again whenever the daemon cuts it off). Then:
#   - the daemon is still running, and stops cleanly on SIGTERM;
#   - every honest subscriber got every honest message exactly once, intact
#     and in order (the hostile's own records are another format: passed over);
#   - the hostile client was cut off, and the daemon counted it
#     (lanecast_clients_corrupt at least the cut-offs the client saw);
#   - the memfd seals held (the client could not shrink its memory).
# The hostile client's seed is printed; SEED replays a run.
#
# usage: hostile_client_test.sh lanecast stream_publisher stream_subscriber hostile_client [ROUNDS] [SEED]
set -u
bin=$(realpath "${1:?usage: hostile_client_test.sh lanecast stream_publisher stream_subscriber hostile_client [ROUNDS] [SEED]}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
hostile=$(realpath "${4:?}")
rounds=${5:-1000000}
seed=${6:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
count=20000
tag=lchc$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }

# A hostile subscriber that stops reading is evicted after --evict-after:
# short, so that each of its sessions holds the honest stream back briefly.
daemon_start "$dir" --evict-after 300
daemon_wait "$dir"
echo "ok: the daemon listens at $dir"

honest=()
for s in 1 2; do
  timeout 200 "$sub" --dir "$dir" --members 1 --ids 1,2 --count "$count" --timeout 180 --name "honest-sub-$s" \
    >"$work/sub$s.out" 2>&1 &
  honest+=($!)
done
sleep 0.5
timeout 200 "$hostile" --dir "$dir" --rounds "$rounds" --seed "$seed" >"$work/hostile.out" 2>&1 &
hostile_pid=$!
pids+=("$hostile_pid")
for id in 1 2; do
  timeout 200 "$pub" --dir "$dir" --id "$id" --count "$count" --size $((100 * id)) --rate 8000 --name "honest-pub-$id" \
    >"$work/pub$id.out" 2>&1 &
  honest+=($!)
done

start=$SECONDS
wait "$hostile_pid"
hostile_rc=$?
echo "hostile client ($((SECONDS - start)) s): $(tr '\n' ' ' <"$work/hostile.out")"
((hostile_rc == 0)) || fail "the hostile client exited $hostile_rc (2: a seal did not hold; 3: never connected)"
bad=0
for p in "${honest[@]}"; do wait "$p" || bad=$((bad + 1)); done
for f in "$work"/sub*.out "$work"/pub*.out; do sed "s|^|  $(basename "$f"): |" "$f"; done
if ((bad == 0)); then
  echo "ok: 2 honest subscribers got $count messages from each of 2 honest publishers, once, in order and intact"
else
  fail "$bad of ${#honest[@]} honest clients failed"
fi
kill -0 "$daemon_pid" 2>/dev/null || fail "the daemon is gone: $(tail -5 "$work/daemon.out")"

seen=$(sed -n 's/^hostile_client: cut_off=//p' "$work/hostile.out")
sleep 0.3  # the stats file is written every 100 ms
corrupt=$(daemon_counter "$dir" lanecast_clients_corrupt)
"$bin" stat --dir "$dir" --once --filter clients >"$work/stat.out" 2>&1
sed 's/^/  /' "$work/stat.out"
if ((${seen:-0} < 1)); then
  fail "the hostile client was never cut off"
elif ((corrupt < ${seen:-0})); then
  fail "the daemon counted $corrupt clients cut off, the hostile client saw ${seen:-0}"
else
  echo "ok: the hostile client was cut off ${seen:-0} times; the daemon counted $corrupt (seed $seed)"
fi

daemon_stop
((status == 0)) && echo "ok: the daemon stopped cleanly"
exit $status
