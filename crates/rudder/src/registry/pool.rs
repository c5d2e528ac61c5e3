//! The open registries of one consumer, by identity, leased by its references.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rudder_registry::{MetadataFetcher, Registry, RegistryOptions};

use super::target::RegistryTarget;
use crate::error::BuildError;

/// The registries of one consumer, by identity. Cheap to clone (one shared state).
///
/// Registries are opened on first use and shared by every reference naming the same servers,
/// namespace and credentials. Looking one up takes a plain mutex for a map lookup, never across I/O:
/// a registry connects in the background ([`rudder_registry::open`]), so a build that waits for a
/// registry that is down never delays builds that use other registries.
///
/// A registry no reference uses any more is closed after the idle timeout (the consumer's
/// [`ConsumerBuilder::registry_idle_timeout`](crate::ConsumerBuilder::registry_idle_timeout), 30 s by
/// default), unless a reference takes it up again first.
#[derive(Clone)]
pub(crate) struct Registries {
    shared: Arc<Shared>,
}

struct Shared {
    open: Mutex<Open>,
    /// Where governance rules are read, when not from each registry itself.
    config_center: Option<String>,
    /// How long an unused registry stays open.
    idle: Duration,
    /// Connect timeout and retry pacing of every registry (a registry URL's `timeout` overrides the
    /// connect timeout for that registry; an implementation may read more of its URL).
    options: RegistryOptions,
    next_generation: AtomicU64,
    /// Asks instances for their MetadataInfo (application-level discovery), through the consumer's
    /// own dubbo:// client.
    metadata: Arc<dyn MetadataFetcher>,
    /// The status channels of live subscriptions, for the metrics.
    #[cfg(feature = "metrics")]
    subscriptions: super::samples::Subscriptions,
}

/// The registries by identity, and whether [`Registries::close_all`] has run (nothing opens after it).
#[derive(Default)]
struct Open {
    entries: HashMap<String, Entry>,
    closed: bool,
}

/// One open registry and how many leases hold it.
struct Entry {
    registry: Arc<dyn Registry>,
    users: usize,
    /// Tells this entry from a later one under the same identity.
    generation: u64,
    /// Unused past the idle timeout and being closed: not handed out again.
    closing: bool,
}

/// One user's hold on a registry (one per reference and registry, plus one on the config center);
/// the last one dropped starts the idle timeout.
pub(crate) struct Lease {
    shared: Weak<Shared>,
    key: String,
    generation: u64,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            Shared::release(&shared, &self.key, self.generation);
        }
    }
}

impl Registries {
    /// Registries that read governance rules from `config_center` (`None`: each registry's own), and
    /// close `idle` after their last user is gone.
    pub(crate) fn new(
        config_center: Option<String>,
        idle: Duration,
        options: RegistryOptions,
        metadata: Arc<dyn MetadataFetcher>,
    ) -> Registries {
        Registries {
            shared: Arc::new(Shared {
                open: Mutex::new(Open::default()),
                config_center,
                idle,
                options,
                metadata,
                next_generation: AtomicU64::new(0),
                #[cfg(feature = "metrics")]
                subscriptions: super::samples::Subscriptions::default(),
            }),
        }
    }

    /// The registry of `target`, reading its rules from the config center when one is set, with the
    /// leases that keep both open. Never waits: the registry connects in the background.
    pub(crate) fn governed(
        &self,
        target: &RegistryTarget,
    ) -> Result<(Arc<dyn Registry>, Vec<Lease>), BuildError> {
        let (registry, lease) = self.lease(target)?;
        match &self.shared.config_center {
            Some(url) => {
                let config_center = RegistryTarget::parse(url)?;
                let (center, center_lease) = self.lease(&config_center)?;
                Ok((
                    registry.with_config_center(center.config_center()),
                    vec![lease, center_lease],
                ))
            }
            None => Ok((registry, vec![lease])),
        }
    }

    /// The consumer's registry options with `target`'s own `timeout`.
    pub(crate) fn options_for(&self, target: &RegistryTarget) -> RegistryOptions {
        let options = self.shared.options;
        match target.timeout {
            Some(timeout) => options.with_connect_timeout(timeout),
            None => options,
        }
    }

    /// The registry of `target` and a lease on it; a new one is opened (in the background) on first
    /// use.
    fn lease(&self, target: &RegistryTarget) -> Result<(Arc<dyn Registry>, Lease), BuildError> {
        let key = &target.identity;
        let mut open = lock(&self.shared.open);
        if open.closed {
            return Err(BuildError::ShutDown);
        }
        let entry = match open.entries.get_mut(key) {
            Some(entry) if !entry.closing => entry,
            _ => {
                let registry = rudder_registry::open(
                    &target.session_url,
                    self.options_for(target),
                    Some(Arc::clone(&self.shared.metadata)),
                )?;
                let generation = self.shared.next_generation.fetch_add(1, Ordering::Relaxed);
                // A closing entry under this key keeps closing on its own (its task owns a clone).
                open.entries.insert(
                    key.clone(),
                    Entry {
                        registry,
                        users: 0,
                        generation,
                        closing: false,
                    },
                );
                open.entries.get_mut(key).expect("just inserted")
            }
        };
        entry.users += 1;
        let lease = Lease {
            shared: Arc::downgrade(&self.shared),
            key: key.clone(),
            generation: entry.generation,
        };
        Ok((Arc::clone(&entry.registry), lease))
    }

    /// Registries open (those closing after their idle timeout not counted).
    pub(crate) fn len(&self) -> usize {
        lock(&self.shared.open)
            .entries
            .values()
            .filter(|e| !e.closing)
            .count()
    }

    /// Closes every registry, waiting for their tasks to end (see [`Registry::close`]); none opens
    /// afterwards.
    pub(crate) async fn close_all(&self) {
        let open: Vec<Arc<dyn Registry>> = {
            let mut open = lock(&self.shared.open);
            open.closed = true;
            open.entries.drain().map(|(_, e)| e.registry).collect()
        };
        for registry in open {
            registry.close().await;
        }
    }

    /// The status channels of live subscriptions, for the metrics.
    #[cfg(feature = "metrics")]
    pub(crate) fn subscriptions(&self) -> &super::samples::Subscriptions {
        &self.shared.subscriptions
    }

    /// The status of every live subscription, in subscription order.
    #[cfg(feature = "metrics")]
    pub(crate) fn samples(&self) -> Vec<crate::metrics::SubscriptionSample> {
        self.shared.subscriptions.samples()
    }
}

impl Shared {
    /// One lease fewer on `key`; the last one starts the idle timeout.
    fn release(shared: &Arc<Shared>, key: &str, generation: u64) {
        let mut open = lock(&shared.open);
        let Some(entry) = open
            .entries
            .get_mut(key)
            .filter(|e| e.generation == generation)
        else {
            return;
        };
        entry.users = entry.users.saturating_sub(1);
        if entry.users > 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to time the grace on: close now (dropping the last handle ends the session).
            open.entries.remove(key);
            return;
        };
        let (weak, key, idle) = (Arc::downgrade(shared), key.to_owned(), shared.idle);
        drop(runtime.spawn(async move {
            tokio::time::sleep(idle).await;
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let registry = {
                let mut open = lock(&shared.open);
                match open.entries.get_mut(&key) {
                    Some(e) if e.generation == generation && e.users == 0 && !e.closing => {
                        e.closing = true;
                        Arc::clone(&e.registry)
                    }
                    _ => return,
                }
            };
            tracing::debug!(registry = %registry.address(), "closing a registry no reference uses");
            registry.close().await;
            let mut open = lock(&shared.open);
            if open
                .entries
                .get(&key)
                .is_some_and(|e| e.generation == generation)
            {
                open.entries.remove(&key);
            }
        }));
    }
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl fmt::Debug for Registries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registries")
            .field("open", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use rudder_registry::{MetadataFuture, MetadataRequest};

    use super::*;

    #[derive(Debug)]
    struct NoMetadata;

    impl MetadataFetcher for NoMetadata {
        fn fetch(&self, _: MetadataRequest) -> MetadataFuture {
            Box::pin(async { Err("no metadata in this test".to_owned()) })
        }
    }

    fn registries(config_center: Option<&str>) -> Registries {
        Registries::new(
            config_center.map(str::to_owned),
            Duration::from_secs(30),
            RegistryOptions::default(),
            Arc::new(NoMetadata),
        )
    }

    fn target(url: &str) -> RegistryTarget {
        RegistryTarget::parse(url).unwrap()
    }

    #[test]
    fn one_registry_per_identity_closed_with_its_last_lease_outside_a_runtime() {
        let registries = registries(None);
        let (a, lease_a) = registries
            .governed(&target(
                "zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181&zone=hz",
            ))
            .unwrap();
        let (b, lease_b) = registries
            .governed(&target("zookeeper://10.0.0.2:2181?backup=10.0.0.1:2181"))
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b), "one ensemble, one registry");
        assert_eq!(registries.len(), 1);
        let (_, lease_c) = registries
            .governed(&target("zookeeper://10.0.0.3:2181"))
            .unwrap();
        assert_eq!(registries.len(), 2);
        drop(lease_a);
        assert_eq!(registries.len(), 2, "one lease still holds the ensemble");
        drop((lease_b, lease_c));
        assert_eq!(registries.len(), 0, "no runtime to wait on: closed at once");
    }

    #[test]
    fn a_config_center_is_leased_beside_each_registry() {
        let registries = registries(Some("zookeeper://10.0.0.5:2181?group=governance"));
        let (registry, leases) = registries
            .governed(&target("zookeeper://10.0.0.1:2181"))
            .unwrap();
        assert_eq!(leases.len(), 2);
        assert_eq!(registries.len(), 2);
        assert_eq!(registry.servers(), "10.0.0.1:2181");
    }
}
