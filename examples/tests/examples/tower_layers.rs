//! The tower example: `actives` back-pressure keeps the provider at its limit and every call succeeds.

use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_callers_never_exceed_two_in_flight_and_all_succeed() {
    let outcome = rudder_examples::tower_layers::run(20, Duration::from_millis(5)).await;
    assert_eq!(outcome.failed, []);
    assert_eq!(outcome.succeeded, 20);
    assert!(outcome.peak_in_flight <= 2, "{outcome:?}");
    assert!(outcome.peak_in_flight >= 1, "{outcome:?}");
}
