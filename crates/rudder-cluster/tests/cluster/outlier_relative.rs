//! Relative outlier detection (Envoy's success rate and failure percentage) through the cluster, on a
//! fixed clock and a seeded random source: one provider of four throwing on every call is ejected at
//! the end of its interval, by either rule, without consecutive errors; every provider throwing
//! ejects nobody and leaves the other methods alone; a provider that recovers is back when its
//! ejection ends and stays in.

use crate::throwing::{fixture, Fixture, PORTS};

/// Failure percentage: 85 % of at least 20 calls per 1 s interval, four providers compared.
const FAILURE_PERCENTAGE: &str = "outlier.enforcing-failure-percentage=100&outlier.failure-percentage-minimum-hosts=4&outlier.failure-percentage-request-volume=20&outlier.interval-ms=1000";
/// Success rate: 1 σ below the mean of four, at least 20 calls per 1 s interval.
const SUCCESS_RATE: &str = "outlier.enforcing-success-rate=100&outlier.success-rate-minimum-hosts=4&outlier.success-rate-request-volume=20&outlier.success-rate-stdev-factor=1000&outlier.interval-ms=1000";

#[test]
fn one_provider_of_four_throwing_is_ejected_at_the_end_of_the_interval_by_either_rule() {
    for params in [FAILURE_PERCENTAGE, SUCCESS_RATE] {
        let f = fixture(params, &[1]);
        // The first interval: a quarter of the calls throw, nobody is ejected before it ends.
        let first = f.calls("m", 400);
        assert!(
            (60..=140).contains(&first),
            "{params}: {first} of 400 threw"
        );
        assert!(f.ejected("m").is_empty(), "{params}");
        f.clock.advance(1000);
        // The first call to end after it compares the providers.
        f.calls("m", 1);
        assert_eq!(f.ejected("m"), [1], "{params}");
        assert_eq!(f.calls("m", 400), 0, "{params}: ejected, it throws no more");
    }
}

#[test]
fn not_enough_calls_or_too_few_providers_compare_nothing() {
    // 40 calls: 10 per provider, under the volume of 20.
    let f = fixture(FAILURE_PERCENTAGE, &[1]);
    f.calls("m", 40);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert!(f.ejected("m").is_empty());
    // Five providers needed (Envoy's default), four listed.
    let f = fixture(
        "outlier.enforcing-failure-percentage=100&outlier.failure-percentage-request-volume=20&outlier.interval-ms=1000",
        &[1],
    );
    f.calls("m", 400);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert!(f.ejected("m").is_empty());
}

#[test]
fn every_provider_throwing_ejects_nobody_and_other_methods_are_unaffected() {
    // Both rules at once.
    let f = fixture(&format!("{FAILURE_PERCENTAGE}&{SUCCESS_RATE}"), &PORTS);
    for _ in 0..5 {
        assert_eq!(f.calls("m", 400), 400);
        f.clock.advance(1000);
    }
    assert_eq!(f.calls("m", 1), 1);
    assert!(f.ejected("m").is_empty(), "ejected {:?}", f.ejected("m"));
    f.stop_throwing();
    assert_eq!(f.calls("other", 400), 0);
    assert!(f.ejected("other").is_empty());
    let calls = f.served();
    assert!(calls[1..].iter().all(|&n| n > 500), "{calls:?}");
}

#[test]
fn a_provider_that_recovers_is_back_when_its_ejection_ends_and_stays() {
    let f = fixture(
        &format!("{FAILURE_PERCENTAGE}&outlier.base-ejection-ms=3000"),
        &[2],
    );
    f.calls("m", 400);
    f.clock.advance(1000);
    f.calls("m", 1);
    assert_eq!(f.ejected("m"), [2]);
    f.stop_throwing();
    let served = |f: &Fixture| f.served()[2];
    let at_ejection = served(&f);
    // Intervals pass while it is out; it is compared with nothing and not ejected again.
    for _ in 0..2 {
        f.calls("m", 300);
        f.clock.advance(1000);
    }
    f.clock.advance(999);
    f.calls("m", 200);
    assert_eq!(served(&f), at_ejection, "still ejected 1 ms before its end");
    f.clock.advance(1);
    for _ in 0..3 {
        f.calls("m", 400);
        f.clock.advance(1000);
    }
    assert!(
        served(&f) > at_ejection + 200,
        "back within its interval, and kept"
    );
    assert!(f.ejected("m").is_empty());
}
