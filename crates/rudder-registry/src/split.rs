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
    /// Starts from no split, whatever an earlier subscription with the same sink left there (one
    /// whose rule watch then failed, retried under `check=false`).
    pub(crate) fn new(split: ViewSplit) -> SplitFeed {
        // A share of 100 % means the sink was emptied too (`feed` empties it right after).
        if split.share.primary_percent() < 100 {
            split.share.set_primary_percent(100);
            split.sink.update(ProviderUpdate::Full(Vec::new()));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::configurator::ConsumerSide;
    use crate::consumer::ConsumerSpec;
    use rudder_common::discovery::UpdateOutcome;
    use rudder_common::url::DubboUrl;
    use std::sync::Mutex;

    /// Records how many providers each update left.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<(&'static str, usize)>>);

    impl ProviderSink for Recorder {
        fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
            let entry = match update {
                ProviderUpdate::Full(urls) => ("full", urls.len()),
                ProviderUpdate::Delta(changes) => ("delta", changes.len()),
            };
            self.0.lock().unwrap().push(entry);
            UpdateOutcome::default()
        }
    }

    #[test]
    fn the_split_fills_before_it_shares_and_empties_after_it_ends() {
        let recorder = Arc::new(Recorder::default());
        let share = Arc::new(CallShare::new(40));
        let mut feed = SplitFeed::new(ViewSplit {
            sink: Arc::clone(&recorder) as Arc<dyn ProviderSink>,
            share: Arc::clone(&share),
        });
        assert_eq!(
            share.primary_percent(),
            100,
            "a new feed starts from no split"
        );
        let side = ConsumerSide {
            host: "10.0.0.9".into(),
            application: "app".into(),
        };
        let mut catalog = Catalog::new(&ConsumerSpec::new("S"), side);
        let node = |i: u8| {
            DubboUrl::parse(&format!("dubbo://10.0.0.{i}:20880/S"))
                .unwrap()
                .to_node_name()
        };
        catalog.set_providers(vec![node(1), node(2)]);
        feed.feed(None, &catalog, &ProviderDelta::default(), false);
        feed.feed(Some(30), &catalog, &ProviderDelta::default(), false);
        assert_eq!(share.primary_percent(), 30);
        let delta = catalog.set_providers(vec![node(1), node(2), node(3)]);
        feed.feed(Some(30), &catalog, &delta, false);
        feed.feed(Some(60), &catalog, &ProviderDelta::default(), false);
        assert_eq!(share.primary_percent(), 60);
        feed.feed(None, &catalog, &ProviderDelta::default(), false);
        assert_eq!(share.primary_percent(), 100);
        assert_eq!(
            *recorder.0.lock().unwrap(),
            [("full", 0), ("full", 2), ("delta", 1), ("full", 0)],
            "emptied at start, filled once, one change, emptied at the end"
        );
    }
}
