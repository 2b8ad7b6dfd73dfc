#!/usr/bin/env bash
# What one local application may take from `lanecast daemon`, and that
# every refusal is counted under its reason (lanecast_clients_refused_by_reason):
#   - a ring larger than --max-ring (the default, 64M: a client asks 2 GiB) -> ring_size
#   - connections that never say hello hold a --max-clients slot only for
#     --hello-timeout: while they do, another client is refused
#     (too_many_clients); then they are closed (hello_timeout) and the
#     client gets in
#   - a hello of the wrong size (bad_hello), of another format version (version)
#   - all clients' memory past --max-client-memory (memory_total)
#
# usage: daemon_limits_test.sh lanecast stream_publisher stream_subscriber
set -u
bin=$(realpath "${1:?usage: daemon_limits_test.sh lanecast stream_publisher stream_subscriber}")
pub=$(realpath "${2:?}")
sub=$(realpath "${3:?}")
raw=$(dirname "$(realpath "${BASH_SOURCE[0]}")")/raw_client.py
# shellcheck source=tests/security/daemon_net.sh
source "$(dirname "${BASH_SOURCE[0]}")/daemon_net.sh"
daemon_net_skip_unless_root
tag=lcli$$
daemon_net_up "$tag"
dir=/dev/shm/lanecast-$tag-r0
status=0
fail() { echo "FAIL: $*"; status=1; }
ok() { ((status == 0)) && echo "ok: $*"; }
refused() { daemon_counter "$dir" "lanecast_clients_refused_by_reason{reason=\"$1\"}"; }
mib=$((1 << 20))

daemon_start "$dir" --max-clients 4 --max-client-memory 48M --hello-timeout 500
daemon_wait "$dir"

# A ring past --max-ring (its default).
if timeout 20 "$sub" --dir "$dir" --count 1 --timeout 5 --ring $((2048 * mib)) >"$work/big.out" 2>&1; then
  fail "a client got a 2 GiB ring"
else
  grep -q "refused (ring_size)" "$work/big.out" || fail "2 GiB ring: $(cat "$work/big.out")"
fi

# Silent connections hold the slots, for --hello-timeout only.
python3 "$raw" "$dir/control.sock" silent 4 >"$work/silent.out" 2>&1 &
silent=$!
for ((t = 0; t < 100; t++)); do grep -q open "$work/silent.out" && break; sleep 0.05; done
if timeout 20 "$sub" --dir "$dir" --count 1 --timeout 5 >"$work/full.out" 2>&1; then
  fail "a fifth client was served while four connections held --max-clients 4"
else
  grep -q "refused (too_many_clients)" "$work/full.out" || fail "fifth client: $(cat "$work/full.out")"
fi
wait "$silent"
closed=$(grep -c "^3 no hello within --hello-timeout" "$work/silent.out")
((closed == 4)) || fail "silent connections: $(cat "$work/silent.out")"
timeout 30 "$sub" --dir "$dir" --members 1 --ids 1 --count 50 --timeout 20 --name after-silence >"$work/after.out" 2>&1 &
after=$!
sleep 0.3
timeout 30 "$pub" --dir "$dir" --id 1 --count 50 >"$work/pub.out" 2>&1 || fail "publisher: $(cat "$work/pub.out")"
wait "$after" || fail "a client once the silent ones were closed: $(cat "$work/after.out")"
ok "4 silent connections were closed after the hello timeout ($(sed -n 2p "$work/silent.out" | cut -d' ' -f7-));" \
  "meanwhile a fifth client was refused; then a client got in"

# Hellos that are none.
python3 "$raw" "$dir/control.sock" short >"$work/short.out" 2>&1
grep -q "^4 malformed hello" "$work/short.out" || fail "a 10-byte hello: $(cat "$work/short.out")"
python3 "$raw" "$dir/control.sock" version 1 >"$work/version.out" 2>&1
grep -q "^5 client library of format 1" "$work/version.out" || fail "a hello of format 1: $(cat "$work/version.out")"

# All clients' memory: two 20M subscribers fit 48M, a third does not.
holders=()
for i in 1 2; do
  timeout 60 "$sub" --dir "$dir" --count 1 --timeout 50 --ring $((20 * mib)) --name "holder$i" >"$work/h$i.out" 2>&1 &
  holders+=($!)
done
sleep 1
if timeout 20 "$sub" --dir "$dir" --count 1 --timeout 5 --ring $((20 * mib)) >"$work/third.out" 2>&1; then
  fail "a third 20M client fit --max-client-memory 48M"
else
  grep -q "refused (memory_total)" "$work/third.out" || fail "third client: $(cat "$work/third.out")"
fi
memory=$(daemon_counter "$dir" lanecast_clients_memory_bytes)
((memory > 40 * mib && memory <= 48 * mib)) || fail "the daemon says its clients hold $memory bytes"
kill "${holders[@]}" 2>/dev/null
wait "${holders[@]}" 2>/dev/null

sleep 0.3
for reason in ring_size:1 too_many_clients:1 hello_timeout:4 bad_hello:1 version:1 memory_total:1; do
  n=$(refused "${reason%:*}")
  ((n == ${reason#*:})) || fail "refused for ${reason%:*}: counted $n, not ${reason#*:}"
done
"$bin" stat --dir "$dir" --once --filter refused | sed 's/^/  /'
((status == 0)) && echo "ok: every refusal counted under its reason"
daemon_stop
exit $status
