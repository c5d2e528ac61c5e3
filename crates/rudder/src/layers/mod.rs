//! What wraps every provider's endpoint, whichever transport made it: the facade composes these
//! tower layers over the [`Endpoint`] once per provider, below the cluster, so a transport plugged in
//! with `ConsumerBuilder::transport` gets the same metrics as dubbo:// and tri://.
//!
//! ```text
//! cluster (mode, pick) ──▶ TraceLayer ∘ StatsLayer ──▶ caller ──▶ ProviderService = MetricsLayer ∘ Endpoint ──▶ transport
//!                          (rudder-cluster, once per invoker)     (here, once per provider)
//! ```
//!
//! The call statistics (`RpcStatus` begin/end, the `actives` limit) and the `rudder.attempt` span are
//! layers too, rudder-cluster's (`cluster::layers`), composed once per invoker over its caller: an
//! attempt brings them the picked view's per-method counters and the attempt number, so they keep
//! nothing per provider, and the refusal over `actives` happens before any service under them runs.
//! Over each provider's endpoint they would have to look the method's counters up per call.

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
