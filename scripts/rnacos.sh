#!/usr/bin/env bash
# rnacos (crates.io, Apache-2.0): a Nacos-2.x-compatible server in Rust, the Nacos the tests run.
#
#   scripts/rnacos.sh install        install the pinned version into the cache (idempotent), print its path
#   scripts/rnacos.sh path           print the cached binary's path (exit 1 when not installed)
#   scripts/rnacos.sh start DIR      start one server on 127.0.0.1 with free ports, data under DIR;
#                                    waits until it answers and a config written to it reads back
#                                    (else starts it again), prints `http=PORT grpc=PORT pid=PID`
#                                    and leaves it running (stop it with `kill PID`)
#
# Why a debug build: `cargo install --debug` takes a fraction of a release build's minutes on
# 2 cores and serves the tests' few hundred instances without trouble (docs/nacos.md has figures);
# without debug info, which nobody reads and which makes the binary ten times larger. The build
# keeps its own target directory under the cache, so an interrupted install resumes where it stopped.
# Installs are serialised by a lock: scripts/test-all.sh starts one in the background while the
# other prerequisites download, and a second `install` waits for it instead of building twice.
#
# Env:
#   RUDDER_CACHE_DIR      cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rudder)
#   RUDDER_RNACOS_PROFILE debug (default) or release
set -euo pipefail

version="0.8.8"
profile="${RUDDER_RNACOS_PROFILE:-debug}"
cache_dir="${RUDDER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rudder}"
root="$cache_dir/rnacos-$version-$profile"
bin="$root/bin/rnacos"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

fail() {
    echo "rnacos.sh: $*" >&2
    exit 1
}

install() {
    if [[ -x "$bin" ]]; then
        echo "$bin"
        return
    fi
    mkdir -p "$cache_dir"
    # One install at a time (fd 9 holds the lock until this process ends); the winner's binary is
    # the loser's answer.
    exec 9>"$cache_dir/rnacos-install.lock"
    flock 9
    if [[ -x "$bin" ]]; then
        echo "$bin"
        return
    fi
    local flags=(--locked --version "$version" --root "$root.partial" --target-dir "$cache_dir/rnacos-target")
    [[ "$profile" == debug ]] && flags+=(--debug)
    local log="$cache_dir/rnacos-install.log"
    export CARGO_PROFILE_DEV_DEBUG=0 CARGO_PROFILE_RELEASE_DEBUG=0
    echo "rnacos.sh: installing rnacos $version ($profile) into $root (log: $log)" >&2
    local start=$SECONDS
    if ! cargo install rnacos "${flags[@]}" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        fail "cargo install rnacos failed"
    fi
    # Only a finished install takes the final name: an interrupted one is retried, never half used.
    rm -rf "$root"
    mv "$root.partial" "$root"
    rm -rf "$cache_dir/rnacos-target"
    echo "rnacos.sh: installed in $((SECONDS - start)) s" >&2
    echo "$bin"
}

free_port() {
    "$script_dir/peers/free-port.py"
}

# Whether a config written to the server on HTTP port $1 reads back. rnacos 0.8.8's start-up can
# lose every write (its Raft init races the wiring of its apply actor: it/src/rnacos/cluster.rs);
# it then answers `true` to the publish and "config data not exist" to the read.
applies_writes() {
    local probe="dataId=rudder-raft-probe&group=rudder" deadline=$((SECONDS + 30))
    # Writes fail until Raft has its leader (itself), a moment after the server answers.
    until [[ "$(curl -fsS -m 5 -X POST "http://127.0.0.1:$1/nacos/v1/cs/configs" -d "$probe&content=1" 2>/dev/null)" == true ]]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.2
    done
    [[ "$(curl -fsS -m 5 "http://127.0.0.1:$1/nacos/v1/cs/configs?$probe" 2>/dev/null)" == 1 ]]
}

start() {
    local dir="${1:?usage: rnacos.sh start DIR}" attempt http grpc pid
    [[ -x "$bin" ]] || fail "not installed: run scripts/rnacos.sh install (or scripts/it-setup.sh)"
    for attempt in 1 2 3; do
        start_once "$dir"
        if applies_writes "$http"; then
            echo "http=$http grpc=$grpc pid=$pid"
            return
        fi
        echo "rnacos.sh: start $attempt lost a config write (log: $dir/out.$attempt.log); starting it again with fresh data" >&2
        kill "$pid"
        wait "$pid" 2>/dev/null || true
        mv "$dir/out.log" "$dir/out.$attempt.log"
        rm -rf "${dir:?}/db"
    done
    fail "rnacos lost its config writes in 3 starts (log: $dir/out.log)"
}

# Starts the server once and waits until it answers; sets http, grpc and pid.
start_once() {
    local dir="$1"
    mkdir -p "$dir"
    # Nacos 2.x clients reach gRPC at the HTTP port + 1000: pick an HTTP port whose +1000 is free too.
    local console tries=0
    while :; do
        http="$(free_port)"
        grpc=$((http + 1000))
        if ((grpc < 65536)) && python3 -c "import socket,sys; s=socket.socket(); s.bind(('127.0.0.1', $grpc))" 2>/dev/null; then
            break
        fi
        ((++tries < 50)) || fail "no free port pair (http, http+1000) found"
    done
    console="$(free_port)"
    cat >"$dir/env" <<EOF
RNACOS_HTTP_PORT=$http
RNACOS_GRPC_PORT=$grpc
RNACOS_HTTP_CONSOLE_PORT=$console
RNACOS_CONFIG_DB_DIR=$dir/db
RNACOS_SDK_HOST=127.0.0.1
RNACOS_CONSOLE_HOST=127.0.0.1
RNACOS_RAFT_NODE_ADDR=127.0.0.1:$grpc
RNACOS_ENABLE_NO_AUTH_CONSOLE=true
EOF
    "$bin" -e "$dir/env" >"$dir/out.log" 2>&1 &
    pid=$!
    local deadline=$((SECONDS + 60))
    until curl -fsS "http://127.0.0.1:$http/nacos/v1/ns/service/list?pageNo=1&pageSize=1" >/dev/null 2>&1; do
        kill -0 "$pid" 2>/dev/null || { tail -n 20 "$dir/out.log" >&2; fail "rnacos exited"; }
        ((SECONDS < deadline)) || { kill "$pid"; fail "rnacos not ready within 60 s"; }
        sleep 0.2
    done
}

case "${1:-}" in
install) install ;;
path) [[ -x "$bin" ]] && echo "$bin" || exit 1 ;;
start) start "${2:-}" ;;
*) fail "usage: rnacos.sh install | path | start DIR" ;;
esac
