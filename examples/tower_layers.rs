//! A reference under tower's layers: timeout, retry and concurrency limit around a method whose
//! providers accept at most two calls at a time (`actives=2`).
//!
//! `MethodService::poll_ready` turns Dubbo's `actives` limit into back-pressure: tower waits for a free
//! slot instead of sending a call that the provider would refuse. Twenty concurrent callers then all
//! succeed while the provider never sees more than two calls at once; without the limit honoured as
//! back-pressure, the calls over the limit would fail with `LimitExceeded`.
//!
//! Run: `cargo run -p rudder-examples --example tower_layers`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rudder::{CallError, Invocation, MethodCall, Reference, RpcErrorKind, Value};
use rudder_rpc::server::DubboServer;
use tower::retry::Policy;
use tower::{BoxError, Service, ServiceBuilder, ServiceExt};

/// What a run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Calls that returned a value.
    pub succeeded: usize,
    /// Calls that failed, by error kind.
    pub failed: Vec<RpcErrorKind>,
    /// The most calls the provider was ever running at once.
    pub peak_in_flight: usize,
}

/// Retries a call that timed out, at most `left` more times (tower's retry layer; rudder's own
/// failover is off here with `retries=0`, to show the layer doing it).
#[derive(Debug, Clone)]
pub struct RetryTimeouts {
    /// Retries left for this call.
    pub left: usize,
}

impl<Res> Policy<MethodCall, Res, BoxError> for RetryTimeouts {
    type Future = std::future::Ready<()>;

    fn retry(
        &mut self,
        _: &mut MethodCall,
        result: &mut Result<Res, BoxError>,
    ) -> Option<Self::Future> {
        let timed_out = match result {
            Ok(_) => false,
            // rudder's own deadline, or the timeout layer's.
            Err(e) => e
                .downcast_ref::<CallError>()
                .map_or(e.is::<tower::timeout::error::Elapsed>(), |e| {
                    e.kind() == RpcErrorKind::Timeout
                }),
        };
        if timed_out && self.left > 0 {
            self.left -= 1;
            return Some(std::future::ready(()));
        }
        None
    }

    fn clone_request(&mut self, request: &MethodCall) -> Option<MethodCall> {
        Some(request.clone())
    }
}

/// Starts a provider that takes `work` per call, sends `callers` concurrent calls through the layers,
/// and reports what happened.
pub async fn run(callers: usize, work: Duration) -> Outcome {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let server = {
        let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
        DubboServer::bind(0, move |_call: Invocation| {
            let (in_flight, peak) = (Arc::clone(&in_flight), Arc::clone(&peak));
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(work).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(Value::from("hello"))
            }
        })
        .await
        .expect("bind")
    };
    let greeter = Reference::builder("com.acme.Greeter")
        .provider(&format!(
            "dubbo://{}/com.acme.Greeter?sayHello.actives=2",
            server.local_addr()
        ))
        .retries(0)
        .timeout(Duration::from_secs(5))
        .build()
        .await
        .expect("reference");
    let service = ServiceBuilder::new()
        .retry(RetryTimeouts { left: 2 })
        .timeout(Duration::from_secs(10))
        .concurrency_limit(64)
        .service(greeter.service("sayHello", &[]));

    let mut calls = Vec::with_capacity(callers);
    for _ in 0..callers {
        let mut service = service.clone();
        calls.push(tokio::spawn(async move {
            service.ready().await?.call(MethodCall::new(vec![])).await
        }));
    }
    let mut outcome = Outcome {
        succeeded: 0,
        failed: Vec::new(),
        peak_in_flight: 0,
    };
    for call in calls {
        match call.await.expect("caller task") {
            Ok(_) => outcome.succeeded += 1,
            Err(e) => outcome.failed.push(
                e.downcast_ref::<CallError>()
                    .map_or(RpcErrorKind::Unknown, CallError::kind),
            ),
        }
    }
    outcome.peak_in_flight = peak.load(Ordering::SeqCst);
    server.shutdown().await;
    outcome
}
