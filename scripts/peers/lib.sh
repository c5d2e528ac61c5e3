# shellcheck shell=bash disable=SC2154  # `here` is set by the sourcing script
# Shared helpers for the capture scripts: source it, after setting `here` to scripts/peers.
# Starts ZooKeeper and peers in the background, on loopback, and stops them on exit.

work="$(mktemp -d /tmp/rudder-peers.XXXXXX)"
pids=()
zk_pid=""

# Peers first, ZooKeeper last: a provider unregisters on SIGTERM and would
# otherwise sit in Curator's reconnect loop until its shutdown times out.
stop_all() {
    local pid
    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${pids[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n "$zk_pid" ]]; then
        kill "$zk_pid" 2>/dev/null || true
        wait "$zk_pid" 2>/dev/null || true
    fi
}
trap stop_all EXIT

# start_zookeeper: a fresh ZooKeeper; sets zk_port and exports RUDDER_ZK_ADDRESS.
start_zookeeper() {
    zk_port="$("$here/free-port.py")"
    "$here/zookeeper.sh" "$zk_port" "$work/zk" >"$work/zk.out" 2>"$work/zk.err" &
    zk_pid=$!
    "$here/wait-zookeeper.py" "$zk_port" 60
    export RUDDER_ZK_ADDRESS="127.0.0.1:$zk_port"
}

# start_peer KIND INSTANCE DESCRIPTION [VAR=VALUE...]: KIND is java or node. The port
# defaults to a free one; pass RUDDER_DUBBO_PORT=... to choose it.
start_peer() {
    local kind="$1" instance="$2" description="$3"
    shift 3
    printf '%s\t%s\n' "$instance" "$description" >>"$work/descriptions.tsv"
    env RUDDER_INSTANCE="$instance" RUDDER_DUBBO_PORT="$("$here/free-port.py")" "$@" \
        "$here/start-$kind-provider.sh" >"$work/$instance.out" 2>"$work/$instance.err" &
    pids+=($!)
}

# wait_ready INSTANCE: until the peer prints READY (120 s at most).
wait_ready() {
    local instance="$1" deadline=$((SECONDS + 120))
    until [[ -f "$work/$instance.out" ]] && grep -q '^READY' "$work/$instance.out"; do
        if ((SECONDS > deadline)); then
            echo "$instance did not print READY; see $work/$instance.err" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# port_of INSTANCE: the dubbo port from the peer's READY line.
port_of() {
    sed -n 's|^READY dubbo://127\.0\.0\.1:\([0-9]*\).*|\1|p' "$work/$1.out" | head -1
}
