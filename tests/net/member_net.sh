# Sourced by the network tests that run one lanecast member process per
# namespace (multiprocess_test.sh, pmix_test.sh): their namespaces, bridge
# and group files. Functions only; nothing runs when sourced.

# Member I's link address.
member_mac() { printf '02:00:00:00:%02x:%02x' $(($1 >> 8)) $(($1 & 255)); }

# TAGs (a bridge br0) and TAGn0..TAGn(NODES-1), each with a veth v0 of
# member_mac I on the bridge; IPv6 off. With SUBNET ("10.77.0"), v0 also
# gets SUBNET.(I+1)/24 and lo is up (for TCP programs such as mpirun).
# Returns 1 if the namespaces cannot be made at all (the caller skips).
member_net_up() {  # TAG NODES [SUBNET]
  local tag=$1 nodes=$2 subnet=${3:-} i ns
  ip netns add "${tag}s" || return 1
  ip -n "${tag}s" link add br0 type bridge
  ip -n "${tag}s" link set br0 up
  ip netns exec "${tag}s" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
  for ((i = 0; i < nodes; i++)); do
    ns=${tag}n$i
    ip netns add "$ns"
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
    ip -n "$ns" link add v0 address "$(member_mac "$i")" type veth peer name "b$i" netns "${tag}s"
    ip -n "${tag}s" link set "b$i" master br0 up
    ip -n "$ns" link set v0 up
    if [[ -n $subnet ]]; then
      ip -n "$ns" link set lo up
      ip -n "$ns" addr add "$subnet.$((i + 1))/24" dev v0
    fi
  done
}

# The start of a test on these namespaces: `work` (a scratch directory),
# `pids` (processes to kill), the namespaces up (member_net_up's arguments),
# and a trap that undoes all three on any exit. Exits 77 (skip) when the
# namespaces cannot be made.
member_net_test() {  # TAG NODES [SUBNET]
  member_net_tag=$1 member_net_nodes=$2
  work=$(mktemp -d)
  pids=()
  trap member_net_test_cleanup EXIT INT TERM
  member_net_up "$@" || { echo "SKIP: cannot create network namespaces here"; exit 77; }
}
member_net_test_cleanup() {
  local p
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  member_net_down "$member_net_tag" "$member_net_nodes"
  rm -rf "$work"
}

# Removes what member_net_up made; whatever still runs in those namespaces
# is the test's own (a member its launcher lost) and is killed first.
member_net_down() {  # TAG NODES
  local i
  for ((i = 0; i < $2; i++)); do
    ip netns pids "${1}n$i" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "${1}n$i" 2>/dev/null
  done
  ip netns del "${1}s" 2>/dev/null
}

# A group file for NODES members, each on "v0" in its own namespace; with
# the static bootstrap, epoch 9 and every member's member_mac.
write_member_group() {  # BOOTSTRAP FILE NAME ID BOOTSTRAP_TIMEOUT_MS MAX_MESSAGE NODES
  local i
  {
    echo "[group]"
    echo "name = \"$3\""
    echo "id = $4"
    echo "bootstrap = \"$1\""
    [[ $1 == static ]] && echo "epoch = 9"
    echo "bootstrap_timeout_ms = $5"
    echo "peer_timeout_ms = 3000"
    echo "max_message = \"$6\""
    for ((i = 0; i < $7; i++)); do
      echo
      echo "[[member]]"
      echo "rank = $i"
      echo "lanes = [\"net_af_packet0,iface=v0,qdisc_bypass=0\"]"
      [[ $1 == static ]] && echo "macs = [\"$(member_mac "$i")\"]"
    done
  } >"$2"
}
