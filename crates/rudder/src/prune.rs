//! Forgetting providers no reference lists any more, in proportion to what left.
//!
//! A consumer keeps state beside its directories: each provider identity's statistics, the
//! observer's per-provider series, one connection per address. When a registry takes providers out
//! of a directory, that state may be nobody's now, unless another directory (another reference, or
//! another registry of the same one) still lists the identity or the address.
//!
//! The directory reports exactly which providers it took out ([`Directory::update_reporting`]); they
//! are queued, and one task per burst of removals checks only them against every live snapshot:
//! statistics are shared per identity, so a candidate is matched by pointer, and its address by a
//! binary search in the few candidates' addresses. An instance of an application that 50
//! references follow, leaving, costs one pass over the listed providers with no hashing and no
//! allocation per provider, where a full prune hashed every identity and address of every
//! directory (50,000 of each with 1,000 instances × 50 interfaces).
//!
//! A reference that goes away still runs the full prune (the consumer's own): it also closes
//! connections no directory ever listed (a MetadataService on a port of its own).
//!
//! This module sees the consumer only through [`Keeper`]: the directories it keeps and the state
//! beside them, never the rest of it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use rudder_cluster::directory::{Directory, ProviderSet};
use rudder_cluster::provider::Provider;
use rudder_common::discovery::{ProviderSink, ProviderUpdate, UpdateOutcome};
use rudder_common::status::{ProviderStatus, StatusRegistry};

use crate::observer::CallObserver;
use crate::protocols::Protocols;
use rudder_common::status::record::RecordProviders;

/// What pruning needs of a consumer: the directories of its live references and the state kept
/// beside them (statistics, the observer's series, connections), and a queue of its own.
pub(crate) trait Keeper: Send + Sync + 'static {
    /// The providers directories took out, waiting for a check.
    fn prune_queue(&self) -> &PruneQueue;
    /// The call statistics, shared by every directory.
    fn statistics(&self) -> Arc<StatusRegistry>;
    /// Notes a live reference's directory (once, however often it is given).
    fn track(&self, directory: &Arc<Directory>);
    /// The directories of live references.
    fn live_directories(&self) -> Vec<Arc<Directory>>;
    /// Who hears of every call (the metrics), if anyone.
    fn call_observer(&self) -> Option<Arc<dyn CallObserver>>;
    /// The connections.
    fn protocol(&self) -> &Protocols;
}

/// Providers directories took out, to be checked by the next prune ([`prune_soon`]), and whether
/// one is asked for and has not started yet.
#[derive(Debug, Default)]
pub(crate) struct PruneQueue {
    queue: Mutex<Vec<Arc<Provider>>>,
    pending: AtomicBool,
}

/// What the removed providers left behind that no snapshot lists: identities and addresses.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Unlisted {
    pub(crate) identities: Vec<Arc<str>>,
    pub(crate) addresses: Vec<Arc<str>>,
}

/// Of `candidates` (providers some directory took out), the identities and addresses none of
/// `snapshots` lists. Stops scanning as soon as every candidate is found listed.
pub(crate) fn unlisted(candidates: &[Arc<Provider>], snapshots: &[Arc<ProviderSet>]) -> Unlisted {
    // One entry per statistics object (one per identity), sorted by address in memory.
    let mut statuses: Vec<(*const ProviderStatus, &Arc<Provider>)> = candidates
        .iter()
        .map(|p| (Arc::as_ptr(p.status()), p))
        .collect();
    statuses.sort_unstable_by_key(|(status, _)| *status);
    statuses.dedup_by_key(|(status, _)| *status);
    let mut addresses: Vec<&str> = candidates.iter().map(|p| p.address()).collect();
    addresses.sort_unstable();
    addresses.dedup();
    let mut identity_listed = vec![false; statuses.len()];
    let mut address_listed = vec![false; addresses.len()];
    let (mut identities_left, mut addresses_left) = (statuses.len(), addresses.len());
    'scan: for snapshot in snapshots {
        for provider in snapshot.providers() {
            let status = Arc::as_ptr(provider.status());
            if let Ok(i) = statuses.binary_search_by_key(&status, |(s, _)| *s) {
                if !identity_listed[i] {
                    identity_listed[i] = true;
                    identities_left -= 1;
                }
            }
            if let Ok(i) = addresses.binary_search(&provider.address()) {
                if !address_listed[i] {
                    address_listed[i] = true;
                    addresses_left -= 1;
                }
            }
            if identities_left == 0 && addresses_left == 0 {
                break 'scan;
            }
        }
    }
    let identities = statuses
        .iter()
        .zip(&identity_listed)
        .filter(|(_, listed)| !**listed)
        .map(|((_, p), _)| Arc::from(p.identity()))
        .collect();
    let addresses = addresses
        .iter()
        .zip(&address_listed)
        .filter(|(_, listed)| !**listed)
        .map(|(a, _)| Arc::from(*a))
        .collect();
    Unlisted {
        identities,
        addresses,
    }
}

/// Queues `removed` (providers a directory took out) to be checked soon, once for a burst: when
/// one registry event removes providers from many directories (an instance of an application
/// that 50 references follow), each directory queues its own, and one check after them all does
/// the work. A removal queued while a check runs is checked after it, so none goes unchecked.
/// Outside a tokio runtime it checks at once.
pub(crate) fn prune_soon(keeper: &Arc<dyn Keeper>, removed: Vec<Arc<Provider>>) {
    if removed.is_empty() {
        return;
    }
    let queue = keeper.prune_queue();
    queue
        .queue
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .extend(removed);
    if queue.pending.swap(true, Ordering::AcqRel) {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        queue.pending.store(false, Ordering::Release);
        prune_queued(&**keeper);
        return;
    };
    let keeper = Arc::downgrade(keeper);
    // The task ends after one check, or at once when the consumer is gone.
    drop(runtime.spawn(async move {
        // Let the directories fed by the same delivery take their updates first.
        tokio::task::yield_now().await;
        if let Some(keeper) = keeper.upgrade() {
            keeper.prune_queue().pending.store(false, Ordering::Release);
            prune_queued(&*keeper);
        }
    }));
}

/// Forgets the statistics, series and connections of the queued providers that no live
/// directory lists.
fn prune_queued(keeper: &dyn Keeper) {
    let candidates = std::mem::take(
        &mut *keeper
            .prune_queue()
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner),
    );
    if candidates.is_empty() {
        return;
    }
    let snapshots: Vec<Arc<ProviderSet>> = keeper
        .live_directories()
        .iter()
        .map(|d| d.snapshot())
        .collect();
    let gone = unlisted(&candidates, &snapshots);
    drop(candidates);
    forget(keeper, &gone);
}

/// Forgets `gone`: statistics first, so whoever sees the connections close
/// (`wait_until_idle`) then sees the statistics gone too.
fn forget(keeper: &dyn Keeper, gone: &Unlisted) {
    if !gone.identities.is_empty() {
        let statistics = keeper.statistics();
        for identity in &gone.identities {
            statistics.remove(identity);
        }
        if let Some(observer) = keeper.call_observer() {
            observer.retain(&|identity| !gone.identities.iter().any(|g| &**g == identity));
        }
    }
    if !gone.addresses.is_empty() {
        keeper
            .protocol()
            .retain_addresses(|address| !gone.addresses.iter().any(|g| &**g == address));
    }
}

/// One registry's directory of one reference: every update goes to the directory, and a provider that
/// left may free statistics and connections.
#[derive(Clone)]
pub(crate) struct PruningSink {
    directory: Arc<Directory>,
    keeper: Weak<dyn Keeper>,
}

impl PruningSink {
    /// A sink feeding `directory`, pruning through `keeper` after removals.
    pub(crate) fn new(directory: Arc<Directory>, keeper: &Arc<dyn Keeper>) -> PruningSink {
        PruningSink {
            directory,
            keeper: Arc::downgrade(keeper),
        }
    }

    /// The directory fed.
    pub(crate) fn directory(&self) -> &Arc<Directory> {
        &self.directory
    }
}

impl ProviderSink for PruningSink {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let mut removed = Vec::new();
        let outcome = self.directory.update_reporting(update, &mut removed);
        if let Some(keeper) = self.keeper.upgrade() {
            prune_soon(&keeper, removed);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rudder_cluster::directory::Directory;
    use rudder_common::status::StatusRegistry;
    use rudder_common::url::DubboUrl;

    fn directory(statuses: &Arc<StatusRegistry>, urls: &[&str]) -> Directory {
        let directory = Directory::new(Arc::clone(statuses));
        directory.replace(urls.iter().map(|u| DubboUrl::parse(u).unwrap()));
        directory
    }

    #[test]
    fn only_what_no_snapshot_lists_is_unlisted() {
        let statuses = Arc::new(StatusRegistry::default());
        let a = directory(
            &statuses,
            &["dubbo://10.0.0.1:20880/A", "dubbo://10.0.0.2:20880/A"],
        );
        let b = directory(&statuses, &["dubbo://10.0.0.1:20880/B"]);
        let mut removed = Vec::new();
        a.update_reporting(
            rudder_common::discovery::ProviderUpdate::Full(vec![]),
            &mut removed,
        );
        assert_eq!(removed.len(), 2);
        let gone = unlisted(&removed, &[a.snapshot(), b.snapshot()]);
        // 10.0.0.1 still serves B: its connection stays, A's statistics there go.
        let mut identities: Vec<&str> = gone.identities.iter().map(|i| &**i).collect();
        identities.sort_unstable();
        assert_eq!(
            identities,
            ["dubbo://10.0.0.1:20880/A", "dubbo://10.0.0.2:20880/A"]
        );
        assert_eq!(gone.addresses, vec![Arc::from("10.0.0.2:20880")]);
    }

    #[test]
    fn a_provider_listed_again_elsewhere_keeps_its_statistics() {
        let statuses = Arc::new(StatusRegistry::default());
        let a = directory(&statuses, &["dubbo://10.0.0.1:20880/A?weight=1"]);
        // The same identity with other parameters, in a second directory (a second registry).
        let b = directory(&statuses, &["dubbo://10.0.0.1:20880/A?weight=2"]);
        let mut removed = Vec::new();
        a.update_reporting(
            rudder_common::discovery::ProviderUpdate::Full(vec![]),
            &mut removed,
        );
        assert_eq!(
            unlisted(&removed, &[a.snapshot(), b.snapshot()]),
            Unlisted::default()
        );
        assert_eq!(unlisted(&removed, &[a.snapshot()]).identities.len(), 1);
        assert_eq!(unlisted(&[], &[b.snapshot()]), Unlisted::default());
    }
}
