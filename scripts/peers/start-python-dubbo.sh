#!/usr/bin/env bash
# Starts the apache-dubbo (Python) Triple Greeter (it/python-dubbo/server.py) in the foreground,
# installing its venv first if needed. Settings from the environment (see server.py):
# RUDDER_ZK_ADDRESS, RUDDER_DUBBO_PORT, RUDDER_INSTANCE. Prints "READY <url>" on stdout once it is
# registered in ZooKeeper.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build-python-dubbo.sh"
exec "$("$here/build-python-dubbo.sh" --python)" "$here/../../it/python-dubbo/server.py"
