//! The end-to-end load tool runs and both clients complete every call (its timings belong in the README,
//! not in assertions).

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn e2e_comparison_completes_without_errors() {
    let options = rudder_examples::e2e::Options {
        calls: 200,
        levels: vec![1, 8],
        rounds: 1,
        slices: 2,
        url: None,
        noise_floor: false,
        only: None,
        tls_ca: None,
        handshakes: 0,
    };
    let report = rudder_examples::e2e::run(&options).await;
    assert_eq!(report.len(), 3, "{report:?}");
    assert!(report.iter().all(|l| !l.contains("errors")), "{report:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_one_client_runs_alone_and_no_cost_is_claimed() {
    let args = [
        "--calls", "50", "--levels", "1", "--rounds", "1", "--only", "rudder",
    ];
    let options = rudder_examples::e2e::Options::from_args(args.iter().map(|a| a.to_string()))
        .expect("valid flags");
    let report = rudder_examples::e2e::run(&options).await;
    assert_eq!(report.len(), 2, "{report:?}");
    let cells: Vec<&str> = report[1].split_whitespace().collect();
    // concurrency | bare QPS p50 p99 | rudder QPS p50 p99 | cost
    assert_eq!(cells[2], "0", "the bare client ran: {report:?}");
    assert_ne!(cells[6], "0", "rudder did not run: {report:?}");
    assert_eq!(cells.last(), Some(&"-"), "a cost was claimed: {report:?}");
    let bad =
        rudder_examples::e2e::Options::from_args(["--only", "both"].iter().map(|a| a.to_string()));
    assert!(bad.unwrap_err().contains("--only takes bare or rudder"));
}
