#!/usr/bin/env bash
# Fuzzes every cargo-fuzz target in the repository for a bounded time: the fuzz step of
# scripts/test-all.sh (CI), also runnable alone. Idempotent: installs cargo-fuzz when missing and
# reuses one build cache, so a rerun only recompiles what changed.
#
#   bash scripts/fuzz.sh                      # every target under crates/*/fuzz
#   bash scripts/fuzz.sh decode json_args     # only the targets with these names
#
# Env:
#   RUDDER_FUZZ_SECONDS     fuzzing time per target, in seconds (default 60)
#   RUDDER_FUZZ_BUDGET      fuzzing time for all targets together (default 360): with more targets
#                           than fit, each gets an equal share, at least 10 s (keeps CI bounded)
#   RUDDER_FUZZ_BUILD_ONLY=1  build the targets and stop (test-all.sh runs this early, at idle
#                           priority, so the fuzz step later finds its binaries built)
#   RUDDER_SKIP_FUZZ=1      skip the step (the only way to pass without a nightly toolchain)
#   RUDDER_FUZZ_SANITIZER   cargo fuzz's --sanitizer (default none, see below; address, leak...)
#   RUDDER_FUZZ_TARGET_DIR  the build cache shared by all fuzz crates (default target/fuzz)
#
# Layout of each fuzz crate crates/<crate>/fuzz (a cargo-fuzz project, outside the workspace):
#   seeds/<target>/      committed seed inputs, read only
#   corpus/<target>/     the working corpus, grown and kept between runs (git-ignored)
#   artifacts/<target>/  inputs that crashed, leaked, ran out of memory or hung (git-ignored)
#   options/<target>     optional extra libFuzzer flags, one per line (# comments allowed); they come
#                        after the defaults below, and libFuzzer takes the last value of a flag
#
# Built without a sanitizer (cargo fuzz's `--sanitizer none`): every crate here denies `unsafe_code`, so
# AddressSanitizer has nothing of ours to watch, while it instruments every dependency (aws-lc, ring,
# tonic...) and slows each execution; panics, allocations over the RSS limit, hangs and coverage
# work the same without it. RUDDER_FUZZ_SANITIZER=address puts it back (e.g. after adding unsafe code).
#
# Defaults: -rss_limit_mb=2048 (also the largest single allocation), -max_len=1048576 (1 MiB, enough
# to see a small input amplify into a large allocation), -timeout=10 (seconds for one input).
#
# Output: one line per target (result, executions, seconds), a crash's input path and the end of
# its log, then the step's time and, last, exactly `fuzz: N passed, M failed` (CI reads that line).
# Exit status 0 only when every target passed. Setup problems (no nightly, no cargo-fuzz, a fuzz
# crate that does not list its targets) exit 1 before that line is printed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

seconds="${RUDDER_FUZZ_SECONDS:-60}"
budget="${RUDDER_FUZZ_BUDGET:-360}"
cache="${RUDDER_FUZZ_TARGET_DIR:-$root/target/fuzz}"
cargo_fuzz_version="0.13.2"
sanitizer="${RUDDER_FUZZ_SANITIZER:-none}"
default_flags=(-rss_limit_mb=2048 -max_len=1048576 -timeout=10)

loud() {
    {
        printf '\n%s\n' "################################################################################"
        printf '# %s\n' "$@"
        printf '%s\n\n' "################################################################################"
    } >&2
}

if [ "${RUDDER_SKIP_FUZZ:-}" = "1" ]; then
    loud "fuzz: SKIPPED because RUDDER_SKIP_FUZZ=1: no fuzz target ran."
    echo "fuzz: 0 passed, 0 failed"
    exit 0
fi

for setting in "RUDDER_FUZZ_SECONDS=$seconds" "RUDDER_FUZZ_BUDGET=$budget"; do
    if ! [[ "${setting#*=}" =~ ^[1-9][0-9]{0,6}$ ]]; then
        loud "fuzz: ${setting%%=*} must be a positive number of seconds, got '${setting#*=}'."
        exit 1
    fi
done

# The nightly toolchain cannot be downloaded on CI machines (it is preinstalled there), so a missing
# one is a broken machine, not something to paper over.
if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    loud "fuzz: FAILED: no nightly Rust toolchain (rustup toolchain list shows none)." \
        "cargo-fuzz needs nightly for the sanitizer flags. Install it (rustup toolchain install" \
        "nightly) or, knowing that nothing gets fuzzed, set RUDDER_SKIP_FUZZ=1."
    exit 1
fi

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz $cargo_fuzz_version from crates.io"
    if ! cargo install cargo-fuzz --locked --version "$cargo_fuzz_version"; then
        loud "fuzz: FAILED: could not install cargo-fuzz $cargo_fuzz_version (cargo install cargo-fuzz)."
        exit 1
    fi
fi

step_started=$SECONDS
build_seconds=0
passed=0
failed=0
mkdir -p "$cache/logs"

# One fuzz target, already built: fuzz it, print its line, count it.
fuzz_one() {
    local crate_dir="$1" target="$2"
    local fuzz_dir="$crate_dir/fuzz"
    local crate="${crate_dir#crates/}"
    local log="$cache/logs/$crate-$target.log"
    local corpus="$root/$fuzz_dir/corpus/$target"
    local dirs=("$corpus")
    local flags=("${default_flags[@]}" "-max_total_time=$seconds" -print_final_stats=1)
    mkdir -p "$corpus"
    if [ -d "$fuzz_dir/seeds/$target" ]; then
        dirs+=("$root/$fuzz_dir/seeds/$target")
    fi
    if [ -f "$fuzz_dir/options/$target" ]; then
        local extra
        extra=$(grep -v '^[[:space:]]*\(#\|$\)' "$fuzz_dir/options/$target" || true)
        # shellcheck disable=SC2206 # one flag per word is the file's format
        flags+=($extra)
    fi
    local started=$SECONDS status=0
    # The outer timeout is a guard only: libFuzzer stops itself after -max_total_time, and -timeout
    # turns a hanging input into an artifact.
    (cd "$crate_dir" && timeout --kill-after=30 "$((seconds * 2 + 120))" \
        cargo +nightly fuzz run --sanitizer "$sanitizer" --target-dir "$cache" "$target" "${dirs[@]}" \
        -- "${flags[@]}") >"$log" 2>&1 || status=$?
    local took=$((SECONDS - started))
    local execs
    execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    execs="${execs:-0}"
    if [ "$status" -eq 0 ]; then
        passed=$((passed + 1))
        printf 'fuzz target %s/%s: passed, %s execs in %s s\n' "$crate" "$target" "$execs" "$took"
        return
    fi
    failed=$((failed + 1))
    local artifact
    artifact=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$artifact" ]; then
        printf 'fuzz target %s/%s: FAILED after %s execs in %s s; input kept at %s\n' \
            "$crate" "$target" "$execs" "$took" "${artifact#"$root/"}"
        printf '  reproduce: (cd %s && cargo +nightly fuzz run --sanitizer %s --target-dir %s %s %s)\n' \
            "$crate_dir" "$sanitizer" "$cache" "$target" "${artifact#"$root/$crate_dir/"}"
    else
        printf 'fuzz target %s/%s: FAILED (exit status %s) after %s s, no input saved\n' \
            "$crate" "$target" "$status" "$took"
    fi
    printf '  log: %s\n' "${log#"$root/"}"
    why "$log"
}

# What went wrong, from a fuzz log: a panic's message, the sanitizer's or libFuzzer's report.
why() {
    local report
    report=$(grep -A 2 -e 'panicked at' -e '^==[0-9]*==ERROR' -e 'ERROR: libFuzzer' \
        -e '^SUMMARY:' -e '^error' "$1" | grep -v -e '^stack backtrace' -e '^--$' || true)
    if [ -z "$report" ]; then
        report=$(grep -v '^#[0-9]' "$1" | tail -n 20)
    fi
    printf '%s\n' "$report" | head -n 40 | sed 's/^/    /'
}

# Which targets to run: all, or those named on the command line.
wanted() {
    [ "$#" -eq 1 ] && return 0
    local target="$1" name
    shift
    for name in "$@"; do
        [ "$name" = "$target" ] && return 0
    done
    return 1
}

# Discovery first, so the time budget can be shared out before anything is built.
crate_dirs=()
crate_targets=()
count=0
for fuzz_dir in crates/*/fuzz; do
    [ -f "$fuzz_dir/Cargo.toml" ] || continue
    crate_dir="${fuzz_dir%/fuzz}"
    if ! targets=$(cd "$crate_dir" && cargo +nightly fuzz list); then
        loud "fuzz: FAILED: cargo fuzz list does not work in $fuzz_dir."
        exit 1
    fi
    selected=()
    for target in $targets; do
        if wanted "$target" "$@"; then
            selected+=("$target")
        fi
    done
    [ "${#selected[@]}" -gt 0 ] || continue
    crate_dirs+=("$crate_dir")
    crate_targets+=("${selected[*]}")
    count=$((count + ${#selected[@]}))
done

if [ "$count" -eq 0 ]; then
    loud "fuzz: FAILED: no fuzz target found${1:+ named $*} under crates/*/fuzz."
    exit 1
fi
shared=$((budget / count > 10 ? budget / count : 10))
if [ "$shared" -lt "$seconds" ]; then
    seconds=$shared
    echo "fuzz: $count targets share RUDDER_FUZZ_BUDGET=$budget s"
fi
echo "fuzz: $count targets in ${#crate_dirs[@]} fuzz crates, $seconds s each"

for i in "${!crate_dirs[@]}"; do
    crate_dir="${crate_dirs[$i]}"
    read -r -a selected <<<"${crate_targets[$i]}"
    build_log="$cache/logs/${crate_dir#crates/}-build.log"
    echo "fuzz: building ${selected[*]} in $crate_dir/fuzz (cache ${cache#"$root/"})"
    started=$SECONDS
    built=0
    (cd "$crate_dir" && cargo +nightly fuzz build --sanitizer "$sanitizer" --target-dir "$cache") >"$build_log" 2>&1 || built=$?
    build_seconds=$((build_seconds + SECONDS - started))
    if [ "$built" -ne 0 ]; then
        for target in "${selected[@]}"; do
            failed=$((failed + 1))
            printf 'fuzz target %s/%s: FAILED to build (log %s)\n' \
                "${crate_dir#crates/}" "$target" "${build_log#"$root/"}"
        done
        why "$build_log"
        continue
    fi
    if [ "${RUDDER_FUZZ_BUILD_ONLY:-}" = "1" ]; then
        echo "fuzz: built ${selected[*]} in $crate_dir/fuzz in $((SECONDS - started)) s"
        continue
    fi
    for target in "${selected[@]}"; do
        fuzz_one "$crate_dir" "$target"
    done
done

if [ "${RUDDER_FUZZ_BUILD_ONLY:-}" = "1" ]; then
    echo "fuzz: built $count targets in $build_seconds s (RUDDER_FUZZ_BUILD_ONLY=1: nothing fuzzed)"
    [ "$failed" -eq 0 ]
    exit
fi

total=$((SECONDS - step_started))
echo "fuzz: step took $total s ($build_seconds s building, $((total - build_seconds)) s fuzzing $count targets)"
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
