//! The bridge from the cluster invoker to the wire: the picked provider's service (its
//! [`Endpoint`](rudder_rpc::endpoint::Endpoint), made once per provider by the transport of its URL
//! scheme, under the consumer's [`layers`]), kept with the provider and called with the invocation.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Waker;

use rudder_cluster::cluster::{merger, BoxFuture, Caller, Timer};
use rudder_cluster::provider::Provider;
use rudder_common::error::RpcError;
use rudder_common::invocation::Invocation;
use rudder_common::Value;
use rudder_rpc::RpcResponse;

use crate::layers;
use crate::observer::CallObserver;

/// Calls providers through the service of each (dubbo://, tri://, or a plugged-in transport, under
/// the metrics layer). The cluster invoker's own layers over this caller count each call in the
/// provider's statistics and make it a span.
#[derive(Debug, Clone, Default)]
pub(crate) struct DubboCaller {
    pub(crate) protocol: crate::protocols::Protocols,
    /// Tasks waiting for a call slot (tower `poll_ready` under `actives`).
    pub(crate) waiters: Arc<Waiters>,
    /// Hears of every call (times calls and counts picks), when the consumer keeps metrics: composed
    /// as a layer over each provider's endpoint.
    pub(crate) observer: Option<Arc<dyn CallObserver>>,
}

impl DubboCaller {
    /// A caller over the consumer's transports (`protocol`), telling `observer` (the metrics) of
    /// every call.
    pub(crate) fn new(
        protocol: crate::protocols::Protocols,
        observer: Option<Arc<dyn CallObserver>>,
    ) -> DubboCaller {
        DubboCaller {
            protocol,
            waiters: Default::default(),
            observer,
        }
    }
}

/// Wakers of tasks waiting for a call to end.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    count: AtomicUsize,
    wakers: Mutex<Vec<Waker>>,
}

impl Waiters {
    /// Wakes `waker` after the next call ends.
    pub(crate) fn register(&self, waker: &Waker) {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            wakers.push(waker.clone());
            self.count.store(wakers.len(), Ordering::Release);
        }
    }

    pub(crate) fn wake_all(&self) {
        // The common case, nobody waiting, costs one load.
        if self.count.load(Ordering::Acquire) == 0 {
            return;
        }
        let wakers = {
            let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
            self.count.store(0, Ordering::Release);
            std::mem::take(&mut *wakers)
        };
        for waker in wakers {
            waker.wake();
        }
    }
}

impl Caller for DubboCaller {
    type Output = RpcResponse;

    fn empty(&self) -> RpcResponse {
        RpcResponse::from_value(Value::Null)
    }

    async fn call(
        &self,
        provider: &Arc<Provider>,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        // A provider keeps its service for its life (a configurator's change makes a new provider,
        // so a new endpoint reads the new URL).
        let make = || {
            let endpoint = self.protocol.endpoint(provider.url());
            // The balancer reads the connection's state through the provider from now on
            // (`cluster.availablecheck`).
            if let Some(availability) = endpoint.availability() {
                provider.watch_availability(availability.clone());
            }
            layers::compose(endpoint, provider, self.observer.clone())
        };
        match provider.cached(make) {
            Some(service) => service.call_shared(invocation.clone()).await,
            None => make().call_shared(invocation.clone()).await,
        }
    }

    fn call_ended(&self) {
        self.waiters.wake_all();
    }

    fn answer_attachment<'a>(&self, output: &'a RpcResponse, key: &str) -> Option<&'a str> {
        output.attachment(key).and_then(|v| v.as_str())
    }

    fn exception(&self, output: &RpcResponse) -> Option<String> {
        output.exception().map(|e| e.to_string())
    }

    /// Asked on every answer (statistics, span): no description, so no allocation.
    fn is_exception(&self, output: &RpcResponse) -> bool {
        output.exception().is_some()
    }

    /// Merges the groups' values with Dubbo's built-in mergers; the first response's attachments stay.
    fn merge(&self, name: &str, outputs: Vec<RpcResponse>) -> Result<RpcResponse, RpcError> {
        let mut attachments = None;
        let mut values = Vec::with_capacity(outputs.len());
        for output in outputs {
            if attachments.is_none() {
                attachments = Some(output.attachments().to_vec());
            }
            // Exceptions were left out by the cluster before merging.
            values.push(output.into_result().unwrap_or(Value::Null));
        }
        let merged = merger::merge_values(name, values)?;
        Ok(RpcResponse::from_value(merged).with_attachments(attachments.unwrap_or_default()))
    }
}

/// The cluster's timer on the tokio runtime the reference was built on (failback retries, forking
/// deadlines).
#[derive(Debug)]
pub(crate) struct TokioTimer(pub(crate) tokio::runtime::Handle);

impl Timer for TokioTimer {
    fn sleep(&self, delay: std::time::Duration) -> BoxFuture<()> {
        Box::pin(tokio::time::sleep(delay))
    }

    fn spawn(&self, task: BoxFuture<()>) {
        // Detached: the task ends by itself when the reference's invoker is dropped.
        drop(self.0.spawn(task));
    }
}
