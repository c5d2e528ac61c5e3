//! One subscription's application-level view: the applications of its interface, their shared
//! watches, and the provider URLs they give for it.
//!
//! The applications are the consumer's `provided-by`, else the mapping node
//! mapping (ZooKeeper's node `<root>/mapping/<interface>`, Nacos's config), followed like a rule (an application added to the mapping later
//! is picked up). Each application is followed by the registry's shared [`AppWatch`]; this feed
//! only holds handles, so two references of one application cost one watch.

use std::sync::Arc;

use rudder_common::discovery::RuleSink;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::address::name_key;
use super::mapping::app_names;
use super::metadata::MetadataFetcher;
use super::source::InstanceSource;
use super::view::{AppView, AppWatch};
use crate::config_center::{RuleInbox, RuleWatch};

/// The mapping node followed, when `provided-by` does not name the applications.
struct Mapping {
    inbox: Arc<RuleInbox>,
    watch: RuleWatch,
}

/// One followed application.
struct Followed {
    app: String,
    _watch: Arc<AppWatch>,
    view: watch::Receiver<Arc<AppView>>,
}

/// What the feed gives now.
#[derive(Debug, Default)]
pub(crate) struct InstanceSnapshot {
    /// Provider URLs for the interface, as built from instances and metadata (not yet matched), as
    /// node names.
    pub(crate) names: Vec<String>,
    /// The applications followed.
    pub(crate) apps: Vec<String>,
    /// Instance nodes that could not be read.
    pub(crate) malformed: u64,
    /// MetadataInfo fetches made and failed.
    pub(crate) metadata_fetches: u64,
    pub(crate) metadata_failures: u64,
    /// Distinct revisions with metadata.
    pub(crate) revisions: usize,
    /// Instances left out because their revision's metadata is not had.
    pub(crate) unresolved: usize,
}

/// The application-level side of one subscription.
pub(crate) struct InstanceFeed {
    interface: String,
    /// [`name_key`] of `interface`.
    interface_key: u64,
    source: Arc<dyn InstanceSource>,
    fetcher: Option<Arc<dyn MetadataFetcher>>,
    mapping: Option<Mapping>,
    apps: Vec<Followed>,
}

impl InstanceFeed {
    /// Starts following the applications of `interface`: `provided_by` when given, else the mapping
    /// (read once before this returns).
    pub(crate) async fn start(
        source: Arc<dyn InstanceSource>,
        fetcher: Option<Arc<dyn MetadataFetcher>>,
        interface: &str,
        provided_by: Option<&str>,
    ) -> InstanceFeed {
        let mut feed = InstanceFeed {
            interface: interface.to_owned(),
            interface_key: name_key(interface),
            source: Arc::clone(&source),
            fetcher,
            mapping: None,
            apps: Vec::new(),
        };
        match provided_by.map(app_names).filter(|apps| !apps.is_empty()) {
            Some(apps) => feed.follow(&apps),
            None => {
                let inbox = Arc::new(RuleInbox::default());
                let (watch, error) = source
                    .follow_mapping(interface, Arc::clone(&inbox) as Arc<dyn RuleSink>)
                    .await;
                if let Some(error) = error {
                    tracing::warn!(error = &error as &dyn std::error::Error, "interface-application mapping not readable yet; following it in the background");
                }
                feed.mapping = Some(Mapping { inbox, watch });
                feed.take_mapping();
            }
        }
        feed
    }

    /// Follows exactly `apps` (sorted): new ones are watched, dropped ones released.
    fn follow(&mut self, apps: &[String]) {
        self.apps.retain(|f| apps.contains(&f.app));
        for app in apps {
            if self.apps.iter().any(|f| &f.app == app) {
                continue;
            }
            let Some(watch) = self.source.watch(app, self.fetcher.clone()) else {
                return;
            };
            self.apps.push(Followed {
                app: app.clone(),
                view: watch.view(),
                _watch: watch,
            });
        }
        self.apps.sort_by(|a, b| a.app.cmp(&b.app));
    }

    /// Applies a changed mapping; whether it arrived.
    fn take_mapping(&mut self) -> bool {
        let Some(mapping) = &self.mapping else {
            return false;
        };
        let taken = mapping.inbox.take();
        let Some((_, text)) = taken.into_iter().last() else {
            return false;
        };
        let apps = text.as_deref().map(app_names).unwrap_or_default();
        if apps.is_empty() {
            tracing::info!(interface = %self.interface, "no interface-application mapping yet; waiting for one");
        }
        self.follow(&apps);
        true
    }

    /// Waits (at most `wait`) until every followed application has been listed once, so the first
    /// list handed over already has the instances.
    pub(crate) async fn wait_listed(&self, wait: std::time::Duration) {
        let all = async {
            for followed in &self.apps {
                let mut view = followed.view.clone();
                let _ = view.wait_for(|v| v.listed).await;
            }
        };
        let _ = tokio::time::timeout(wait, all).await;
    }

    /// Waits until an application's view or the mapping changed.
    pub(crate) async fn changed(&mut self) {
        let mut set = JoinSet::new();
        for followed in &self.apps {
            let mut view = followed.view.clone();
            set.spawn(async move {
                // An ended watch (registry closed) never wakes anyone.
                if view.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            });
        }
        let mapping = async {
            match &self.mapping {
                Some(mapping) => mapping.inbox.arrived().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            Some(_) = set.join_next() => {}
            () = mapping => {}
        }
    }

    /// Takes what changed and builds the provider URLs of the interface.
    pub(crate) fn snapshot(&mut self) -> InstanceSnapshot {
        self.take_mapping();
        let mut snapshot = InstanceSnapshot {
            apps: self.apps.iter().map(|f| f.app.clone()).collect(),
            ..InstanceSnapshot::default()
        };
        for followed in &mut self.apps {
            let view = Arc::clone(&followed.view.borrow_and_update());
            snapshot.malformed += view.malformed;
            snapshot.metadata_fetches += view.metadata_fetches;
            snapshot.metadata_failures += view.metadata_failures;
            snapshot.revisions += view.revisions;
            snapshot.unresolved += view.unresolved;
            for urls in &view.instances {
                for url in urls.iter() {
                    if url.serves(&self.interface, self.interface_key) {
                        snapshot.names.push(url.node_name.clone());
                    }
                }
            }
        }
        snapshot
    }

    /// Stops following the mapping (the application watches end with their last handle).
    pub(crate) async fn close(mut self) {
        if let Some(mapping) = self.mapping.take() {
            mapping.watch.close().await;
        }
    }
}
