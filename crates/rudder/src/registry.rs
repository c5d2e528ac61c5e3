//! Registry wiring (feature `zookeeper`): one session per registry address, shared by a consumer's
//! references; one subscription per reference and registry.

use std::collections::HashMap;
use std::fmt;

use rudder_common::discovery::ProviderSink;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::{
    ConsumerSpec, RegistryAddress, RegistryOptions, Subscription, ZookeeperRegistry,
};

use crate::error::BuildError;

/// The registry sessions of one consumer, by address.
#[derive(Default)]
pub(crate) struct Registries {
    open: tokio::sync::Mutex<HashMap<String, ZookeeperRegistry>>,
    /// How many are open, readable without the async lock.
    count: std::sync::atomic::AtomicUsize,
    /// The status channels of live subscriptions, for the metrics.
    #[cfg(feature = "metrics")]
    watched: std::sync::Mutex<Vec<Watched>>,
    #[cfg(feature = "metrics")]
    next_id: std::sync::atomic::AtomicU64,
}

/// One subscription's labels and status channel; its sender closes when the subscription ends.
#[cfg(feature = "metrics")]
struct Watched {
    id: u64,
    registry: String,
    service: String,
    status: tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>,
}

/// Keeps a registry subscription alive for as long as the reference lives; dropping it unsubscribes and
/// removes the consumer node (the session stays, shared with the consumer's other references).
#[derive(Debug)]
pub(crate) struct Registration {
    _subscription: Subscription,
}

/// What identifies one session: the servers, the root and the credentials (two references naming the
/// same servers in another order, or with other URL parameters, share it).
fn session_key(address: &RegistryAddress, url: &str) -> String {
    let mut hosts: Vec<&str> = address.hosts().iter().map(String::as_str).collect();
    hosts.sort_unstable();
    // Credentials are part of the identity but never of anything printed: hash-free, kept in memory only.
    let credentials = DubboUrl::parse_any(url)
        .ok()
        .and_then(|u| {
            u.username()
                .map(|user| format!("{user}:{}", u.password().unwrap_or("")))
        })
        .unwrap_or_default();
    format!("{}|{}|{credentials}", hosts.join(","), address.root())
}

impl Registries {
    /// The session for `url`, opened on first use.
    async fn session(&self, url: &str) -> Result<ZookeeperRegistry, BuildError> {
        let fail = |e: rudder_registry::RegistryError| BuildError::Registry(e.to_string());
        let address = RegistryAddress::parse(url).map_err(fail)?;
        let key = session_key(&address, url);
        let mut open = self.open.lock().await;
        if let Some(registry) = open.get(&key) {
            return Ok(registry.clone());
        }
        let registry = ZookeeperRegistry::connect(url, RegistryOptions::default())
            .await
            .map_err(fail)?;
        open.insert(key, registry.clone());
        self.count
            .store(open.len(), std::sync::atomic::Ordering::Relaxed);
        Ok(registry)
    }

    /// Sessions open.
    pub(crate) fn len(&self) -> usize {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Closes every session.
    pub(crate) async fn close_all(&self) {
        let open: Vec<ZookeeperRegistry> = self.open.lock().await.drain().map(|(_, r)| r).collect();
        self.count.store(0, std::sync::atomic::Ordering::Relaxed);
        for registry in open {
            registry.close().await;
        }
    }

    /// Subscribes `sink` to the providers `consumer` asks for in the registry at `url`, and waits for the
    /// first listing.
    pub(crate) async fn subscribe(
        &self,
        url: &str,
        consumer: &DubboUrl,
        sink: impl ProviderSink,
    ) -> Result<Registration, BuildError> {
        let registry = self.session(url).await?;
        let mut spec = ConsumerSpec::new(consumer.service_interface());
        if let Some(version) = consumer.parameter("version").filter(|v| !v.is_empty()) {
            spec = spec.version(version);
        }
        if let Some(group) = consumer.parameter("group").filter(|g| !g.is_empty()) {
            spec = spec.group(group);
        }
        if let Some(protocol) = consumer.parameter("protocol").filter(|p| !p.is_empty()) {
            spec = spec.protocol(protocol);
        }
        if let Some(application) = consumer.parameter("application").filter(|a| !a.is_empty()) {
            spec = spec.application(application);
        }
        spec = spec.parameters(ConsumerParams::new(consumer));
        let subscription = registry
            .subscribe(spec, sink)
            .await
            .map_err(|e| BuildError::Registry(e.to_string()))?;
        #[cfg(feature = "metrics")]
        self.watch(url, consumer.service_interface(), subscription.status());
        Ok(Registration {
            _subscription: subscription,
        })
    }
}

#[cfg(feature = "metrics")]
impl Registries {
    fn watch(
        &self,
        url: &str,
        service: &str,
        status: tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>,
    ) {
        // The servers only: the URL may carry credentials.
        let registry = RegistryAddress::parse(url)
            .map(|a| a.hosts().join(","))
            .unwrap_or_default();
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Forget ended subscriptions here too, so the list stays bounded without scrapes.
        watched.retain(|w| w.status.has_changed().is_ok());
        watched.push(Watched {
            id,
            registry,
            service: service.to_owned(),
            status,
        });
    }

    /// The status of every live subscription, in subscription order.
    pub(crate) fn samples(&self) -> Vec<crate::metrics::SubscriptionSample> {
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        watched.retain(|w| w.status.has_changed().is_ok());
        watched
            .iter()
            .map(|w| {
                let status = w.status.borrow();
                crate::metrics::SubscriptionSample {
                    id: w.id,
                    registry: w.registry.clone(),
                    service: w.service.clone(),
                    generation: status.generation,
                    listings: status.listings,
                    providers: status.providers as u64,
                    configurators: status.configurators as u64,
                    malformed: status.malformed,
                    rejected: status.rejected,
                    connected: status.connected,
                    sessions: status.sessions,
                    registered: status.registered,
                }
            })
            .collect()
    }
}

impl fmt::Debug for Registries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registries")
            .field("open", &self.len())
            .finish()
    }
}
