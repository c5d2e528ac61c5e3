#!/usr/bin/env bash
# Starts the sofa-rpc-node GreetingService provider in the foreground (installs it first if needed).
# Settings from the environment:
#   RUDDER_ZK_ADDRESS (127.0.0.1:2181)  RUDDER_DUBBO_PORT (20890)  RUDDER_INSTANCE (node-PORT)
#   RUDDER_VERSION (1.0.0)  RUDDER_GROUP ("")  RUDDER_WEIGHT (100)
# Prints "READY <url>" on stdout once its URL is in ZooKeeper; logs go to stderr.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
"$here/build-node-provider.sh"
exec node "$here/../../it/node-provider/provider.js"
