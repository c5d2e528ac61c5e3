//! [`Consumer`]: the process-level runtime, the Rust counterpart of Dubbo's application model.
//!
//! A process normally has one. It owns everything that Dubbo shares between the references of an
//! application:
//!
//! * registry sessions: one ZooKeeper session per distinct registry address, shared by every reference
//!   subscribed through it (a reference with several registries uses one session of each);
//! * connections: one set per provider address, shared by every reference that
//!   calls that address;
//! * call statistics ([`StatusRegistry`](crate::extension::StatusRegistry)), per provider and per provider and method: `leastactive` on
//!   one reference sees the calls made through every other, as Dubbo's process-wide `RpcStatus` does;
//! * the load-balance strategies by name ([`ConsumerBuilder::loadbalance_policy`]): a custom strategy is registered once,
//!   and a strategy's state (round-robin counters, response windows) is shared as Dubbo's singletons are;
//! * the application name references register under.
//!
//! References are cheap handles built from it ([`Consumer::reference`]). Everything the consumer opens, it
//! closes: when a provider leaves every directory its statistics are pruned and its connections close once
//! their calls in flight end; when the last handle (consumer or reference) is dropped, or on
//! [`Consumer::shutdown`], every session, connection and task ends.
//!
//! ```
//! use rudder::{Consumer, Invocation, Value};
//! # use rudder_rpc::server::DubboServer;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = DubboServer::bind(0, |call: Invocation| async move {
//! #     Ok(Value::from(call.method_name().to_owned()))
//! # })
//! # .await?;
//! let consumer = Consumer::builder().application("orders").build();
//! let greeter = consumer
//!     .reference("com.acme.Greeter")
//!     .provider(&format!("dubbo://{}/com.acme.Greeter", server.local_addr()))
//!     .build()
//!     .await?;
//! let billing = consumer
//!     .reference("com.acme.Billing")
//!     .provider(&format!("dubbo://{}/com.acme.Billing", server.local_addr()))
//!     .build()
//!     .await?;
//! greeter.call::<Value, _>("sayHello", &[], vec![]).await?;
//! billing.call::<Value, _>("charge", &[], vec![]).await?;
//! assert_eq!(consumer.statuses().len(), 2); // statistics per provider (address and service)
//! assert_eq!(consumer.diagnostics().open_connections(), 1); // one address, one connection, for both references
//! consumer.shutdown().await;
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```

use rudder_common::status::record::RecordProviders;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rudder_cluster::directory::Directory;
use rudder_cluster::loadbalance::LoadBalanceRegistry;
use rudder_common::clock::Clock;
use rudder_common::status::StatusRegistry;

use crate::observer::CallObserver;

mod builder;

pub use builder::ConsumerBuilder;

/// The process-level consumer runtime. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Consumer {
    pub(crate) inner: Arc<ConsumerInner>,
}

/// What a consumer owns, shared by its handles and its references. The other modules go through its
/// methods, never its fields.
pub(crate) struct ConsumerInner {
    application: Option<String>,
    /// The one address this consumer registers under, is matched by configurators as, and routes as
    /// (`host` in condition rules); `Err` when `DUBBO_IP_TO_REGISTRY` is unusable (reference builds
    /// fail with it).
    host: Result<String, rudder_common::net::InvalidHost>,
    protocol: crate::protocols::Protocols,
    statuses: Arc<StatusRegistry>,
    policies: LoadBalanceRegistry,
    clock: Arc<dyn Clock>,
    seed: Option<u64>,
    #[cfg(feature = "zookeeper")]
    registries: crate::registry::Registries,
    /// What the registries' MetadataService calls got.
    #[cfg(feature = "zookeeper")]
    metadata_calls: Arc<crate::metadata_client::CallCounts>,
    /// Call durations and picks, when metrics are on.
    #[cfg(feature = "metrics")]
    metrics: Option<Arc<crate::metrics::recorder::Recorder>>,
    /// The directories of live references, to tell which providers are still in use.
    directories: Mutex<Vec<Weak<Directory>>>,
    /// Providers registries took out of directories, waiting for a check (see `prune`).
    #[cfg(feature = "zookeeper")]
    prune_queue: crate::prune::PruneQueue,
    shut_down: AtomicBool,
}

impl Consumer {
    /// Starts configuring a consumer.
    pub fn builder() -> ConsumerBuilder {
        ConsumerBuilder::new()
    }

    /// The application name references register under, if set.
    pub fn application(&self) -> Option<&str> {
        self.inner.application()
    }

    /// The address references register under and route as (see [`ConsumerBuilder::host`]); `None`
    /// when `DUBBO_IP_TO_REGISTRY` names an address that cannot be used (building a reference then
    /// says why).
    pub fn host(&self) -> Option<&str> {
        self.inner.host.as_deref().ok()
    }

    /// The call statistics of every provider this consumer calls.
    pub fn statuses(&self) -> &Arc<StatusRegistry> {
        &self.inner.statuses
    }

    /// This consumer's metrics, if [`ConsumerBuilder::metrics`] turned them on (feature `metrics`).
    #[cfg(feature = "metrics")]
    pub fn metrics(&self) -> Option<crate::metrics::Metrics> {
        let recorder = self.inner.metrics.as_ref()?;
        let gauges: Weak<dyn crate::metrics::ConsumerGauges> = Arc::downgrade(&self.inner) as _;
        Some(crate::metrics::Metrics::new(Arc::clone(recorder), gauges))
    }

    /// Whether [`Consumer::shutdown`] has been called.
    pub fn is_shut_down(&self) -> bool {
        self.inner.shut_down.load(Ordering::Acquire)
    }

    /// Closes everything: registry subscriptions and sessions (consumer nodes removed), connections (calls
    /// in flight fail), and waits until their tasks have ended. References built from this consumer fail
    /// every later call; a build waiting for a registry returns [`BuildError::ShutDown`] at once. A
    /// transport plugged in with [`ConsumerBuilder::transport`] is given
    /// [`PLUGGED_SHUTDOWN_DEADLINE`](crate::transport::PLUGGED_SHUTDOWN_DEADLINE) to close: one whose
    /// close never finishes cannot hang shutdown.
    ///
    /// Await it before the tokio runtime ends (at the end of `main`): a runtime that shuts down with
    /// registry tasks still running drops zookeeper-client's session task under them, and the crate
    /// then panics in a worker thread (harmless, but printed). After `shutdown` no such task is left.
    ///
    /// [`BuildError::ShutDown`]: crate::BuildError::ShutDown
    pub async fn shutdown(&self) {
        self.inner.shut_down.store(true, Ordering::Release);
        #[cfg(feature = "zookeeper")]
        self.inner.registries.close_all().await;
        self.inner.protocol.shutdown().await;
    }
}

impl ConsumerInner {
    /// The application name references register under, if set.
    pub(crate) fn application(&self) -> Option<&str> {
        self.application.as_deref()
    }

    /// The one address this consumer registers and routes as, or why `DUBBO_IP_TO_REGISTRY` is
    /// unusable.
    pub(crate) fn host(&self) -> &Result<String, rudder_common::net::InvalidHost> {
        &self.host
    }

    /// What the registries' MetadataService calls got so far.
    #[cfg(feature = "zookeeper")]
    pub(crate) fn metadata_service_calls(&self) -> crate::MetadataServiceCalls {
        self.metadata_calls.snapshot()
    }

    /// The connections, shared by every reference.
    pub(crate) fn protocol(&self) -> &crate::protocols::Protocols {
        &self.protocol
    }

    /// The call statistics, for a new directory.
    pub(crate) fn statistics(&self) -> Arc<StatusRegistry> {
        Arc::clone(&self.statuses)
    }

    /// The load-balance strategies by name.
    pub(crate) fn policies(&self) -> &LoadBalanceRegistry {
        &self.policies
    }

    /// The clock references read unless given their own.
    pub(crate) fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    /// The seed references use unless given their own.
    pub(crate) fn seed(&self) -> Option<u64> {
        self.seed
    }

    /// The registry sessions.
    #[cfg(feature = "zookeeper")]
    pub(crate) fn registries(&self) -> &crate::registry::Registries {
        &self.registries
    }

    /// Who hears of every call (the metrics), if anyone.
    pub(crate) fn call_observer(&self) -> Option<Arc<dyn CallObserver>> {
        #[cfg(feature = "metrics")]
        if let Some(recorder) = &self.metrics {
            return Some(Arc::clone(recorder) as Arc<dyn CallObserver>);
        }
        None
    }

    /// Notes a live reference's directory, for pruning (once, however often it is given).
    pub(crate) fn track(&self, directory: &Arc<Directory>) {
        let mut directories = self
            .directories
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        directories.retain(|d| d.strong_count() > 0);
        if !directories
            .iter()
            .any(|d| std::ptr::eq(d.as_ptr(), Arc::as_ptr(directory)))
        {
            directories.push(Arc::downgrade(directory));
        }
    }

    /// The directories of live references; forgets those dropped, and those in `gone`.
    pub(crate) fn live_directories_but(&self, gone: &[&Directory]) -> Vec<Arc<Directory>> {
        let mut directories = self
            .directories
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        directories
            .retain(|d| d.strong_count() > 0 && !gone.iter().any(|g| std::ptr::eq(d.as_ptr(), *g)));
        directories.iter().filter_map(Weak::upgrade).collect()
    }

    /// The directories of live references.
    #[cfg_attr(not(feature = "zookeeper"), allow(dead_code))]
    pub(crate) fn live_directories(&self) -> Vec<Arc<Directory>> {
        self.live_directories_but(&[])
    }

    /// Forgets what no reference uses any more: statistics of providers in no snapshot (and no call in
    /// flight), and the connections of addresses no directory lists (closed once their calls end).
    ///
    /// Work is proportional to the providers of all references; it runs when a reference goes away
    /// (`gone` are its directories, one per registry), never on a call. Providers a registry takes
    /// out go through [`prune_soon`](Self::prune_soon) instead, whose work is proportional to them.
    pub(crate) fn prune(&self, gone: &[&Directory]) {
        let live = self.live_directories_but(gone);
        let mut addresses: HashSet<&str> = HashSet::new();
        let mut identities: HashSet<&str> = HashSet::new();
        let snapshots: Vec<_> = live.iter().map(|d| d.snapshot()).collect();
        for provider in snapshots.iter().flat_map(|s| s.providers()) {
            addresses.insert(provider.address());
            identities.insert(provider.identity());
        }
        // Statistics first: whoever sees the connections close (`wait_until_idle`) then sees the
        // statistics gone too.
        self.statuses
            .retain(|identity| identities.contains(identity));
        if let Some(observer) = self.call_observer() {
            observer.retain(&|identity| identities.contains(identity));
        }
        self.protocol
            .retain_addresses(|address| addresses.contains(address));
    }

    /// Whether the consumer has been shut down.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.shut_down.load(Ordering::Acquire)
    }
}

/// What pruning sees of the consumer (the registry wiring hands it to each directory's sink).
#[cfg(feature = "zookeeper")]
impl crate::prune::Keeper for ConsumerInner {
    fn prune_queue(&self) -> &crate::prune::PruneQueue {
        &self.prune_queue
    }

    fn statistics(&self) -> Arc<StatusRegistry> {
        ConsumerInner::statistics(self)
    }

    fn track(&self, directory: &Arc<Directory>) {
        ConsumerInner::track(self, directory);
    }

    fn live_directories(&self) -> Vec<Arc<Directory>> {
        ConsumerInner::live_directories(self)
    }

    fn call_observer(&self) -> Option<Arc<dyn CallObserver>> {
        ConsumerInner::call_observer(self)
    }

    fn protocol(&self) -> &crate::protocols::Protocols {
        &self.protocol
    }
}

#[cfg(feature = "metrics")]
impl crate::metrics::ConsumerGauges for ConsumerInner {
    fn now_millis(&self) -> i64 {
        self.clock.now_millis()
    }

    fn open_connections(&self) -> usize {
        self.protocol.open_connections()
    }

    fn connection_tasks(&self) -> usize {
        self.protocol.live_tasks()
    }

    #[cfg(feature = "zookeeper")]
    fn registry_sessions(&self) -> usize {
        self.registries.len()
    }

    #[cfg(feature = "zookeeper")]
    fn subscriptions(&self) -> Vec<crate::metrics::SubscriptionSample> {
        self.registries.samples()
    }
}

impl fmt::Debug for Consumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Consumer")
            .field("application", &self.inner.application)
            .field("host", &self.inner.host)
            .field("providers_with_statistics", &self.inner.statuses.len())
            .field("policies", &self.inner.policies)
            .field("shut_down", &self.is_shut_down())
            .finish_non_exhaustive()
    }
}
