#!/usr/bin/env bash
# Installs it/python-grpc's pinned dependencies (grpcio, grpcio-reflection, grpcio-tools) into a venv
# under the cache directory. Idempotent: skips pip when the venv was made from the same requirements.
# Prints nothing on stdout; the venv's python is $(scripts/peers/build-python-grpc.sh --python).
# build-python-dubbo.sh runs it for it/python-dubbo, in a venv of its own.
#
# Env: RUDDER_CACHE_DIR (default ${XDG_CACHE_HOME:-~/.cache}/rudder); RUDDER_PY_PEER (python-grpc):
# the directory under it/ whose requirements.txt is installed, into the venv <RUDDER_PY_PEER>-venv.
set -euo pipefail

peer="${RUDDER_PY_PEER:-python-grpc}"
project="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../it/$peer" && pwd)"
cache_dir="${RUDDER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rudder}"
venv="$cache_dir/$peer-venv"
stamp="$venv/.requirements.txt"

if [[ "${1:-}" == "--python" ]]; then
    echo "$venv/bin/python"
    exit 0
fi

if [[ -x "$venv/bin/python" && -f "$stamp" ]] && cmp -s "$stamp" "$project/requirements.txt"; then
    echo "$peer peer is up to date: $venv" >&2
    exit 0
fi

if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    echo "installing python3-venv (apt-get)" >&2
    apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-venv >&2
fi

rm -rf "$venv"
mkdir -p "$cache_dir"
python3 -m venv "$venv" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$project/requirements.txt" >&2
cp "$project/requirements.txt" "$stamp"
echo "installed $venv" >&2
