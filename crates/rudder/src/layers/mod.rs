//! What wraps every provider's endpoint, whichever transport made it: the facade composes these
//! tower layers over the [`Endpoint`] once per provider, below the cluster, so a transport plugged in
//! with `ConsumerBuilder::transport` gets the same metrics as dubbo:// and tri://.
//!
//! ```text
//! cluster (pick, statistics, spans) ──▶ ProviderService = MetricsLayer ∘ Endpoint ──▶ transport
//! ```
//!
//! The call statistics (`RpcStatus` begin/end, the `actives` limit) and the `rudder.attempt` span stay
//! in the cluster invoker: both are decided with the pick (the statistics refuse a call over
//! `actives` before any service is called, and read the picked view's counters without a lookup;
//! the span carries the attempt number), so as layers they would cost a lookup per call.

mod metrics;

use std::sync::Arc;

use rudder_cluster::provider::Provider;
use rudder_rpc::endpoint::Endpoint;
use tower_layer::Layer;

pub(crate) use metrics::MetricsLayer;

use crate::observer::CallObserver;

/// A provider's call as the cluster makes it: the transport's endpoint under the consumer's layers.
pub(crate) type ProviderService = metrics::Metered<Endpoint>;

/// Wraps `endpoint`, the transport's call to `provider`, in the consumer's layers (`observer`: the
/// metrics, when the consumer keeps them).
pub(crate) fn compose(
    endpoint: Endpoint,
    provider: &Arc<Provider>,
    observer: Option<Arc<dyn CallObserver>>,
) -> ProviderService {
    MetricsLayer::new(observer, provider).layer(endpoint)
}
