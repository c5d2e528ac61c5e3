#!/usr/bin/env bash
# Installs it/python-dubbo's pinned dependencies (apache-dubbo, kazoo, grpcio-tools) into a venv of
# its own under the cache directory: build-python-grpc.sh for that directory. Idempotent. The venv's
# python is $(scripts/peers/build-python-dubbo.sh --python).
set -euo pipefail
RUDDER_PY_PEER=python-dubbo exec "$(dirname "${BASH_SOURCE[0]}")/build-python-grpc.sh" "$@"
