//! Outlier ejection counting the provider's exceptions, on a fixed clock: one provider of four
//! throwing on every call is ejected; every provider throwing (a bad argument, the service down)
//! ejects nobody; classes declared business results (`outlier.ignore-exceptions`) never eject; a
//! provider that recovers is back when its ejection ends.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::outlier::Ejection;
use rudder_cluster::provider::Provider;
use rudder_common::clock::ManualClock;
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

const START: i64 = 1_800_000_000_000;
const PORTS: [u16; 4] = [1, 2, 3, 4];

/// Answers every call; the ports in `throwing` answer with a Java exception.
#[derive(Default)]
struct Throwing {
    throwing: Mutex<HashSet<u16>>,
    calls: Mutex<[u32; 5]>,
}

impl Caller for Throwing {
    type Output = Option<String>;
    fn empty(&self) -> Option<String> {
        None
    }
    async fn call(&self, p: &Arc<Provider>, _: &Invocation) -> Result<Option<String>, RpcError> {
        let port = p.url().port();
        self.calls.lock().unwrap()[port as usize] += 1;
        let throws = self.throwing.lock().unwrap().contains(&port);
        Ok(throws.then(|| "java.lang.IllegalStateException: database down".to_owned()))
    }
    fn exception(&self, output: &Option<String>) -> Option<String> {
        output.clone()
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

struct Fixture {
    clock: Arc<ManualClock>,
    directory: Arc<Directory>,
    invoker: ClusterInvoker<Throwing>,
}

fn fixture(params: &str, throwing: &[u16]) -> Fixture {
    let directory = Arc::new(Directory::default());
    directory.replace(
        PORTS.map(|port| {
            DubboUrl::parse(&format!("dubbo://10.0.0.{port}:{port}/S?{params}")).unwrap()
        }),
    );
    let clock = Arc::new(ManualClock::new(START));
    let balancer = Balancer::builder(Arc::clone(&directory))
        .clock(Arc::clone(&clock) as Arc<dyn rudder_common::clock::Clock>)
        .seed(11)
        .build();
    let caller = Throwing::default();
    caller.throwing.lock().unwrap().extend(throwing);
    Fixture {
        clock,
        directory,
        invoker: ClusterInvoker::new(Arc::new(balancer), caller, ClusterMode::Failfast),
    }
}

impl Fixture {
    /// Makes `n` calls of `method`; returns how many answered with an exception.
    fn calls(&self, method: &str, n: usize) -> usize {
        let call = Invocation::new(method, vec![], vec![]);
        (0..n)
            .filter(|_| block_on(self.invoker.invoke(&call)).unwrap().is_some())
            .count()
    }

    /// The ports ejected for `method` now.
    fn ejected(&self, method: &str) -> Vec<u16> {
        let now = self.clock.now_millis();
        self.directory
            .snapshot()
            .providers()
            .iter()
            .filter(|p| Ejection::of(p, method, now).is_some())
            .map(|p| p.url().port())
            .collect()
    }
}

use rudder_common::clock::Clock;

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
    f.invoker.caller().throwing.lock().unwrap().clear();
    assert_eq!(f.calls("other", 200), 0);
    assert!(f.ejected("other").is_empty());
    let calls = *f.invoker.caller().calls.lock().unwrap();
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
    f.invoker.caller().throwing.lock().unwrap().clear();
    f.clock.advance(999);
    let served = |f: &Fixture| f.invoker.caller().calls.lock().unwrap()[2];
    let at_ejection = served(&f);
    f.calls("m", 200);
    assert_eq!(served(&f), at_ejection, "still ejected 1 ms before its end");
    f.clock.advance(1);
    f.calls("m", 400);
    assert!(served(&f) > at_ejection + 50, "back within its interval");
    assert!(f.ejected("m").is_empty());
}
