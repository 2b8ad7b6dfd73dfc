#!/usr/bin/env bash
# The lanecast command on bad input: a clear message and the documented exit
# status, never a crash or a hang. Each case is bounded by `timeout`.
set -u
bin=${1:?usage: cli_test.sh path/to/lanecast}
fails=0
pass=0

# expect STATUS PATTERN ARGS...: exit status STATUS and stderr/stdout matching PATTERN.
expect() {
  local want=$1 pattern=$2
  shift 2
  local out rc run=("$bin")
  # "env VAR=1 BIN ...": the command as given; "--as-nobody ...": as user nobody
  if [[ ${1:-} == env ]]; then
    run=()
  elif [[ ${1:-} == --as-nobody ]]; then
    run=(setpriv --reuid=65534 --regid=65534 --clear-groups "$bin")
    shift
  fi
  out=$(timeout 60 "${run[@]}" "$@" 2>&1)
  rc=$?
  if [[ $rc -ne $want ]] || ! grep -qE -- "$pattern" <<<"$out"; then
    echo "FAIL: lanecast $* -> exit $rc (want $want), output:"
    sed 's/^/    /' <<<"$out" | head -20
    fails=$((fails + 1))
  else
    pass=$((pass + 1))
  fi
}

expect 2 "usage: lanecast"                         # no command
expect 0 "commands:" --help
expect 2 "unknown command 'frobnicate'" frobnicate
expect 0 "--nodes N.*default: 8" bench --help
expect 0 "--loss FRACTION" bench --help
expect 2 "unknown option --bogus" bench --bogus
expect 2 "--nodes: 'x' is not a whole number" bench --nodes x
expect 2 "--nodes must be at least 1" bench --nodes 0
expect 2 "larger than 1024" bench --nodes 5000
expect 2 "--root 8 is outside the group of 8" bench --root 8
expect 2 "unknown algorithm 'nope'" bench --algo nope
expect 2 "--sizes" bench --sizes 1Q
expect 2 "--sizes" bench --sizes 16M:1K
expect 2 "at most 4G per message" bench --sizes 64G
expect 2 "more than half of this machine" bench --sizes 4G --nodes 64
expect 2 "--loss" bench --loss 1.5
expect 2 "--loss: 'abc' is not a number" bench --loss abc
# --faults: each mistake named; the header says what is injected, --counters what it did.
expect 0 "burst_enter +Gilbert-Elliott: good -> bad" bench --help
expect 2 "--faults: unknown key 'los'" bench --faults los=0.1
expect 2 "--faults: loss 1.5 is out of range; allowed 0 <= x < 1" bench --faults loss=1.5
expect 2 "--faults: 'loss' is not key=value" bench --faults loss
expect 2 "--faults \\(rule 2\\): direction 'up'" bench --faults 'loss=0.1;direction=up,dup=0.1'
expect 2 "burst_leave is 0: a burst would never end" bench --faults burst_enter=0.1
expect 2 "group: faults: rule 0: member 9 is not in the group \\(ranks 0..3\\)" bench --nodes 4 --faults member=9,loss=0.1
expect 2 "--faults with --config" bench --config /nonexistent.toml --rank 0 --faults loss=0.1
expect 0 "# faults: loss 0.05, dup 0.01 on frames every member receives; seed 3" bench --nodes 3 --sizes 1K,64K --iters 3 --faults loss=0.05,dup=0.01,seed=3
expect 0 "faults received: lost=[0-9]+ .*duplicated=" bench --nodes 3 --sizes 64K --iters 3 --faults loss=0.1,dup=0.05 --counters
expect 2 "--segment" bench --segment 0
expect 2 "--segment" bench --segment 100000
expect 2 "needs a value" bench --iters
expect 2 "--window" bench --window 0
expect 2 "--window" bench --window 500
# auto: a rules file with a mistake is refused with its line; a missing file too.
rules=$(mktemp)
trap 'rm -f "$rules"' EXIT
printf 'size < 1K -> chain\nalways -> nope\n' >"$rules"
expect 2 "$rules:2: unknown algorithm 'nope'" bench --algo auto --auto-rules "$rules" --sizes 1K
expect 2 "auto rules: cannot read /nonexistent" bench --algo auto --auto-rules /nonexistent --sizes 1K
expect 0 '"chosen": ?"linear"' bench --algo auto --nodes 3 --sizes 1K --iters 1 --warmup 0 --json
# plan --algo auto: per (nodes, size) the rules' choice and the rule that chose,
# built in or from --auto-rules FILE; a bad rules file is exit 2 with file:line.
good_rules=$(mktemp)
trap 'rm -f "$rules" "$good_rules"' EXIT
printf '# test rules\nsize < 2K -> chain\nalways -> binary\n' >"$good_rules"
expect 0 "--auto-rules FILE +rules for --algo auto \(format: config/auto.rules\)" plan --help
expect 0 "^auto -> bintree: 64 nodes, 1M" plan --algo auto --nodes 64 --size 1M
expect 0 "chosen by +built-in rules:11 'always -> bintree' \(lanes 1, multicast, latency spread 1\)" \
  plan --algo auto --nodes 64 --size 1M
expect 0 '"algo":"auto","chosen":"linear","rule":"size <= 1400 and nodes <= 64 -> linear","rule_at":"built-in rules:3"' \
  plan --algo auto --nodes 3 --size 1K --json
expect 0 '"chosen":"hypercube".*"latency_spread":120' plan --algo auto --nodes 16 --size 1M --json \
  --topology "$(dirname "$0")/../../config/topologies/islands4.topo"
expect 0 "chosen by +$good_rules:3 'always -> binary'" plan --algo auto --auto-rules "$good_rules" --nodes 8 --size 1M
expect 0 "\"chosen\":\"chain\",\"rule\":\"size < 2K -> chain\",\"rule_at\":\"$good_rules:2\"" \
  plan --algo auto --auto-rules "$good_rules" --nodes 8 --size 1K --json
expect 2 "^lanecast plan: $rules:2: unknown algorithm 'nope'" plan --algo auto --auto-rules "$rules" --nodes 8 --size 1K
expect 2 "^lanecast plan: auto rules: cannot read /nonexistent" plan --algo auto --auto-rules /nonexistent --nodes 8 --size 1K
expect 2 "--auto-rules applies to --algo auto only" plan --algo chain --auto-rules "$good_rules" --nodes 8 --size 1K
expect 2 "--fit: auto, always or never, not 'sometimes'" plan --algo chain --nodes 8 --size 1K --fit sometimes
expect 2 "--fit-points: three increasing segment counts" plan --algo chain --nodes 8 --size 1K --fit-points 512,256,1024
expect 2 "--fit-points: three increasing segment counts" plan --algo chain --nodes 8 --size 1K --fit-points 1,2
expect 0 "method +fitted: simulated at 4, 8 and 16 segments" plan --algo chain --nodes 8 --size 64K --fit always --fit-points 4,8,16
# a full simulation of minutes says so as it starts, and how not to wait (stopped after 3 s)
expect 124 "simulating in full \(392M \(node, segment\) pairs: roughly up to 2 min; no fit applies here - leave the algorithm out of --algo" \
  env timeout 3 "$bin" plan --algo symmetric --nodes 2048 --size 256M
expect 2 "--node-fit: auto, always or never, not 'sometimes'" plan --algo bintree --nodes 8 --size 1K --node-fit sometimes
expect 0 "fitted in the group size: simulated on 16, 32 and 64 nodes.*per-rank figures are not simulated" \
  plan --algo binomial --nodes 1024 --size 1M --node-fit always
expect 0 '"method":"node-fit","node_fit_points":\[16,32,64\].*"rank_finish_us":\[\]' \
  plan --algo binomial --nodes 1024 --size 1M --node-fit always --json
expect 0 '"method":"simulated","node_fit_points":null' plan --algo chain --nodes 1024 --size 1M --node-fit always --json
expect 0 "order form" plan --algo hypercube --nodes 16 --size 64K --order form \
  --topology "$(dirname "$0")/../../config/topologies/islands4.topo"
# plan: mcast_chain's root delay and synchronisation, and process skew.
expect 0 "--root-delay US.*root delay" plan --help
expect 0 "--sync-seed N" plan --help
expect 0 "--skew US" plan --help
expect 2 "--root-delay: -1 is outside" plan --algo mcast_chain --nodes 8 --size 1K --root-delay -1
expect 2 "--root-delay: 'abc' is not a number" plan --algo mcast_chain --nodes 8 --size 1K --root-delay abc
expect 2 "--sync-seed: 'x' is not a whole number" plan --algo mcast_chain --nodes 8 --size 1K --sync-seed x
expect 2 "--skew: 2e6 is outside" plan --algo mcast_chain --nodes 8 --size 1K --skew 2e6
expect 2 "--skew-seed: '-3' is not a whole number" plan --algo mcast_chain --nodes 8 --size 1K --skew 5 --skew-seed -3
expect 2 "--root-delay applies to --algo mcast_chain only, not to chain" plan --algo chain --nodes 8 --size 1K --root-delay 5
expect 2 "--sync-seed applies to --algo mcast_chain only, not to linear" plan --algo all --nodes 8 --size 1K --sync-seed 3
expect 0 "0 to skew" plan --algo mcast_chain --nodes 64 --size 1K --segment 1K --skew 20 --root-delay 20
expect 0 "sync rank" plan --algo mcast_chain --nodes 64 --size 1K --skew 20 --sync-seed 7
expect 0 '"sync_rank":[0-9]+' plan --algo mcast_chain --nodes 64 --size 1K --skew 20 --sync-seed 7 --json
expect 0 "rank start" plan --algo chain --nodes 8 --size 1K --skew 20
# testbed and bench --testbed: every mistake refused before anything is built
# (so these need no root), with what is allowed.
expect 0 "NAMEn0..NAMEn\(N-1\)" testbed --help
expect 0 "--lanes L +up: lanes per node" testbed up --help
expect 2 "say up N, down or status" testbed
expect 2 "unknown subcommand 'sideways'" testbed sideways
expect 2 "up needs the number of nodes" testbed up
expect 2 "up needs the number of nodes" testbed up --rate 10
expect 2 "N: 'x' is not a whole number" testbed up x
expect 2 "N = 1: a testbed has 2..254 nodes" testbed up 1
expect 2 "N = 255: a testbed has 2..254 nodes" testbed up 255
expect 2 "--lanes 3: 1 or 2" testbed up 3 --lanes 3
expect 2 "--rate 0: 1..100000 Mbit/s" testbed up 3 --rate 0
expect 2 "--rate: '2.5' is not a whole number" testbed up 3 --rate 2.5
expect 2 "--mtu 575: 576..9000" testbed up 3 --mtu 575
expect 2 "--mtu 9001: 576..9000" testbed up 3 --mtu 9001
expect 2 "--uplink-queue 100001: 0..100000 frames" testbed up 3 --uplink-queue 100001
expect 2 "--uplink-queue: '-1' is not a whole number" testbed up 3 --uplink-queue -1
expect 2 "--name 'Lab': a lowercase letter" testbed up 3 --name Lab
expect 2 "--name 'abcdefghij': a lowercase letter" testbed up 3 --name abcdefghij
expect 2 "--name 'a;reboot'" testbed down --name 'a;reboot'
expect 2 "--name '': a lowercase letter" testbed status --name ''
expect 2 "--rate applies to up only" testbed down --rate 100
expect 2 "--lanes applies to up only" testbed status --lanes 2
expect 2 "unexpected argument '5'" testbed down 5
expect 2 "unknown option --bogus" testbed status --bogus
expect 0 "--testbed N +one member process in each of N network namespaces" bench --help
expect 2 "N = 1: a testbed has 2..254 nodes" bench --testbed 1
expect 2 "--lanes 3: 1 or 2" bench --testbed 3 --lanes 3
expect 2 "--rate with --testbed: whole Mbit/s" bench --testbed 3 --rate 2.5
expect 2 "--rate with --testbed: whole Mbit/s" bench --testbed 3 --rate 0
expect 2 "--mtu 100: 576..9000" bench --testbed 3 --mtu 100
expect 2 "--nodes does not apply to --testbed" bench --testbed 3 --nodes 4
expect 2 "--ports does not apply to --testbed" bench --testbed 3 --ports net_null0
expect 2 "--config does not apply to --testbed" bench --testbed 3 --config x.toml
expect 2 "--segment with --testbed: 64..9000" bench --testbed 3 --segment 10
expect 2 "--root 5 is outside the testbed's 3 members" bench --testbed 3 --root 5
expect 2 "--mtu applies to --testbed only" bench --mtu 9000
expect 2 "--uplink-queue applies to --testbed only" bench --uplink-queue 10
expect 2 "--uplink-queue 200000: 0..100000" bench --testbed 3 --uplink-queue 200000
expect 2 "--xdp applies to --testbed only" bench --xdp
expect 2 "--deadline applies to --testbed only" bench --deadline 10
expect 2 "--no-rate-control applies to --ports with no --port-rate" bench --no-rate-control
expect 2 "--no-rate-control applies to --ports with no --port-rate" bench --ports 'net_null0;net_null1' --port-rate 100 --no-rate-control
expect 2 "--rate-control and --no-rate-control: choose one" bench --rate-control --no-rate-control
expect 2 "--deadline: 0 is outside" bench --testbed 3 --deadline 0
expect 2 "--xdp: af_xdp does not work on this testbed with DPDK 22.11.*LANECAST_XDP_ANYWAY=1" bench --testbed 3 --xdp
expect 2 "--xdp: MTU 9000 is too large; XDP on a veth takes at most 3500" \
  env LANECAST_XDP_ANYWAY=1 "$bin" bench --testbed 3 --xdp --mtu 9000
# Without root: said so, before anything is tried.
if [[ $(id -u) -ne 0 ]]; then
  expect 2 "up needs root" testbed up 3
  expect 2 "--testbed needs root" bench --testbed 3
elif command -v setpriv >/dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$bin"; then
  expect 2 "up needs root" --as-nobody testbed up 3
  expect 2 "down needs root" --as-nobody testbed down
  expect 2 "--testbed needs root" --as-nobody bench --testbed 3
fi
# A tiny real run still works and is verified.
expect 0 "verified" bench --nodes 3 --sizes 1,1K --iters 2 --warmup 0
expect 0 '"verified": ?true' bench --nodes 2 --sizes 100 --iters 1 --warmup 0 --json
# Skew: every member's time, the root's 0 and the others' after it; ranks 1 and p-1 named.
expect 0 '"rank1_us": ?[0-9.]+, ?"rankN_us": ?[0-9.]+, ?"skew": ?[0-9.]+, ?"rank_us": ?\[0\.0+, ?[0-9.]+, ?[0-9.]+, ?[0-9.]+\]' \
  bench --nodes 4 --algo chain --sizes 2K --iters 2 --warmup 0 --json
expect 0 'rank1_us +rankN_us +skew' bench --nodes 3 --algo binomial --sizes 2 --iters 1 --warmup 0

# One member per process: its rank. A static group needs --rank; a pmix
# group takes the PMIx launcher's and refuses a --rank that differs. All
# refused before DPDK starts (no root needed).
groups=$(dirname "$0")/../../config/groups
unset PMIX_RANK PMIX_NAMESPACE
expect 2 '--rank R is required: .*static2.toml has bootstrap "static"' run --config "$groups/static2.toml"
expect 2 'pmix8.toml has bootstrap "pmix", but this process was not started by a PMIx launcher \(mpirun/prterun/srun\)' \
  run --config "$groups/pmix8.toml"
PMIX_RANK=3 PMIX_NAMESPACE=fake expect 2 "--rank 2, but the PMIx launcher started this process as rank 3" \
  run --config "$groups/pmix8.toml" --rank 2
PMIX_RANK=9 PMIX_NAMESPACE=fake expect 2 "rank 9: .*pmix8.toml has ranks 0..7" run --config "$groups/pmix8.toml"
PMIX_RANK=x PMIX_NAMESPACE=fake expect 3 "PMIX_RANK='x' in the environment is not a rank" run --config "$groups/pmix8.toml"
PMIX_RANK=3 PMIX_NAMESPACE=fake expect 2 "--rank 2, but the PMIx launcher started this process as rank 3" \
  bench --config "$groups/pmix8.toml" --rank 2
expect 2 "--rank R needs --config FILE" bench --rank 1
# Verbs lanes: malformed, mixed with DPDK, and on a machine without an adapter.
expect 2 "the port must be 1..255; allowed: verbs:DEVICE:PORT" bench --ports "verbs:mlx5_0:0;verbs:mlx5_0:1"
expect 2 "all verbs:DEVICE:PORT or all DPDK devargs, not both" bench --ports "verbs:mlx5_0:1;net_null0"
if ! ibv_devices 2>/dev/null | grep -q '^ *[a-z]'; then
  expect 2 "group: port 'verbs:mlx5_0:1': no RDMA device" bench --ports "verbs:mlx5_0:1;verbs:mlx5_0:1" --sizes 1K
  PMIX_RANK=1 PMIX_NAMESPACE=fake expect 2 "group: port 'verbs:mlx5_0:1': no RDMA device" run --config "$groups/verbs4.toml"
fi

# Streams, the daemon, stat.
expect 2 "--messages applies to --stream only" bench --messages 10
expect 2 "--iters does not apply to --stream" bench --stream --iters 5
expect 2 "--stream-window must be 16..65536" bench --stream --stream-window 4
expect 2 "does not fit the stream window" bench --stream --sizes 4M
expect 2 "--msg-rate" bench --stream --msg-rate -5
expect 2 "--stream-multicast applies to --stream only" bench --stream-multicast
expect 0 '"msgs_per_s": ?[0-9.]+, ?"mbps".*"p999_us".*"bare_p999_us": ?[0-9.]+.*"poller_cpu_wait_us": ?[0-9.]+, ?"poller_longest_cycle_us": ?[0-9.]+, ?"poller_long_cycles": ?[0-9]+.*"verified": ?true' \
  bench --stream --nodes 3 --sizes 64,3000 --messages 2000 --warmup 100 --json
expect 0 "--udp-in ADDR:PORT" daemon --help
expect 2 "--config FILE is required" daemon
expect 2 "--udp-in: '1.2.3' is not ADDR:PORT" daemon --config "$groups/static2.toml" --rank 0 --udp-in 1.2.3
expect 2 "--udp-out: port '99999' is not 1..65535" daemon --config "$groups/static2.toml" --rank 0 --udp-out 239.1.1.1:99999
expect 0 "loopback only.*\[default: 127\.0\.0\.0/8\]" daemon --help
expect 0 "no user takes every slot \[default: 16\]" daemon --help
expect 2 "--udp-in-from: '10.0.0.300' is not an IPv4 address" \
  daemon --config "$groups/static2.toml" --rank 0 --udp-in 127.0.0.1:5000 --udp-in-from 10.0.0.300
expect 2 "--udp-in-from: '10.0.0.0/33' is not ADDR\[/BITS\]\[:PORT\]" \
  daemon --config "$groups/static2.toml" --rank 0 --udp-in 127.0.0.1:5000 --udp-in-from 10.0.0.1,10.0.0.0/33
expect 2 "--udp-in-from applies to --udp-in" daemon --config "$groups/static2.toml" --rank 0 --udp-in-from any
expect 2 "--pcap FILE is required" replay
expect 2 "one at most" replay --pcap x --speed 2 --topspeed
expect 2 "--speed" replay --pcap x --speed 0
expect 3 "--pcap /nonexistent.pcap" replay --pcap /nonexistent.pcap
expect 2 "--link: udp or raw" replay --pcap x --link ether
expect 2 "--config FILE and --out FILE are required" record --out x
expect 0 "--whole-frame" replay --help
expect 0 "IP and UDP lengths 0" replay --help
expect 2 "--read-ahead 1K is out of range; allowed 64K..16G" replay --pcap x --read-ahead 1K
expect 2 "--window-bytes 100 is out of range; allowed 4K..16G" replay --pcap x --window-bytes 100
expect 2 "--dir DIR is required" stat
expect 3 "no stats at /nonexistent/stats" stat --dir /nonexistent --once

# Group keys: made without overwriting or following a link, refused when
# others could read them, and a keyed group's frames sealed (bench says so).
keys=$(mktemp -d)
expect 0 "a new group key in $keys/k \(fingerprint [0-9a-f]{16}\)" key --new "$keys/k"
expect 2 "never overwritten" key --new "$keys/k"
ln -s "$keys/k" "$keys/link"
expect 2 "never overwritten" key --new "$keys/link"
expect 2 "it is a symbolic link" key --fingerprint "$keys/link"
expect 0 "^[0-9a-f]{16}$" key --fingerprint "$keys/k"
expect 2 "give one of --new FILE and --fingerprint FILE" key
cp "$keys/k" "$keys/loose" && chmod 644 "$keys/loose"
expect 2 "group or others may read or write it" bench --nodes 2 --sizes 1K --iters 1 --key-file "$keys/loose"
expect 2 "a group key of 3 characters" env LANECAST_GROUP_KEY=abc "$bin" run --config "$groups/static2.toml" --rank 0
expect 0 "# sealed: every frame, with the group key [0-9a-f]{16}" \
  bench --nodes 4 --algo chain,mcast_chain --sizes 2,100K --iters 3 --loss 0.02 --key-file "$keys/k"
expect 2 "with --config: every member must hold the key" bench --config "$groups/static2.toml" --rank 0 --key-file "$keys/k"
expect 2 "a group with a key forms by discovery or pmix, not static" \
  env LANECAST_GROUP_KEY_FILE="$keys/k" "$bin" run --config "$groups/static2.toml" --rank 0
# On verbs lanes a keyed group forms by pmix, refused before any adapter is opened.
printf '[group]\nname = "vd"\nbootstrap = "discovery"\n[[member]]\nrank = 0\nlanes = ["verbs:mlx5_0:1"]\n' >"$keys/vd.toml"
expect 2 'a group with a key on verbs lanes forms by bootstrap "pmix"' \
  env LANECAST_GROUP_KEY_FILE="$keys/k" "$bin" run --config "$keys/vd.toml" --rank 0
rm -rf "$keys"

# tune: where the group runs comes after --; bench's options that are tune's
# are refused there; a tiny in-process run writes rules that auto reads, and
# the rule for each size is the fastest measured.
tuned=$(mktemp -d)
expect 2 "say where the group runs after --" tune
expect 2 "--algo is tune's to give to bench" tune -- --nodes 3 --algo chain
expect 2 "--metric: 'fast': p50, avg or span" tune --metric fast -- --nodes 3
expect 0 "plan's model of this group, fitted" \
  tune --out "$tuned/t.rules" --sizes 1K,256K --algos linear,chain --iters 2 --small-iters 5 --check \
  --stream 64 --stream-messages 5000 -- --nodes 4
expect 0 '"chosen":"(linear|chain)".*"rule_at":"'"$tuned"'/t.rules' plan --algo auto --auto-rules "$tuned/t.rules" --nodes 4 --size 1K --json
if python3 - "$tuned/t.rules" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rows = {m.group(1): (float(m.group(2)), float(m.group(3))) for m in re.finditer(r"^#\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s*$", text, re.M)}
rules = [l for l in text.splitlines() if l.startswith("nodes == 4")]
# The table is rounded to 0.1 us: within that, either algorithm is the fastest.
best = {size: {"chain"} if chain < linear - 0.1 else {"linear"} if linear < chain - 0.1 else {"chain", "linear"}
        for size, (chain, linear) in rows.items()}
assert set(best) == {"1K", "256K"}, rows
chosen = lambda rule: rule.split("#")[0].strip().rsplit("-> ", 1)[1]
assert rules and chosen(rules[-1]) in best["256K"], (rules, best)
assert chosen(rules[0]) in best["1K"], (rules, best)  # the first rule covers the smallest size
# --stream: the tree and multicast, each measured (a rate) beside plan's prediction.
streams = re.findall(r"^#\s+(tree, fanout \d+|multicast)\s+([0-9.]+) msgs/s, plan\s+([0-9.]+) ", text, re.M)
assert [m[0].split(",")[0] for m in streams] == ["tree", "multicast"], streams
assert all(float(m[1]) > 0 and float(m[2]) > 0 for m in streams), streams
PY
then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: tune's rules do not follow what it measured: $(cat "$tuned/t.rules")"; fi

# tune's fit: times that plan itself predicted with known parameters (as
# bench --json rows) give those parameters back - the rate from chain's
# marginal rate, t0 and the bucket (a whole number of frames) from the
# searches - and every prediction equals its time. A file that is not
# bench's output is refused with a clear message.
python3 - "$bin" "$tuned" <<'PY'
import json, subprocess, sys
bin, d = sys.argv[1], sys.argv[2]
rows = json.loads(subprocess.run([bin, "plan", "--algo", "all", "--nodes", "6", "--size", "16,32K,512K,2M",
    "--bw", "31.4", "--t0", "12.5", "--segment", "1200", "--port-burst", "7200", "--json", "--quiet"],
    check=True, capture_output=True, text=True).stdout)
bench = [{"algo": r["algo"], "chosen": r["chosen"], "nodes": r["nodes"], "size": r["size"], "iters": 1,
          "span_us": r["predicted_us"], "avg_us": r["predicted_us"], "verified": True, "segment": r["segment"]}
         for r in rows if r["complete"]]
# As tune's two bench runs print them: two arrays, one after the other.
with open(d + "/m.json", "w") as f:
    f.write(json.dumps(bench[:20]) + "\n" + json.dumps(bench[20:]) + "\n")
PY
expect 0 "lanecast plan --nodes 6 --bw 31.[34][0-9]* --t0 12.5 --segment 1200 --port-burst 7200" \
  tune --measured "$tuned/m.json" --out "$tuned/fit.rules"
if python3 - "$bin" "$tuned" <<'PY'
import json, subprocess, sys
bin, d = sys.argv[1], sys.argv[2]
out = json.loads(subprocess.run([bin, "tune", "--measured", d + "/m.json", "--out", d + "/fit.rules", "--json", "--quiet"],
    check=True, capture_output=True, text=True).stdout)
m = out["model"]
# The rate within 0.1%: 2M is not a whole number of segments.
assert abs(m["bw_mbytes_per_s"] / 31.4 - 1) < 1e-3, m
assert (m["t0_us"], m["port_burst_bytes"], m["segment"]) == (12.5, 7200, 1200), m
measured = {(s["size"], a): us for s in out["measured"] for a, us in s["us"].items()}
predicted = {(s["size"], a): us for s in m["predicted"] for a, us in s["us"].items()}
assert measured.keys() == predicted.keys() and len(measured) >= 40, (len(measured), len(predicted))
for k, us in measured.items():
    assert abs(predicted[k] / us - 1) < 1e-3, (k, us, predicted[k])
PY
then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: tune did not give plan's own parameters back"; fi
printf '[{"algo": "chain", "size": 2, "nodes": 4, "verified": true, "avg_us": 5}]\n{"results": 7}\n' > "$tuned/bad.json"
expect 2 "bad.json: JSON value 2 is neither bench's array of rows nor an object" tune --measured "$tuned/bad.json" --out "$tuned/x.rules"
printf '[{"algo": "chain", "size": 2, "nodes": 4, "verified": true, "avg_us": 5}] [{"algo"' > "$tuned/cut.json"
expect 2 "cut.json: JSON value 2: .*parse error" tune --measured "$tuned/cut.json" --out "$tuned/x.rules"
printf '[{"algo": "chain", "size": 2, "nodes": 4, "verified": true, "avg_us": 5}, {"algo": "chain", "size": 4, "nodes": 5, "verified": true, "avg_us": 6}]' > "$tuned/mixed.json"
expect 2 "groups of 4 and of 5: one group size at a time" tune --measured "$tuned/mixed.json" --out "$tuned/x.rules"
expect 2 "cannot read $tuned/none.json" tune --measured "$tuned/none.json" --out "$tuned/x.rules"
expect 2 "--check runs bench" tune --measured "$tuned/m.json" --check
expect 2 "--stream runs bench" tune --measured "$tuned/m.json" --stream 64
expect 2 "--stream: 1 byte .. 64K" tune --stream 1M -- --nodes 3
expect 2 "--stream-messages: at least 1000" tune --stream 64 --stream-messages 10 -- --nodes 3
expect 2 "--check with --config: every member would need rank 0's rules file" tune --check -- --config x.toml --rank 0
[[ ! -e $tuned/x.rules ]] || { fails=$((fails + 1)); echo "FAIL: tune wrote rules from a file it refused"; }
rm -rf "$tuned"

echo "cli: $pass passed, $fails failed"
[[ $fails -eq 0 ]]
