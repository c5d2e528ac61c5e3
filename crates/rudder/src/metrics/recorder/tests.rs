use std::sync::Arc;

use rudder_cluster::provider::Provider;
use rudder_common::status::StatusRegistry;
use rudder_common::url::DubboUrl;

use super::*;
use crate::metrics::ticker::ManualTicker;
use rudder_common::status::record::RecordProviders;

fn provider(statuses: &StatusRegistry, url: &str) -> Arc<Provider> {
    Arc::new(Provider::new(DubboUrl::parse(url).unwrap(), statuses).unwrap())
}

fn picks(recorder: &Recorder, strategy: &str) -> u64 {
    recorder
        .picks()
        .into_iter()
        .find(|(name, _)| &**name == strategy)
        .map_or(0, |(_, count)| count)
}

#[test]
fn a_new_provider_version_keeps_the_durations_and_moves_picks_to_its_strategy() {
    let ticker = Arc::new(ManualTicker::default());
    let recorder = Recorder::new(ticker.clone());
    let statuses = StatusRegistry::default();
    let before = provider(&statuses, "dubbo://10.0.0.1:20880/S?loadbalance=roundrobin");
    {
        let _timed = recorder.start(&before, "m");
        ticker.advance_micros(700);
    }
    // A registry update: same identity and statistics, a new URL naming another strategy.
    let after = provider(
        &statuses,
        "dubbo://10.0.0.1:20880/S?m.loadbalance=leastactive",
    );
    drop(recorder.start(&after, "m"));
    assert_eq!(
        (
            picks(&recorder, "roundrobin"),
            picks(&recorder, "leastactive")
        ),
        (1, 1)
    );
    let series = recorder.series();
    assert_eq!(series.len(), 1, "one series per identity and method");
    let snapshot = series[0].2.histogram.snapshot();
    assert_eq!(snapshot.count, 2);
    assert_eq!(
        snapshot.buckets[1],
        (0.001, 1),
        "the 700 µs call, kept across versions"
    );
}

#[test]
fn a_pruned_provider_that_comes_back_starts_a_fresh_series() {
    let recorder = Recorder::new(Arc::new(ManualTicker::default()));
    let statuses = StatusRegistry::default();
    let gone = provider(&statuses, "dubbo://10.0.0.2:20880/S");
    drop(recorder.start(&gone, "m"));
    let kept = provider(&statuses, "dubbo://10.0.0.3:20880/S");
    drop(recorder.start(&kept, "m"));
    assert_eq!(recorder.retain(|identity| identity.contains("10.0.0.3")), 1);
    assert_eq!(recorder.series().len(), 1);
    statuses.remove(gone.identity());
    let back = provider(&statuses, "dubbo://10.0.0.2:20880/S");
    drop(recorder.start(&back, "m"));
    let series = recorder.series();
    let back_series = series.iter().find(|s| s.0.contains("10.0.0.2")).unwrap();
    assert_eq!(back_series.2.histogram.snapshot().count, 1);
    assert_eq!(
        picks(&recorder, "random"),
        3,
        "pick counts outlive the providers"
    );
}

#[test]
fn methods_past_the_cap_get_no_series_and_strategies_past_theirs_count_as_other() {
    let recorder = Recorder::new(Arc::new(ManualTicker::default()));
    let statuses = StatusRegistry::default();
    let one = provider(&statuses, "dubbo://10.0.0.4:20880/S");
    for i in 0..MAX_METHODS_PER_PROVIDER + 10 {
        drop(recorder.start(&one, &format!("m{i}")));
    }
    assert_eq!(recorder.series().len(), MAX_METHODS_PER_PROVIDER);
    let all = (MAX_METHODS_PER_PROVIDER + 10) as u64;
    assert_eq!(
        picks(&recorder, "random"),
        all,
        "calls past the cap are still picks"
    );
    for i in 0..MAX_STRATEGIES + 5 {
        let p = provider(
            &statuses,
            &format!("dubbo://10.0.1.{i}:1/S?loadbalance=lb{i}"),
        );
        drop(recorder.start(&p, "m"));
    }
    assert_eq!(recorder.picks().len(), MAX_STRATEGIES + 1);
    assert_eq!(
        picks(&recorder, OTHER_STRATEGY),
        6,
        "5 past the cap, plus `random`'s slot taken"
    );
}
