#!/usr/bin/env bash
# Make sure a Docker engine answers on this machine, installing and starting one if needed.
#
# Idempotent: does nothing when `docker info` already answers. Quiet on success; on failure
# prints what went wrong and where the daemon log is.
#
# The daemon runs without a bridge and without iptables rules: containers must use host
# networking and listen on 127.0.0.1 (the rudder harness does).
#
# Env: RUDDER_DOCKERD_LOG (default /tmp/rudder-dockerd.log),
#      RUDDER_DOCKER_WAIT_SECS (default 60).
set -euo pipefail

log_file="${RUDDER_DOCKERD_LOG:-/tmp/rudder-dockerd.log}"
wait_secs="${RUDDER_DOCKER_WAIT_SECS:-60}"

fail() {
    echo "ensure-docker: $*" >&2
    exit 1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        fail "need root to run: $*"
    fi
}

engine_answers() {
    docker info >/dev/null 2>&1
}

if command -v docker >/dev/null 2>&1 && engine_answers; then
    exit 0
fi

# The CLI alone is not enough: some machines ship `docker` without an engine.
if ! command -v docker >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
    apt_log="$(mktemp)"
    if ! { as_root apt-get update -q && DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q docker.io; } >"$apt_log" 2>&1; then
        cat "$apt_log" >&2
        fail "could not install docker.io with apt-get (log above)"
    fi
    rm -f "$apt_log"
fi
command -v dockerd >/dev/null 2>&1 || fail "dockerd still missing after installing docker.io"

# A daemon that is already starting (pid file of a live process) is waited for, not doubled.
pid_file=/var/run/docker.pid
if ! { [ -s "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; }; then
    # setsid + nohup: the daemon must outlive this script and the shell that ran it.
    as_root setsid nohup dockerd --iptables=false --ip-masq=false --bridge=none \
        >>"$log_file" 2>&1 </dev/null &
fi

deadline=$((SECONDS + wait_secs))
until engine_answers; do
    if [ "$SECONDS" -ge "$deadline" ]; then
        tail -n 20 "$log_file" >&2 2>/dev/null || true
        fail "docker engine did not answer within ${wait_secs}s (daemon log: $log_file)"
    fi
    sleep 0.5
done
