#!/usr/bin/env bash
# Installs it/node-provider's pinned dependencies (sofa-rpc-node 2.10.0 + dubbo-remoting 2.1.4)
# from package-lock.json. Idempotent: skips `npm ci` when node_modules is newer than the lock file.
set -euo pipefail

project="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../it/node-provider" && pwd)"
stamp="$project/node_modules/.package-lock.json"

if ! command -v npm >/dev/null; then
    echo "installing nodejs and npm (apt-get)" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >&2
fi

if [[ -f "$stamp" && "$stamp" -nt "$project/package-lock.json" && "$stamp" -nt "$project/package.json" ]]; then
    echo "node provider is up to date: $project/node_modules" >&2
    exit 0
fi

cd "$project"
npm ci --no-audit --no-fund --loglevel=error >&2
echo "installed $project/node_modules" >&2
