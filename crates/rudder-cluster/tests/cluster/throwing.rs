//! Four providers on a fixed clock and a seeded random source, the ports in a set answering every
//! call with a Java exception: the fixture the outlier tests share (`outlier_exceptions`,
//! `outlier_relative`).

use std::sync::Arc;

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::outlier::Ejection;
use rudder_common::clock::{Clock, ManualClock};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_test_support::scripted::{block_on, Scripted};

pub(crate) const START: i64 = 1_800_000_000_000;
pub(crate) const PORTS: [u16; 4] = [1, 2, 3, 4];

/// What a throwing provider's method throws.
const EXCEPTION: &str = "java.lang.IllegalStateException: database down";

/// The address of the provider on `port`.
fn address(port: u16) -> String {
    format!("10.0.0.{port}:{port}")
}

pub(crate) struct Fixture {
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) directory: Arc<Directory>,
    pub(crate) invoker: ClusterInvoker<Scripted>,
}

pub(crate) fn fixture(params: &str, throwing: &[u16]) -> Fixture {
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
    let caller = Scripted::default();
    for port in throwing {
        caller.throw_as(&address(*port), EXCEPTION);
    }
    Fixture {
        clock,
        directory,
        invoker: ClusterInvoker::new(Arc::new(balancer), caller, ClusterMode::Failfast),
    }
}

impl Fixture {
    /// Makes `n` calls of `method`; returns how many answered with an exception.
    pub(crate) fn calls(&self, method: &str, n: usize) -> usize {
        let call = Invocation::new(method, vec![], vec![]);
        (0..n)
            .filter(|_| {
                let answer = block_on(self.invoker.invoke(&call)).unwrap();
                self.invoker.caller().exception(&answer).is_some()
            })
            .count()
    }

    /// Every port answers normally from now on.
    pub(crate) fn stop_throwing(&self) {
        for port in PORTS {
            self.invoker.caller().unthrow(&address(port));
        }
    }

    /// The calls each port has served so far.
    pub(crate) fn served(&self) -> [u32; 5] {
        let mut served = [0; 5];
        for called in self.invoker.caller().calls() {
            let port: usize = called.rsplit(':').next().unwrap().parse().unwrap();
            served[port] += 1;
        }
        served
    }

    /// The ports ejected for `method` now.
    pub(crate) fn ejected(&self, method: &str) -> Vec<u16> {
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
