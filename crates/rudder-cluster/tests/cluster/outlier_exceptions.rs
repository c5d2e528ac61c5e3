//! Outlier ejection counting the provider's exceptions, on a fixed clock: one provider of four
//! throwing on every call is ejected; every provider throwing (a bad argument, the service down)
//! ejects nobody; classes declared business results (`outlier.ignore-exceptions`) never eject; a
//! provider that recovers is back when its ejection ends.

use crate::throwing::{fixture, Fixture, PORTS};

#[test]
fn one_provider_of_four_throwing_is_ejected_and_its_exceptions_stop() {
    let f = fixture("outlier.consecutive-errors=5", &[1]);
    let before = f.calls("m", 400);
    assert_eq!(f.ejected("m"), [1]);
    // Five in a row ejected it: it threw five times, then never again while ejected.
    assert_eq!(before, 5);
    assert_eq!(f.calls("m", 400), 0);
    // Without ejection a quarter of the calls would throw: plain random as the baseline.
    let plain = fixture("", &[1]);
    let baseline = plain.calls("m", 800);
    assert!(baseline > 150, "plain random threw {baseline} of 800");
}

#[test]
fn every_provider_throwing_ejects_nobody_and_other_methods_are_unaffected() {
    let f = fixture("outlier.consecutive-errors=5", &PORTS);
    assert_eq!(f.calls("m", 1000), 1000);
    assert!(f.ejected("m").is_empty(), "ejected {:?}", f.ejected("m"));
    // Per method: the same providers' other method is neither ejected nor refused.
    f.stop_throwing();
    assert_eq!(f.calls("other", 200), 0);
    assert!(f.ejected("other").is_empty());
    let calls = f.served();
    assert!(calls[1..].iter().all(|&n| n > 200), "{calls:?}");
}

#[test]
fn declared_business_exceptions_do_not_eject() {
    let f = fixture(
        "outlier.consecutive-errors=5&outlier.ignore-exceptions=com.acme.NotFound,java.lang.IllegalStateException",
        &[1],
    );
    assert!(f.calls("m", 400) > 50);
    assert!(f.ejected("m").is_empty());
}

#[test]
fn a_provider_that_recovers_is_back_when_its_ejection_ends() {
    let f = fixture(
        "outlier.consecutive-errors=5&outlier.base-ejection-ms=1000",
        &[2],
    );
    f.calls("m", 200);
    assert_eq!(f.ejected("m"), [2]);
    f.stop_throwing();
    f.clock.advance(999);
    let served = |f: &Fixture| f.served()[2];
    let at_ejection = served(&f);
    f.calls("m", 200);
    assert_eq!(served(&f), at_ejection, "still ejected 1 ms before its end");
    f.clock.advance(1);
    f.calls("m", 400);
    assert!(served(&f) > at_ejection + 50, "back within its interval");
    assert!(f.ejected("m").is_empty());
}
