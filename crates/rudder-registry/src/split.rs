//! The interface-level view handed over beside the one in use, while a migration rule's
//! `proportion` sends part of the calls to it.
//!
//! Dubbo's `MigrationInvoker` under `APPLICATION_FIRST` holds both views' invokers; with
//! `proportion: 30` a call goes to the application view with probability 30 %, else to the
//! interface view, whichever the comparator chose. Here the subscription keeps feeding its sink
//! the view in use and, when the caller gave a [`ViewSplit`], also feeds the split's sink the
//! interface-level providers while the rule asks for a share below 100 % and the application view
//! is the one in use (with the interface view in use, every call goes there anyway), and sets the
//! share; when that ends it sets the share back to 100 % and empties the split's sink.
//!
//! The caller (the `rudder` crate) puts the second sink's providers behind their own router chain
//! and balancer and draws per call (`rudder_cluster::zone_aware::Fallback`).

use std::sync::Arc;

use rudder_common::discovery::{CallShare, ProviderSink, ProviderUpdate};

use crate::catalog::{Catalog, ProviderDelta};

/// Where a subscription hands its interface-level providers while a migration rule's `proportion`
/// sends part of the calls to them, and the share it sets.
///
/// ```
/// use std::sync::Arc;
/// use rudder_common::discovery::{CallShare, FanOut};
/// use rudder_registry::ViewSplit;
///
/// let split = ViewSplit {
///     sink: Arc::new(FanOut::new(vec![])),
///     share: Arc::new(CallShare::default()),
/// };
/// assert_eq!(split.share.primary_percent(), 100);
/// ```
#[derive(Clone)]
pub struct ViewSplit {
    /// Receives the interface-level providers while the share is below 100 %, and an empty list
    /// when it ends.
    pub sink: Arc<dyn ProviderSink>,
    /// The share of calls the view in use (the application-level one) gets.
    pub share: Arc<CallShare>,
}

impl std::fmt::Debug for ViewSplit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewSplit")
            .field("share", &self.share)
            .finish_non_exhaustive()
    }
}

/// A subscription's side of a [`ViewSplit`]: whether its sink holds the interface view now.
pub(crate) struct SplitFeed {
    split: ViewSplit,
    on: bool,
}

impl SplitFeed {
    pub(crate) fn new(split: ViewSplit) -> SplitFeed {
        SplitFeed { split, on: false }
    }

    /// Hands the interface view over for `percent` (the application view's share; `None`: no
    /// split now): the whole list when the split starts or `full` says every provider may have
    /// changed, else the `pending` changes of `catalog`.
    pub(crate) fn feed(
        &mut self,
        percent: Option<u8>,
        catalog: &Catalog,
        pending: &ProviderDelta,
        full: bool,
    ) {
        match (self.on, percent) {
            (false, None) => {}
            (true, None) => {
                // No call is drawn to the list being emptied.
                self.split.share.set_primary_percent(100);
                self.split.sink.update(ProviderUpdate::Full(Vec::new()));
                self.on = false;
            }
            (on, Some(percent)) => {
                if !on || full {
                    self.split
                        .sink
                        .update(ProviderUpdate::Full(catalog.provider_urls()));
                } else if !pending.is_empty() {
                    self.split
                        .sink
                        .update(ProviderUpdate::Delta(catalog.changes(pending)));
                }
                // Filled before it takes calls.
                self.split.share.set_primary_percent(percent);
                self.on = true;
            }
        }
    }
}
