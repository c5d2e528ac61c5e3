#!/usr/bin/env bash
# Build the local ZooKeeper image the integration tests run, without any container registry.
#
# Idempotent: does nothing when the image already exists. The image is a Debian rootfs made
# with debootstrap (openjdk-17-jre-headless + Debian's zookeeper 3.8 package), imported into
# Docker, plus a start script (/usr/local/bin/rudder-zk-start) that writes zoo.cfg from env vars.
#
# The image carries a label with a hash of the start script, so editing the script and
# re-running this rebuilds it. Two caches make a rebuild fast:
#   - the debootstrap rootfs tarball under $RUDDER_CACHE_DIR (default ~/.cache/rudder);
#   - the imported rootfs image ($RUDDER_ZK_BASE_IMAGE), so changing only the start script
#     costs a docker commit.
#
# Env:
#   RUDDER_ZK_IMAGE        image to produce (default rudder/zookeeper:3.8). When it names
#                          something other than a rudder/ image (e.g. zookeeper:3.9), this
#                          script only checks that it is present or pullable and builds nothing.
#   RUDDER_ZK_BASE_IMAGE   intermediate rootfs image (default rudder/zookeeper-rootfs:bookworm)
#   RUDDER_CACHE_DIR       cache directory (default ${XDG_CACHE_HOME:-~/.cache}/rudder)
#   RUDDER_DEBIAN_SUITE    Debian suite to bootstrap (default bookworm: it has openjdk-17)
#   RUDDER_DEBIAN_MIRROR   mirror URL; default: the one this machine's apt already uses
set -euo pipefail

image="${RUDDER_ZK_IMAGE:-rudder/zookeeper:3.8}"
base_image="${RUDDER_ZK_BASE_IMAGE:-rudder/zookeeper-rootfs:bookworm}"
cache_dir="${RUDDER_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rudder}"
suite="${RUDDER_DEBIAN_SUITE:-bookworm}"
packages="openjdk-17-jre-headless,zookeeper,netcat-openbsd"
script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
start_script="$script_dir/zookeeper/rudder-zk-start"
# Cache keys: a change of package list or start script must not reuse a stale build.
rootfs_key="$(printf '%s' "$packages" | sha256sum | cut -c1-12)"
rootfs_tar="$cache_dir/zookeeper-rootfs-$suite-$rootfs_key.tar"
base_image="$base_image-$rootfs_key"
start_script_key="$(sha256sum "$start_script" | cut -c1-12)"

fail() {
    echo "build-zookeeper-image: $*" >&2
    exit 1
}

# Runs a command with its output captured; shows the output only when it fails.
quietly() {
    local out
    out="$(mktemp)"
    if ! "$@" >"$out" 2>&1; then
        tail -n 40 "$out" >&2
        rm -f "$out"
        fail "command failed: $*"
    fi
    rm -f "$out"
}

image_present() {
    docker image inspect "$1" >/dev/null 2>&1
}

# Prints the Debian mirror this machine's apt uses (first non-security URI), deb822 first.
host_debian_mirror() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -e "$f" ] || continue
        uri="$(awk '
            /^[[:space:]]*$/ { if (uri != "" && !security) { print uri; exit } uri = ""; security = 0; next }
            /^URIs:/ { uri = $2 }
            /^Suites:/ { if ($0 ~ /-security/) security = 1 }
            END { if (uri != "" && !security) print uri }
        ' "$f" | head -n 1)"
        if [ -n "$uri" ]; then
            echo "$uri"
            return 0
        fi
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -e "$f" ] || continue
        uri="$(awk '
            $1 == "deb" {
                i = 2
                if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                if ($(i + 1) !~ /-security/ && $i !~ /security/) { print $i; exit }
            }
        ' "$f")"
        if [ -n "$uri" ]; then
            echo "$uri"
            return 0
        fi
    done
    return 1
}

# Removes a debootstrap work directory, but only once nothing is mounted below it: debootstrap
# may bind-mount the host's /dev into the target, and rm -rf must never reach through that.
remove_build_dir() {
    local dir="$1"
    [ -d "$dir" ] || return 0
    awk -v d="$dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r |
        while read -r mount_point; do
            umount -l "$mount_point" 2>/dev/null || true
        done
    if awk -v d="$dir/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
        echo "build-zookeeper-image: left $dir in place: something is still mounted below it" >&2
        return 0
    fi
    rm -rf "$dir"
}

build_rootfs_tarball() {
    [ "$(id -u)" -eq 0 ] || fail "debootstrap needs root; run as root (or with sudo)"
    if ! command -v debootstrap >/dev/null 2>&1; then
        quietly apt-get update -q
        quietly env DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap
    fi
    local mirror="${RUDDER_DEBIAN_MIRROR:-}"
    if [ -z "$mirror" ]; then
        mirror="$(host_debian_mirror)" ||
            fail "no Debian mirror found in /etc/apt; set RUDDER_DEBIAN_MIRROR"
    fi
    mkdir -p "$cache_dir"
    build_dir="$(mktemp -d "$cache_dir/rootfs.XXXXXX")"
    trap 'remove_build_dir "$build_dir"' EXIT
    quietly debootstrap --variant=minbase --include="$packages" "$suite" "$build_dir/rootfs" "$mirror"
    # Trim what a test container never needs; keeps the tarball and the import smaller.
    rm -rf "$build_dir/rootfs/var/cache/apt/archives/"*.deb "$build_dir/rootfs/var/lib/apt/lists/"* \
        "$build_dir/rootfs/usr/share/doc" "$build_dir/rootfs/usr/share/man" \
        "$build_dir/rootfs/usr/share/locale"
    quietly tar -C "$build_dir/rootfs" --one-file-system --numeric-owner -cf "$build_dir/rootfs.tar" .
    mv "$build_dir/rootfs.tar" "$rootfs_tar"
    remove_build_dir "$build_dir"
    trap - EXIT
}

"$script_dir/ensure-docker.sh"

case "$image" in
rudder/*) ;;
*)
    # A registry image such as zookeeper:3.9: nothing to build, it must be present or pullable.
    image_present "$image" || docker pull -q "$image" >/dev/null 2>&1 ||
        fail "image $image is neither present nor pullable; unset RUDDER_ZK_IMAGE to use the local build"
    exit 0
    ;;
esac

built_from="$(docker image inspect -f '{{ index .Config.Labels "rudder.start-script" }}' "$image" 2>/dev/null || true)"
[ "$built_from" = "$start_script_key" ] && exit 0
# An image built from an older start script is replaced; its id is removed at the end.
stale_id="$(docker image inspect -f '{{ .Id }}' "$image" 2>/dev/null || true)"

if ! image_present "$base_image"; then
    [ -s "$rootfs_tar" ] || build_rootfs_tarball
    quietly docker import "$rootfs_tar" "$base_image"
fi

# Layer the start script over the rootfs with create/cp/commit: needs no builder plugin.
container="$(docker create "$base_image" /bin/true)"
trap 'docker rm -f "$container" >/dev/null 2>&1 || true' EXIT
quietly docker cp "$start_script" "$container:/usr/local/bin/rudder-zk-start"
quietly docker commit \
    --change 'CMD ["/usr/local/bin/rudder-zk-start"]' \
    --change 'ENV ZK_PORT=2181 ZK_DATA_DIR=/data ZK_TICK_TIME=500' \
    --change 'LABEL org.opencontainers.image.title="rudder ZooKeeper for integration tests"' \
    --change "LABEL rudder.start-script=$start_script_key" \
    "$container" "$image"
if [ -n "$stale_id" ]; then
    # Still used by a container? Then leave it; docker refuses and nothing is lost.
    docker rmi "$stale_id" >/dev/null 2>&1 || true
fi
