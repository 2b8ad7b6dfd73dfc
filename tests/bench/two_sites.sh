#!/usr/bin/env bash
# Two sites of four members, DIST_US one way between them, on the testbed of
# tools/testbed.sh (one namespace per member, one bridge, tbf RATE on every
# link). This kernel has no netem, so the distance is emulated by the members
# (group file: site_latency_us + emulate_latency; drivers/delay/): each holds
# the other site's frames that long. Ranks are placed as in
# config/groups/two_sites.toml (site = parity of the rank's 1 bits), where rank
# order sends every hypercube step and every heap edge across the sites.
#
# Each algorithm runs twice in member processes: aware (use_sites = true:
# hypercube in form-hypercube order, multilane's trees per site, chained) and
# blind (use_sites = false: rank order, one site); beside each, what
# `lanecast plan` predicts for the same topology, with t0 and the bandwidth
# measured here (--t0 from a 2-byte chain between two members of one site,
# the bandwidth from link_probe). Measured: bench's span_us, the root's
# posting to the last member holding the message on the host's clock (the
# members' own times miss the skew of their barrier exits, 2 ms here). The
# table shows blind/aware measured and predicted.
#
# usage: tests/bench/two_sites.sh [--rate MBIT] [--dist-us US] [--algos LIST] [--sizes LIST]
#          [--iters K] [--lanecast PATH]
# Needs root and iproute2; link_probe from lanecast's build (tests/bench).
set -euo pipefail

rate=200 dist=2000 algos=hypercube,multilane sizes=2,64K,1M iters=10 mtu=1500 nodes=8
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
lanecast=$repo/build/apps/lanecast
while (($#)); do
  case $1 in
    --rate) rate=$2; shift ;;
    --dist-us) dist=$2; shift ;;
    --algos) algos=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --iters) iters=$2; shift ;;
    --lanecast) lanecast=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "two_sites: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
probe=$(dirname "$lanecast")/../tests/bench/link_probe
# shellcheck source=tests/bench/member_group.sh
source "$repo/tests/bench/member_group.sh"
[[ $(id -u) -eq 0 ]] || { echo "two_sites: needs root" >&2; exit 2; }
[[ -x $lanecast && -x $probe ]] || { echo "two_sites: build lanecast and tests/bench/link_probe first" >&2; exit 2; }

tag=lcts$(($$ % 100000))
start_testbed "$repo" "$probe" "$tag" "$nodes" "$rate" "$mtu"
# Each rank's site: the parity of its 1 bits.
sites=()
for ((r = 0; r < nodes; r++)); do
  b=0
  for ((x = r; x; x >>= 1)); do b=$((b ^ (x & 1))); done
  sites+=("$b")
done
ranks_in() {  # SITE: "0,3,5,6"
  local r out=()
  for ((r = 0; r < nodes; r++)); do ((sites[r] == $1)) && out+=("$r"); done
  (IFS=,; echo "${out[*]}")
}

# The group file of the testbed, with sites: USE_SITES true|false.
write_member_group "$work/plain.toml" two-sites 35 "$nodes" 1 "$rate" "$mtu" "$(largest_size "$sizes")"
sited_group() {  # FILE USE_SITES
  awk -v dist="$dist" -v use="$2" -v list="${sites[*]}" '
    BEGIN { split(list, site, " ") }
    /^\[group\]/ { print; printf "site_latency_us = [[0, %s], [%s, 0]]\nuse_sites = %s\nemulate_latency = true\n", dist, dist, use; next }
    /^rank = / { print; printf "site = %d\n", site[$3 + 1]; next }
    { print }' "$work/plain.toml" >"$1"
}
sited_group "$work/aware.toml" true
sited_group "$work/blind.toml" false

# Plan's topology: the same sites and distance, t0 inside a site.
t0=$(hop_t0_us "$lanecast" "$tag" "$rate" "$mtu" "$work")
{
  echo "nodes $nodes"
  echo "default ${t0}us"
  echo "site a $(ranks_in 0)"
  echo "site b $(ranks_in 1)"
  echo "latency a b $(awk -v d="$dist" -v t="$t0" 'BEGIN { print d + t }')us"
} >"$work/sites.topo"
segment=$((mtu - 72))

echo "# two sites: $nodes member processes (sites a, b by rank bit parity), ${dist} us one way between the sites (emulated),"
echo "# tbf $rate Mbit/s on every link, MTU $mtu; line rate $line MB/s (link_probe), t0 $t0 us (2-byte hop inside a site)"
echo "# topology for plan: $(grep -v '^nodes' "$work/sites.topo" | tr '\n' ';')"
for mode in aware blind; do
  run_members "$lanecast" "$tag" "$nodes" "$work/$mode.toml" "$work" --algo "$algos" --sizes "$sizes" \
    --iters "$iters" --warmup 2 || exit 1
  bench_rows "$work/rank0.out" | sed "s/^/$mode /" >>"$work/measured"
done
predict() {  # ALGO SIZE MODE
  local opts=()
  case $1:$3 in
    hypercube:aware) opts=(--order form-double) ;;
    multilane:aware) opts=(--sites chain) ;;
  esac
  plan_us "$lanecast" "$1" "$nodes" "$2" "$t0" "$line" "$segment" --topology "$work/sites.topo" "${opts[@]}"
}
printf '%-10s %6s %12s %12s %8s %12s %12s %8s\n' algo size aware_us blind_us blind/aw plan_aware plan_blind plan_b/a
for a in ${algos//,/ }; do
  for s in ${sizes//,/ }; do
    b=$(size_bytes "$s")
    ma=$(awk -v a="$a" -v b="$b" '$1 == "aware" && $2 == a && $3 == b { print $4 }' "$work/measured")
    mb=$(awk -v a="$a" -v b="$b" '$1 == "blind" && $2 == a && $3 == b { print $4 }' "$work/measured")
    pa=$(predict "$a" "$s" aware)
    pb=$(predict "$a" "$s" blind)
    awk -v a="$a" -v s="$s" -v ma="$ma" -v mb="$mb" -v pa="$pa" -v pb="$pb" 'BEGIN {
      printf "%-10s %6s %12.1f %12.1f %8.2f %12.1f %12.1f %8.2f\n", a, s, ma, mb, mb / ma, pa, pb, pb / pa }'
  done
done
