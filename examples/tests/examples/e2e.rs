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
    };
    let report = rudder_examples::e2e::run(&options).await;
    assert_eq!(report.len(), 3, "{report:?}");
    assert!(report.iter().all(|l| !l.contains("errors")), "{report:?}");
}
