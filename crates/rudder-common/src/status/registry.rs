//! Every provider's statistics, keyed by provider identity: what a process shares between its
//! references, as Dubbo's static `RpcStatus` map.

use std::sync::Arc;

use dashmap::DashMap;

use super::ProviderStatus;

/// All providers' statistics, keyed by provider identity.
#[derive(Debug, Default)]
pub struct StatusRegistry {
    providers: DashMap<Box<str>, Arc<ProviderStatus>>,
}

impl StatusRegistry {
    /// The statistics of the provider `identity`, if it has any (read-only: nothing is made).
    pub fn get(&self, identity: &str) -> Option<Arc<ProviderStatus>> {
        self.providers.get(identity).map(|p| Arc::clone(&p))
    }

    /// The statistics of the provider with this identity, created on first use.
    pub(crate) fn write_provider(&self, identity: &str) -> Arc<ProviderStatus> {
        if let Some(status) = self.providers.get(identity) {
            return Arc::clone(&status);
        }
        Arc::clone(&self.providers.entry(identity.into()).or_default())
    }

    /// Forgets a provider's statistics (Dubbo never does; long-lived consumers may want to).
    pub(crate) fn write_remove(&self, identity: &str) {
        self.providers.remove(identity);
    }

    /// Forgets the statistics of every provider identity for which `keep` says `false` (providers that
    /// left every directory). A call still in flight on one keeps its own handle and ends normally; a
    /// provider that comes back starts from zero. Returns how many went.
    ///
    /// ```
    /// # #[allow(unused_imports)] use rudder_common::status::record::*;
    /// use rudder_common::status::StatusRegistry;
    /// let registry = StatusRegistry::default();
    /// registry.provider("dubbo://10.0.0.1:20880/S");
    /// registry.provider("dubbo://10.0.0.2:20880/S");
    /// assert_eq!(registry.retain(|identity| identity.contains("10.0.0.1")), 1);
    /// assert_eq!(registry.len(), 1);
    /// ```
    pub(crate) fn write_retain(&self, keep: impl Fn(&str) -> bool) -> usize {
        let before = self.providers.len();
        self.providers.retain(|identity, _| keep(identity));
        before.saturating_sub(self.providers.len())
    }

    /// Number of providers with statistics.
    pub fn len(&self) -> usize {
        self.providers.len()
    }

    /// Whether no provider has statistics yet.
    pub fn is_empty(&self) -> bool {
        self.providers.is_empty()
    }
}
