#!/usr/bin/env bash
# Starts the Python grpcio Greeter server (it/python-grpc/server.py) in the foreground, installing its
# venv first if needed. Settings from the environment (see server.py): RUDDER_GRPC_PORT (default: the
# harness's RUDDER_DUBBO_PORT), RUDDER_INSTANCE, RUDDER_VERSION, RUDDER_REFLECTION. Prints
# "READY <url>" on stdout once it listens.
set -euo pipefail

export RUDDER_GRPC_PORT="${RUDDER_GRPC_PORT:-${RUDDER_DUBBO_PORT:?RUDDER_GRPC_PORT is required}}"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build-python-grpc.sh"
exec "$("$here/build-python-grpc.sh" --python)" "$here/../../it/python-grpc/server.py"
