//! The comparison alone, on counts given: which providers each rule finds, and when none.

use super::*;

fn success_rate(stdev_factor: u32, minimum_hosts: u32) -> RelativeSettings {
    RelativeSettings {
        interval_ms: 10_000,
        success_rate: Some(SuccessRate {
            enforcing: 100,
            minimum_hosts,
            request_volume: 100,
            stdev_factor,
        }),
        failure_percentage: None,
    }
}

fn failure_percentage(threshold: u8, minimum_hosts: u32) -> RelativeSettings {
    RelativeSettings {
        interval_ms: 10_000,
        success_rate: None,
        failure_percentage: Some(FailurePercentage {
            enforcing: 100,
            threshold,
            minimum_hosts,
            request_volume: 50,
        }),
    }
}

fn always(_: u8) -> bool {
    true
}

const ONE_OF_FOUR: [Counts; 4] = [
    Counts {
        ok: 200,
        failed: 0,
        ejected: false,
    },
    Counts {
        ok: 0,
        failed: 200,
        ejected: false,
    },
    Counts {
        ok: 200,
        failed: 0,
        ejected: false,
    },
    Counts {
        ok: 198,
        failed: 2,
        ejected: false,
    },
];

#[test]
fn success_rate_finds_the_failing_one_of_four_with_a_factor_under_one_and_a_half() {
    // Rates 100, 0, 100, 99: mean 74.75, σ 43.0; 1 σ below is 31.7.
    assert_eq!(
        outliers(&ONE_OF_FOUR, &success_rate(1000, 4), &mut always),
        [1]
    );
    // Envoy's 1.9 σ cannot find one outlier among four (at most 1.5 σ below the mean).
    assert!(outliers(&ONE_OF_FOUR, &success_rate(1900, 4), &mut always).is_empty());
}

#[test]
fn failure_percentage_finds_the_failing_one_while_another_answers() {
    assert_eq!(
        outliers(&ONE_OF_FOUR, &failure_percentage(85, 4), &mut always),
        [1]
    );
    // 1 % failed is under every threshold above it, and at 0 % every provider is "over".
    assert_eq!(
        outliers(&ONE_OF_FOUR, &failure_percentage(1, 4), &mut always),
        [1, 3]
    );
}

#[test]
fn every_provider_failing_ejects_nobody() {
    let all = [Counts::new(0, 300); 4];
    assert!(outliers(&all, &success_rate(0, 1), &mut always).is_empty());
    assert!(outliers(&all, &failure_percentage(85, 1), &mut always).is_empty());
    // Failing alike, partly: the same.
    let half = [Counts::new(100, 100); 4];
    assert!(outliers(&half, &failure_percentage(50, 1), &mut always).is_empty());
    assert!(outliers(&half, &success_rate(0, 1), &mut always).is_empty());
}

#[test]
fn too_few_calls_or_providers_compare_nothing() {
    let quiet = [
        Counts::new(99, 0),
        Counts::new(0, 99),
        Counts::new(99, 0),
        Counts::new(99, 0),
    ];
    assert!(outliers(&quiet, &success_rate(1000, 4), &mut always).is_empty());
    // Three with enough calls, five needed (Envoy's default).
    let three = [
        Counts::new(0, 200),
        Counts::new(200, 0),
        Counts::new(200, 0),
        Counts::new(10, 0),
    ];
    assert!(outliers(&three, &success_rate(1000, 5), &mut always).is_empty());
    assert!(outliers(&three, &failure_percentage(85, 5), &mut always).is_empty());
    assert_eq!(
        outliers(&three, &failure_percentage(85, 3), &mut always),
        [0]
    );
}

#[test]
fn an_ejected_provider_is_compared_but_not_ejected_again() {
    let mut counts = ONE_OF_FOUR;
    counts[1].ejected = true;
    assert!(outliers(&counts, &failure_percentage(85, 4), &mut always).is_empty());
}

#[test]
fn the_enforcing_chance_is_asked_with_its_percentage_and_obeyed() {
    let mut both = success_rate(1000, 4);
    both.failure_percentage = failure_percentage(85, 4).failure_percentage;
    both.failure_percentage.as_mut().unwrap().enforcing = 30;
    let mut asked = Vec::new();
    let found = outliers(&ONE_OF_FOUR, &both, &mut |chance| {
        asked.push(chance);
        false
    });
    assert!(found.is_empty());
    assert_eq!(asked, [100, 30], "each rule rolls with its own chance");
    // Found by both rules: ejected once.
    let mut asked = 0;
    let found = outliers(&ONE_OF_FOUR, &both, &mut |_| {
        asked += 1;
        true
    });
    assert_eq!((found, asked), (vec![1], 1));
}
