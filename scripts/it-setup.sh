#!/usr/bin/env bash
# One-time (idempotent) set-up for rudder's integration tests: a running Docker engine and the
# ZooKeeper image they start. Safe to run before every test run; a no-op when all is in place.
#
#   scripts/it-setup.sh && cargo test -p rudder-it
#
# Env: see scripts/ensure-docker.sh and scripts/build-zookeeper-image.sh (RUDDER_ZK_IMAGE, ...).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$script_dir/ensure-docker.sh"
"$script_dir/build-zookeeper-image.sh"
# The secured-ZooKeeper tests make their certificates with the openssl command (installed if missing).
if ! command -v openssl >/dev/null 2>&1; then
    apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q openssl >/dev/null
fi
# The Python peers of the tri:// interop tests (grpcio; apache-dubbo), each a venv under the cache directory.
"$script_dir/peers/build-python-grpc.sh"
"$script_dir/peers/build-python-dubbo.sh"
# rnacos, the Nacos-compatible server of the Nacos tests (cargo install, cached; ~10 min once, 0 after).
# scripts/test-all.sh installs it in the background instead (RUDDER_RNACOS_IN_BACKGROUND=1).
if [ -z "${RUDDER_RNACOS_IN_BACKGROUND:-}" ]; then
    "$script_dir/rnacos.sh" install >/dev/null
fi
