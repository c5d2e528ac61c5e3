//! Four providers on a fixed clock and a seeded random source, the ports in a set answering every
//! call with a Java exception: the fixture the outlier tests share (`outlier_exceptions`,
//! `outlier_relative`).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rudder_cluster::balancer::Balancer;
use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode};
use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::outlier::Ejection;
use rudder_cluster::provider::Provider;
use rudder_common::clock::{Clock, ManualClock};
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

pub(crate) const START: i64 = 1_800_000_000_000;
pub(crate) const PORTS: [u16; 4] = [1, 2, 3, 4];

/// Answers every call; the ports in `throwing` answer with a Java exception.
#[derive(Default)]
pub(crate) struct Throwing {
    pub(crate) throwing: Mutex<HashSet<u16>>,
    pub(crate) calls: Mutex<[u32; 5]>,
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

pub(crate) fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let std::task::Poll::Ready(v) = future.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

pub(crate) struct Fixture {
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) directory: Arc<Directory>,
    pub(crate) invoker: ClusterInvoker<Throwing>,
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
    pub(crate) fn calls(&self, method: &str, n: usize) -> usize {
        let call = Invocation::new(method, vec![], vec![]);
        (0..n)
            .filter(|_| block_on(self.invoker.invoke(&call)).unwrap().is_some())
            .count()
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
