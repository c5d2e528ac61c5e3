#!/usr/bin/env bash
# Everything rudder's tests need, then every test. Idempotent; the README's test command and CI's.
#
#   bash scripts/test-all.sh
#
# 1. Integration prerequisites: Docker engine + the local ZooKeeper image (scripts/it-setup.sh), and the
#    real Dubbo peers under it/ (Java Dubbo 3.3 provider via Maven, sofa-rpc-node via npm) when present.
# 2. Formatting and lints (cargo fmt --check, clippy -D warnings), no import circle among a crate's
#    modules (scripts/module-graph.py), docs (also as docs.rs builds them), and `cargo package` of
#    every library crate.
# 3. cargo test for the whole workspace (unit, conformance, CLI and integration tests).
# 4. Every fuzz target under crates/*/fuzz (built from the start, at idle priority) for a bounded
#    time (scripts/fuzz.sh: needs the nightly toolchain; RUDDER_FUZZ_SECONDS per target, default 60;
#    RUDDER_SKIP_FUZZ=1 skips it loudly).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s (at %ss)\n' "$*" "$SECONDS"; }

step "integration prerequisites"
# rnacos (the Nacos tests' server) builds for ~10 minutes on a fresh machine and is cached after: its
# build runs in the background while the other prerequisites download and the lints run, and the
# tests wait for it (scripts/rnacos.sh serialises installs, so nothing builds twice).
# Background jobs (the rnacos install, the fuzz build) end with this script, also when a step fails.
stop_background() {
    local job
    for job in $(jobs -p); do
        pkill -TERM -P "$job" 2>/dev/null || true
        kill "$job" 2>/dev/null || true
    done
}
trap stop_background EXIT
rnacos_log="$(mktemp)"
bash scripts/rnacos.sh install >"$rnacos_log" 2>&1 &
rnacos_install=$!
# The fuzz targets build (several minutes of CPU on a fresh machine) at idle priority from the start, so
# they use only what the other steps leave: the downloads, and the integration tests, which mostly wait
# on containers and peers. The fuzz step at the end then finds them built.
fuzz_build_log="$(mktemp)"
RUDDER_FUZZ_BUILD_ONLY=1 nice -n 19 bash scripts/fuzz.sh >"$fuzz_build_log" 2>&1 &
fuzz_build=$!
RUDDER_RNACOS_IN_BACKGROUND=1 bash scripts/it-setup.sh
for peer in scripts/peers/build-java-provider.sh scripts/peers/build-node-provider.sh; do
    if [ -f "$peer" ]; then
        bash "$peer"
    fi
done

step "cargo fmt --check"
cargo fmt --all -- --check

step "no import circle among each crate's modules (scripts/module-graph.py)"
python3 scripts/module-graph.py --self-test
python3 scripts/module-graph.py --check crates/rudder crates/rudder-registry crates/rudder-cli crates/rudder-cluster crates/rudder-common \
    crates/rudder-hessian crates/rudder-rpc crates/rudder-triple crates/rudder-test-support

step "cargo clippy"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet

# The published crates, in dependency order (cargo packages them together, so each verifies against the
# others' packaged sources as crates.io would build them).
LIBRARIES=(-p rudder-common -p rudder-hessian -p rudder-rpc -p rudder-triple -p rudder-cluster -p rudder-registry -p rudder)

step "cargo doc as docs.rs builds it (--all-features, warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --all-features --quiet "${LIBRARIES[@]}"

step "cargo package (every library crate; the packaged sources checked together)"
# `cargo package`'s own verification builds each crate alone, in codegen mode, with the feature set of
# that crate alone: minutes of dependency builds on a fresh machine that no later step reuses. What it
# proves (the packaged files are complete and each crate compiles from them against the others'
# packaged sources, as crates.io would build them) a `cargo check` of the extracted packages, in a
# workspace of their own patched to each other, proves as well, on check-mode artifacts.
rm -rf target/package
cargo package --quiet --no-verify --allow-dirty "${LIBRARIES[@]}"
packaged=target/package/verify
mkdir -p "$packaged"
members=()
patches=()
for crate in $(printf '%s\n' "${LIBRARIES[@]}" | grep -v '^-p$'); do
    file=$(echo target/package/"$crate"-[0-9]*.crate)
    # --touch: a .crate stores every file with the same old mtime (2006), so extracted as it is, a
    # packaged crate looks older than the check artifacts of the last run and cargo would reuse them
    # (a run after a change then checks the old sources, or fails against them).
    tar -xzf "$file" -C "$packaged" --touch
    dir=$(basename "$file" .crate)
    members+=("\"$dir\"")
    patches+=("$crate = { path = \"$dir\" }")
done
{
    echo '[workspace]'
    echo "members = [$(IFS=,; echo "${members[*]}")]"
    echo 'resolver = "2"'
    echo '[patch.crates-io]'
    printf '%s\n' "${patches[@]}"
} >"$packaged/Cargo.toml"
cp Cargo.lock "$packaged/"
# The main target directory: the dependencies' check artifacts from clippy serve again, and the
# packaged crates (other sources, so other unit hashes) do not replace the workspace's own.
target_dir="$PWD/target"
(cd "$packaged" && cargo check --quiet --workspace --target-dir "$target_dir")

step "the facade without ZooKeeper (feature zookeeper off)"
cargo check -p rudder --no-default-features --quiet

step "cargo test"
if ! wait "$rnacos_install"; then
    cat "$rnacos_log" >&2
    echo "rnacos did not install (scripts/rnacos.sh install); the Nacos tests need it" >&2
    exit 1
fi
cargo test --workspace --no-fail-fast

step "fuzz"
# Whatever the early build said, the fuzz step builds (or finds built) and reports each target itself.
wait "$fuzz_build" || true
sed -n 's/^fuzz: built /fuzz (early build): built /p' "$fuzz_build_log"
bash scripts/fuzz.sh
