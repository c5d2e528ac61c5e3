//! A subscription's application-level side: the instance feed and a catalog of its own (the same
//! matching, consumer parameters and configurators as the interface-level one). The subscriber
//! chooses between the two views (see [`crate::migration`]).

use crate::catalog::{Catalog, ProviderDelta};
use crate::instance::feed::InstanceFeed;

/// The application-level view of one subscription.
pub(crate) struct AppLevel {
    pub(crate) feed: InstanceFeed,
    /// Fed with the URLs built from instances, as node names: a URL unchanged since the last
    /// snapshot is not parsed again.
    pub(crate) catalog: Catalog,
    /// Changes not yet handed to the sink.
    pub(crate) pending: ProviderDelta,
    /// The last snapshot's applications and counters, for the status.
    pub(crate) apps: Vec<String>,
    pub(crate) malformed: u64,
    pub(crate) metadata_fetches: u64,
    pub(crate) metadata_failures: u64,
    pub(crate) revisions: usize,
    /// Instances the view is missing (their metadata is not had).
    pub(crate) unresolved: usize,
}

impl AppLevel {
    pub(crate) fn new(feed: InstanceFeed, catalog: Catalog) -> AppLevel {
        AppLevel {
            feed,
            catalog,
            pending: ProviderDelta::default(),
            apps: Vec::new(),
            malformed: 0,
            metadata_fetches: 0,
            metadata_failures: 0,
            revisions: 0,
            unresolved: 0,
        }
    }
}
