//! `rudder demo` end to end: embedded dubbo:// providers, five strategies, a table each.

use std::process::Command;

#[test]
fn demo_runs_every_strategy_over_the_wire_without_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(["demo", "--calls", "640", "--concurrency", "8"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for strategy in [
        "random",
        "roundrobin",
        "leastactive",
        "shortestresponse",
        "consistenthash",
    ] {
        assert!(
            stdout.contains(&format!("── {strategy} ── 640 calls")),
            "{strategy} missing:\n{stdout}"
        );
    }
    // Rows: address, weight, w-share%, share%, p50, p99, errors.
    let rows: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("127.0.0.1:"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 20, "{stdout}");
    assert!(
        rows.iter().all(|r| r[6] == "0"),
        "no call may fail:\n{stdout}"
    );
    // Round robin over weights 100:200:300:40 for 640 calls is exactly one cycle: shares equal weights.
    let rr = &rows[4..8];
    for row in rr {
        assert_eq!(
            row[2], row[3],
            "round robin share must equal weight share: {row:?}"
        );
    }
    // Rows are in address order, and the ports are the system's choice: find the warming one by weight.
    assert!(
        rr.iter().any(|row| row[1] == "40"),
        "the warming provider is at 1/5 of weight 200: {rr:?}"
    );
    // After the five Dubbo balancers, one reactive scenario: the slow provider, random against prequal.
    let (_, reactive) = stdout
        .split_once("── consistenthash ──")
        .and_then(|(_, rest)| rest.split_once("What rudder adds"))
        .unwrap_or_else(|| panic!("no reactive scenario after the five balancers:\n{stdout}"));
    assert!(reactive.contains("── slow ── 4 providers"), "{reactive}");
    let strategies: Vec<&str> = reactive
        .lines()
        .filter(|l| l.ends_with('%'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(strategies, ["random", "prequal"], "{reactive}");
}
