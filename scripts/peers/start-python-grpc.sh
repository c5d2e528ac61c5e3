#!/usr/bin/env bash
# Starts the Python grpcio Greeter server (it/python-grpc/server.py) in the foreground, installing its
# venv first if needed. Settings from the environment (see server.py): RUDDER_GRPC_PORT (required),
# RUDDER_INSTANCE, RUDDER_VERSION, RUDDER_REFLECTION. Prints "READY <url>" on stdout once it listens.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build-python-grpc.sh"
exec "$("$here/build-python-grpc.sh" --python)" "$here/../../it/python-grpc/server.py"
