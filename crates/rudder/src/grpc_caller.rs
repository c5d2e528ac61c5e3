//! The caller of a reference's protobuf (gRPC) calls ([`Reference::grpc_channel`](crate::Reference::grpc_channel)):
//! the same registries, balancers and statistics as the reference's other calls, with the request of
//! the call in progress instead of an `Invocation`'s arguments.

use std::sync::{Arc, Mutex, PoisonError};

use rudder_cluster::cluster::{Caller, ClusterInvoker, ClusterMode, Timer};
use rudder_cluster::provider::Provider;
use rudder_cluster::rng::RngSource;
use rudder_cluster::zone_aware::{Fallback, RegistryMember, ZoneAwareInvoker};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_triple::{GrpcReply, GrpcRequest};
use tonic::body::Body;

use crate::caller::DubboCaller;
use crate::observer::Observed;

/// The request of the cluster call in progress, for its attempts.
pub(crate) enum Pending {
    /// Read whole: each attempt sends it.
    Whole(GrpcRequest),
    /// Still being written by the client: the one attempt takes it.
    Stream(Mutex<Option<(http::request::Parts, Body)>>),
}

tokio::task_local! {
    pub(crate) static PENDING: Arc<Pending>;
}

/// Calls providers with the gRPC request of the cluster call in progress, through the consumer's
/// connections, statistics and metrics (the same as a reference's other calls).
#[derive(Debug, Clone)]
pub(crate) struct GrpcCaller(DubboCaller);

impl Caller for GrpcCaller {
    type Output = GrpcReply;

    fn empty(&self) -> GrpcReply {
        GrpcReply::empty()
    }

    async fn call(
        &self,
        provider: &Arc<Provider>,
        invocation: &Invocation,
    ) -> Result<GrpcReply, RpcError> {
        let calls = &self.0;
        let _observed = calls
            .observer
            .as_deref()
            .map(|o| Observed::start(o, provider, invocation.method_name()));
        let pending = PENDING.try_with(Arc::clone).map_err(|_| {
            RpcError::new(
                RpcErrorKind::Unknown,
                "a gRPC call is sent only while its caller waits (no background retry)",
            )
        })?;
        match &*pending {
            Pending::Whole(request) => {
                calls
                    .protocol
                    .grpc_unary(provider.url(), invocation, request)
                    .await
            }
            Pending::Stream(slot) => {
                let taken = slot.lock().unwrap_or_else(PoisonError::into_inner).take();
                let Some((head, body)) = taken else {
                    return Err(RpcError::new(
                        RpcErrorKind::Unknown,
                        "a streaming gRPC request is sent once; it cannot go to another provider",
                    ));
                };
                calls
                    .protocol
                    .grpc_stream(provider.url(), invocation, head, body)
                    .await
            }
        }
    }

    fn call_ended(&self) {
        self.0.waiters.wake_all();
    }

    fn exception(&self, output: &GrpcReply) -> Option<String> {
        output
            .error_status()
            .map(|(code, message)| format!("grpc-status {} {code:?}: {message}", i32::from(code)))
    }
}

/// The gRPC calls' invoker beside a reference's own: the same registries, balancers (so the same
/// directories, routers, statistics and load-balance state) and timer, calling through
/// [`GrpcCaller`].
pub(crate) fn grpc_invoker(
    invoker: &ZoneAwareInvoker<DubboCaller>,
    timer: &Arc<dyn Timer>,
    rng: RngSource,
) -> ZoneAwareInvoker<GrpcCaller> {
    let caller = GrpcCaller(invoker.first().caller().clone());
    let members = invoker
        .members()
        .iter()
        .map(|member| {
            let invoker = |balancer: &Arc<rudder_cluster::balancer::Balancer>| {
                ClusterInvoker::new(Arc::clone(balancer), caller.clone(), ClusterMode::default())
                    .with_timer(Arc::clone(timer))
            };
            let grpc =
                RegistryMember::new(member.choice.clone(), invoker(member.invoker.balancer()));
            match &member.fallback {
                Some(fallback) => grpc.with_fallback(Fallback {
                    invoker: invoker(fallback.invoker.balancer()),
                    share: Arc::clone(&fallback.share),
                }),
                None => grpc,
            }
        })
        .collect();
    ZoneAwareInvoker::new(members, rng)
        .expect("as many registries as the reference's own invoker")
        .with_failover(invoker.failover())
}
