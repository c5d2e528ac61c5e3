//! Scripted providers: a [`Caller`] whose answers come from a script the test changes between calls,
//! plugged into a `ClusterInvoker` where the facade plugs its transports. No I/O, no clock.
//!
//! ```
//! use std::sync::Arc;
//! use rudder_cluster::{balancer::Balancer, cluster::{ClusterInvoker, ClusterMode}, directory::Directory};
//! use rudder_common::{error::RpcErrorKind, invocation::Invocation, url::DubboUrl};
//! use rudder_test_support::scripted::{block_on, Scripted};
//!
//! let directory = Arc::new(Directory::default());
//! directory.replace([DubboUrl::parse("dubbo://10.0.0.1:1/S?loadbalance=roundrobin").unwrap(),
//!                    DubboUrl::parse("dubbo://10.0.0.2:1/S").unwrap()]);
//! let scripted = Scripted::default();
//! scripted.fail("10.0.0.1:1", RpcErrorKind::Network);
//! let invoker = ClusterInvoker::new(Arc::new(Balancer::builder(directory).build()), scripted,
//!                                   ClusterMode::Failover { retries: 1 });
//! let answer = block_on(invoker.invoke(&Invocation::new("m", vec![], vec![])));
//! assert_eq!(answer.unwrap(), "10.0.0.2:1");
//! assert_eq!(invoker.caller().calls(), ["10.0.0.1:1", "10.0.0.2:1"]);
//! ```

use std::collections::{HashMap, HashSet};

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

use rudder_cluster::cluster::Caller;
use rudder_cluster::provider::Provider;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;

/// Answers from a script: addresses set to [`fail`](Scripted::fail) fail with that kind, those set to
/// [`throw`](Scripted::throw) answer with a business exception (`exception@<address>`), those set to
/// [`hang`](Scripted::hang) never answer; the others answer their address (`host:port`). Clones share
/// the script and the call log.
#[derive(Debug, Default, Clone)]
pub struct Scripted {
    script: Arc<Mutex<Script>>,
}

#[derive(Debug, Default)]
struct Script {
    failing: HashMap<String, RpcErrorKind>,
    /// Address to the exception's description when not the default (`exception@<address>`).
    throwing: HashMap<String, Option<String>>,
    hanging: HashSet<String>,
    calls: Vec<String>,
}

impl Scripted {
    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The addresses called so far, in order.
    pub fn calls(&self) -> Vec<String> {
        self.script().calls.clone()
    }

    /// Calls to `address` fail with `kind` from now on.
    pub fn fail(&self, address: &str, kind: RpcErrorKind) {
        self.script().failing.insert(address.to_owned(), kind);
    }

    /// Calls to `address` answer again.
    pub fn heal(&self, address: &str) {
        self.script().failing.remove(address);
    }

    /// Calls to `address` answer with a business exception from now on.
    pub fn throw(&self, address: &str) {
        self.script().throwing.insert(address.to_owned(), None);
    }

    /// Calls to `address` answer with a business exception described as `exception` (as the facade
    /// describes a Java one: `class: message`) from now on; the answer is still
    /// `exception@<address>`.
    pub fn throw_as(&self, address: &str, exception: &str) {
        let description = Some(exception.to_owned());
        self.script()
            .throwing
            .insert(address.to_owned(), description);
    }

    /// Calls to `address` answer normally again instead of throwing.
    pub fn unthrow(&self, address: &str) {
        self.script().throwing.remove(address);
    }

    /// Calls to `address` never answer from now on (they end when dropped).
    pub fn hang(&self, address: &str) {
        self.script().hanging.insert(address.to_owned());
    }

    /// Calls to `address` answer again (those already hanging stay so).
    pub fn unhang(&self, address: &str) {
        self.script().hanging.remove(address);
    }
}

impl Caller for Scripted {
    type Output = String;

    fn empty(&self) -> String {
        String::new()
    }

    async fn call(&self, provider: &Arc<Provider>, _: &Invocation) -> Result<String, RpcError> {
        let address = provider.address().to_owned();
        let (hanging, throwing, failing) = {
            let mut script = self.script();
            script.calls.push(address.clone());
            (
                script.hanging.contains(&address),
                script.throwing.contains_key(&address),
                script.failing.get(&address).copied(),
            )
        };
        if hanging {
            std::future::pending::<()>().await;
        }
        if throwing {
            return Ok(format!("exception@{address}"));
        }
        match failing {
            Some(kind) => Err(RpcError::new(kind, format!("{address} failed"))),
            None => Ok(address),
        }
    }

    /// An `exception@<address>` answer is an exception, described as [`Scripted::throw_as`] said, or
    /// as the answer itself.
    fn exception(&self, output: &String) -> Option<String> {
        let address = output.strip_prefix("exception@")?;
        let described = self.script().throwing.get(address).cloned().flatten();
        Some(described.unwrap_or_else(|| output.clone()))
    }

    /// Joins with `+`, in the order given, under the merger named `join` (any other name is an
    /// error, as an unknown merger is).
    fn merge(&self, merger: &str, outputs: Vec<String>) -> Result<String, RpcError> {
        match merger {
            "join" => Ok(outputs.join("+")),
            other => Err(RpcError::new(
                RpcErrorKind::Unknown,
                format!("the scripted caller merges with `join` only, not {other}"),
            )),
        }
    }
}

/// Runs `future` to its end on this thread, polling it with a no-op waker: for futures that never
/// wait on anything but the scripted callers' answers (which are ready at once).
///
/// # Panics
/// Never returns if the future waits on something else (a hanging provider, a timer).
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut cx) {
            return value;
        }
    }
}

/// Polls `future` once (a test that looks at a call in flight).
pub fn poll_once<F: Future>(future: std::pin::Pin<&mut F>) -> Poll<F::Output> {
    let mut cx = Context::from_waker(Waker::noop());
    future.poll(&mut cx)
}
