//! Ports of Dubbo's `RpcStatusTest`.

use super::*;

const URL: &str = "dubbo://127.0.0.1:91031/DemoService";

#[test]
fn limit_of_two_admits_two_then_refuses() {
    let registry = StatusRegistry::default();
    let p = registry.provider(URL);
    let first = p.begin("test", 2).unwrap();
    assert_eq!((p.service().active(), p.method("test").active()), (1, 1));
    first.finish(1000, true);
    assert_eq!((p.service().active(), p.method("test").active()), (0, 0));
    let a = p.begin("test", 2).unwrap();
    let b = p.begin("test", 2).unwrap();
    assert!(p.begin("test", 2).is_none());
    a.finish(1, true);
    b.finish(1, true);
}

#[test]
fn concurrent_begins_respect_the_limit_exactly() {
    let registry = StatusRegistry::default();
    let p = registry.provider(URL);
    let admitted: Vec<Vec<ActiveCall>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..10)
            .map(|_| {
                s.spawn(|| {
                    (0..100)
                        .filter_map(|_| p.begin("test", 50))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(admitted.iter().map(Vec::len).sum::<usize>(), 50);
    assert_eq!(p.method("test").active(), 50);
}

#[test]
fn statistics_table_matches_dubbo() {
    let registry = StatusRegistry::default();
    let p = registry.provider(URL);
    let calls: Vec<_> = (0..4).map(|_| p.begin("test", 0).unwrap()).collect();
    for (call, (elapsed, ok)) in
        calls
            .into_iter()
            .zip([(1000, true), (2000, true), (3000, false), (4000, false)])
    {
        call.finish(elapsed, ok);
    }
    for s in [p.service(), &*p.method("test")] {
        assert_eq!(s.active(), 0);
        assert_eq!(s.total(), 4);
        assert_eq!(s.total_elapsed(), 10000);
        assert_eq!(s.max_elapsed(), 4000);
        assert_eq!(s.average_elapsed(), 2500);
        assert_eq!(s.average_tps(), 0);
        assert_eq!(s.succeeded(), 2);
        assert_eq!(s.succeeded_elapsed(), 3000);
        assert_eq!(s.succeeded_max_elapsed(), 2000);
        assert_eq!(s.succeeded_average_elapsed(), 1500);
        assert_eq!(s.failed(), 2);
        assert_eq!(s.failed_elapsed(), 7000);
        assert_eq!(s.failed_max_elapsed(), 4000);
        assert_eq!(s.failed_average_elapsed(), 3500);
    }
}

#[test]
fn dropping_an_unfinished_call_releases_its_slot_as_a_failure() {
    let registry = StatusRegistry::default();
    let p = registry.provider(URL);
    drop(p.begin("test", 1).unwrap());
    assert_eq!(p.method("test").active(), 0);
    assert_eq!(p.method("test").failed(), 1);
    assert!(p.begin("test", 1).is_some());
}

#[test]
fn a_borrowed_call_counts_as_an_owned_one_and_a_refusal_counts_nothing() {
    let registry = StatusRegistry::default();
    let p = registry.provider(URL);
    let method = p.method("test");
    let held = p.begin_borrowed(&method, 1).unwrap();
    // Refused at the limit: nothing begins, so nothing ends either (no failure, no slot given back).
    assert!(p.begin_borrowed(&method, 1).is_none());
    assert_eq!(
        (method.active(), method.failed(), p.service().active()),
        (1, 0, 1)
    );
    held.finish(0, true);
    // Dropped unfinished: a failure of zero elapsed time, its slot released.
    drop(p.begin_borrowed(&method, 1).unwrap());
    p.begin_borrowed(&method, 1).unwrap().finish(3000, false);
    for s in [p.service(), &*method] {
        assert_eq!(
            (s.active(), s.total(), s.succeeded(), s.failed()),
            (0, 3, 1, 2)
        );
        assert_eq!(
            (s.total_elapsed(), s.failed_elapsed(), s.max_elapsed()),
            (3000, 3000, 3000)
        );
        assert_eq!(
            (s.succeeded_max_elapsed(), s.failed_max_elapsed()),
            (0, 3000)
        );
    }
}

#[test]
fn identity_keys_share_state() {
    let registry = StatusRegistry::default();
    let a = registry.provider(URL);
    let b = registry.provider(URL);
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(registry.len(), 1);
}

#[test]
fn methods_of_allocates_the_missing_counters_together_and_reuses_the_rest() {
    let registry = StatusRegistry::default();
    let [a, b, c] = ["a", "b", "c"].map(|host| registry.provider(&format!("dubbo://{host}:1/S")));
    let existing = b.method("m");
    // `a` listed twice: its counters are created once and shared by both entries.
    let statuses = ProviderStatus::methods_of([&*a, &*b, &*c, &*a], "m");
    assert!(statuses[1].same(&existing));
    assert!(statuses[0].same(&statuses[3]));
    assert!(
        statuses[2].follows(&statuses[0]),
        "a and c were created together, in order"
    );
    assert_eq!(statuses[0].run(2).map(<[_]>::len), Some(2));
    assert!(
        statuses[0].run(4).is_none(),
        "a run never reads past its block"
    );
    // The handles are the provider's own counters.
    let call = c.begin("m", 0).unwrap();
    assert_eq!(statuses[2].active(), 1);
    call.finish(5, true);
    assert_eq!(statuses[2].succeeded(), 1);
}
