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
# 4. Every fuzz target under crates/*/fuzz for a bounded time (scripts/fuzz.sh: needs the nightly
#    toolchain; RUDDER_FUZZ_SECONDS per target, default 60; RUDDER_SKIP_FUZZ=1 skips it loudly).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() { printf '\n==> %s (at %ss)\n' "$*" "$SECONDS"; }

step "integration prerequisites"
# rnacos (the Nacos tests' server) builds for ~10 minutes on a fresh machine and is cached after: its
# build runs in the background while the other prerequisites download and the lints run, and the
# tests wait for it (scripts/rnacos.sh serialises installs, so nothing builds twice).
rnacos_log="$(mktemp)"
bash scripts/rnacos.sh install >"$rnacos_log" 2>&1 &
rnacos_install=$!
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

step "cargo package (every library crate, verified)"
# Cargo verifies each package against the others through a temporary local registry, and extracts
# its crates under $CARGO_HOME/registry/src/-<hash>/ once per name and version, and compiles them into
# target/debug as registry crates (never rebuilt for a changed source): a second run of the same
# version would verify against the first run's stale sources and artifacts. Start from none of them.
cargo_home="${CARGO_HOME:-$HOME/.cargo}"
rm -rf target/package "$cargo_home"/registry/src/-*/rudder-* "$cargo_home"/registry/cache/-*/rudder-*
for dep_info in $(grep -ls "registry/src/-" target/debug/deps/rudder*.d 2>/dev/null); do
    unit=$(basename "$dep_info" .d)
    name=${unit%-*}
    rm -rf "target/debug/.fingerprint/${name//_/-}-${unit##*-}" target/debug/deps/"$unit".d \
        target/debug/deps/lib"$unit".rlib target/debug/deps/lib"$unit".rmeta
done
cargo package --quiet --allow-dirty "${LIBRARIES[@]}"

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
bash scripts/fuzz.sh
