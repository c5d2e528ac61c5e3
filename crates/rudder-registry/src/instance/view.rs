//! What an application's instances give, whichever registry they are read from: the shared
//! [`AppWatch`] per application ([`AppWatches`]), the [`AppView`] it publishes, and the
//! [`Revisions`] that turn instances into provider URLs (each revision's MetadataInfo fetched once,
//! from the metadata report or the instance's MetadataService, retried with backoff).
//!
//! A registry reads the instances its own way (ZooKeeper's `app_watch`, Nacos's `nacos::apps`), puts
//! them in [`Revisions::nodes`] and calls [`Revisions::resolve_metadata`] and [`Revisions::publish`].
//! A revision whose metadata cannot be had is left out of the view (one warning, counted in
//! [`AppView::metadata_failures`]) and asked again after 3 s, doubling per failure up to 60 s; the
//! other revisions proceed (Dubbo's partial-failure rule). Up to 4 revisions are fetched at once,
//! each bounded by 5 s.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{oneshot, watch};

use super::address::{build_urls, Built, BuiltUrl};
use super::join::join_all;
use super::json::Instance;
use super::metadata::{
    metadata_service_url, MetadataFetcher, MetadataInfo, MetadataRequest, METADATA_VERSION_KEY,
};
use crate::junk::JunkLog;

/// The most instances of one application followed (the rest are left out, with one warning).
pub(crate) const MAX_INSTANCES: usize = 10_000;
/// The most distinct revisions of one application whose metadata is fetched and kept.
pub(crate) const MAX_REVISIONS: usize = 64;
/// Revisions whose metadata is asked for at once.
const FETCH_CONCURRENCY: usize = 4;
/// How long one metadata fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The pause before a revision whose metadata failed is asked again, doubling per failure up to
/// [`METADATA_RETRY_MAX`].
const METADATA_RETRY: Duration = Duration::from_secs(3);
const METADATA_RETRY_MAX: Duration = Duration::from_secs(60);
/// How long a revision that cannot be resolved here (local metadata, no MetadataService client) is
/// left alone.
const UNRESOLVABLE: Duration = Duration::from_secs(24 * 3600);

/// When a revision that failed `failures` times in a row is asked again.
fn metadata_retry(failures: u32) -> Duration {
    METADATA_RETRY
        .saturating_mul(2u32.saturating_pow(failures.saturating_sub(1).min(8)))
        .min(METADATA_RETRY_MAX)
}

/// What is known of one application now.
#[derive(Debug, Clone, Default)]
pub(crate) struct AppView {
    /// Whether the instances were listed at least once (an empty view before is not "no provider").
    pub(crate) listed: bool,
    /// The provider URLs of instances with a known revision, in instance-name order: per instance,
    /// one per well-formed exported service. Built once per instance and revision, shared by every
    /// subscription.
    pub(crate) instances: Vec<Arc<[BuiltUrl]>>,
    /// Instances that could not be read, each counted once.
    pub(crate) malformed: u64,
    /// MetadataInfo fetches made (one per revision, plus retries).
    pub(crate) metadata_fetches: u64,
    /// Fetches that failed.
    pub(crate) metadata_failures: u64,
    /// Distinct revisions with metadata.
    pub(crate) revisions: usize,
    /// Instances with a revision whose metadata is not had (yet, or at all): the view is missing them.
    pub(crate) unresolved: usize,
}

/// A shared follower of one application; its task stops when the last clone of the `Arc` goes.
#[derive(Debug)]
pub(crate) struct AppWatch {
    view: watch::Receiver<Arc<AppView>>,
    _stop: oneshot::Sender<()>,
}

impl AppWatch {
    /// The view, updated after every change.
    pub(crate) fn view(&self) -> watch::Receiver<Arc<AppView>> {
        self.view.clone()
    }
}

/// The application watches of one registry, by application name.
#[derive(Debug, Default)]
pub(crate) struct AppWatches {
    live: Mutex<HashMap<String, Weak<AppWatch>>>,
}

impl AppWatches {
    /// The watch of `app`: the live one, or a new one whose task `start` spawns (given where to
    /// publish and when to stop; `false` once the registry is closed, and then `None`).
    pub(crate) fn watch(
        &self,
        app: &str,
        start: impl FnOnce(watch::Sender<Arc<AppView>>, oneshot::Receiver<()>) -> bool,
    ) -> Option<Arc<AppWatch>> {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|_, w| w.strong_count() > 0);
        if let Some(watch) = live.get(app).and_then(Weak::upgrade) {
            return Some(watch);
        }
        let (view_tx, view_rx) = watch::channel(Arc::new(AppView::default()));
        let (stop_tx, stop_rx) = oneshot::channel();
        if !start(view_tx, stop_rx) {
            return None;
        }
        let watch = Arc::new(AppWatch {
            view: view_rx,
            _stop: stop_tx,
        });
        live.insert(app.to_owned(), Arc::downgrade(&watch));
        Some(watch)
    }
}

/// Where a registry keeps the MetadataInfo of `remote` revisions (Dubbo's metadata report).
pub(crate) trait RemoteMetadata: Send + Sync {
    /// The MetadataInfo JSON of `app`'s `revision`.
    fn read<'a>(
        &'a self,
        app: &'a str,
        revision: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>>;
}

/// The MetadataInfo of each revision fetched so far, and the revisions that failed recently.
#[derive(Debug, Default)]
struct RevisionCache {
    known: HashMap<String, Arc<MetadataInfo>>,
    /// Failed revisions: failures in a row, and when to ask again.
    failed: HashMap<String, (u32, tokio::time::Instant)>,
}

impl RevisionCache {
    /// Forgets revisions no instance has any more (the cache holds at most the live revisions).
    fn retain(&mut self, live: &[&str]) {
        self.known.retain(|r, _| live.contains(&r.as_str()));
        self.failed.retain(|r, _| live.contains(&r.as_str()));
    }
}

/// One application's instances and the MetadataInfo of their revisions: what a follower task
/// publishes from.
pub(crate) struct Revisions {
    pub(crate) app: String,
    fetcher: Option<Arc<dyn MetadataFetcher>>,
    view: watch::Sender<Arc<AppView>>,
    cache: RevisionCache,
    /// Instances that could not be read, each logged once.
    pub(crate) malformed: JunkLog,
    /// The instances read, by name (node name, `ip:port`).
    pub(crate) nodes: BTreeMap<String, Arc<Instance>>,
    fetches: u64,
    failures: u64,
    /// The URLs built per node, with the instance and MetadataInfo they were built from.
    built: HashMap<String, Built>,
}

impl Revisions {
    pub(crate) fn new(
        app: &str,
        fetcher: Option<Arc<dyn MetadataFetcher>>,
        view: watch::Sender<Arc<AppView>>,
    ) -> Revisions {
        Revisions {
            app: app.to_owned(),
            fetcher,
            view,
            cache: RevisionCache::default(),
            malformed: JunkLog::default(),
            nodes: BTreeMap::new(),
            fetches: 0,
            failures: 0,
            built: HashMap::new(),
        }
    }

    /// Takes an instance read under `name`: kept when it differs from the one held (so that its
    /// URLs are rebuilt only then).
    pub(crate) fn insert(&mut self, name: &str, instance: Instance) {
        if self.nodes.get(name).is_none_or(|old| **old != instance) {
            self.nodes.insert(name.to_owned(), Arc::new(instance));
        }
    }

    /// Fetches the MetadataInfo of every revision not known yet (one instance asked per revision);
    /// how long until a retry of one that could not be had is due.
    pub(crate) async fn resolve_metadata<R: RemoteMetadata + ?Sized>(
        &mut self,
        remote: &R,
    ) -> Option<Duration> {
        let mut by_revision: BTreeMap<String, Arc<Instance>> = BTreeMap::new();
        for instance in self.nodes.values() {
            if let Some(revision) = instance.revision() {
                // Dubbo picks a random instance of the revision; the first is as good, and
                // deterministic.
                by_revision
                    .entry(revision.to_owned())
                    .or_insert_with(|| Arc::clone(instance));
            }
        }
        let live: Vec<&str> = by_revision.keys().map(String::as_str).collect();
        self.cache.retain(&live);
        let now = tokio::time::Instant::now();
        // The earliest retry due among the revisions still missing.
        let mut next: Option<tokio::time::Instant> = None;
        let mut wanted: Vec<(String, Arc<Instance>)> = Vec::new();
        if by_revision.len() > MAX_REVISIONS {
            tracing::warn!(app = %self.app, revisions = by_revision.len(), kept = MAX_REVISIONS, "too many revisions; the rest are left out");
        }
        for (revision, instance) in by_revision.into_iter().take(MAX_REVISIONS) {
            if self.cache.known.contains_key(&revision) {
                continue;
            }
            if let Some(&(failures, at)) = self.cache.failed.get(&revision).filter(|f| now < f.1) {
                if failures > 0 {
                    next = Some(next.map_or(at, |n| n.min(at)));
                }
                continue;
            }
            if !instance.remote_metadata() && self.fetcher.is_none() {
                // Nobody here can call a MetadataService (a registry used without the `rudder`
                // crate, such as the CLI's listing): such revisions are simply not resolvable, which
                // is neither news nor worth retrying.
                let first = self
                    .cache
                    .failed
                    .insert(revision.clone(), (0, now + UNRESOLVABLE))
                    .is_none();
                if first {
                    tracing::debug!(app = %self.app, %revision, "local metadata and no MetadataService client: instances left out");
                }
                continue;
            }
            wanted.push((revision, instance));
        }
        // At most FETCH_CONCURRENCY revisions asked at once.
        for chunk in wanted.chunks(FETCH_CONCURRENCY) {
            self.fetches += chunk.len() as u64;
            let fetches = chunk
                .iter()
                .map(|(revision, instance)| self.fetch(remote, instance, revision))
                .collect();
            let results = join_all(fetches).await;
            for ((revision, instance), result) in chunk.iter().zip(results) {
                match result {
                    Ok(info) => {
                        self.cache.failed.remove(revision);
                        self.cache
                            .known
                            .insert(revision.clone(), Arc::new(info.bounded()));
                    }
                    Err(error) => {
                        self.failures += 1;
                        let failures = self.cache.failed.get(revision).map_or(0, |f| f.0) + 1;
                        let at = now + metadata_retry(failures);
                        next = Some(next.map_or(at, |n| n.min(at)));
                        self.cache.failed.insert(revision.clone(), (failures, at));
                        if failures == 1 {
                            tracing::warn!(app = %self.app, %revision, instance = %instance.address(), %error, "no metadata for a revision; its instances are left out until it can be had");
                        } else {
                            tracing::debug!(app = %self.app, %revision, failures, %error, "no metadata for a revision, again");
                        }
                    }
                }
            }
        }
        next.map(|at| at.saturating_duration_since(tokio::time::Instant::now()))
    }

    async fn fetch<R: RemoteMetadata + ?Sized>(
        &self,
        remote: &R,
        instance: &Instance,
        revision: &str,
    ) -> Result<MetadataInfo, String> {
        if instance.remote_metadata() {
            let data = remote.read(&self.app, revision).await?;
            return MetadataInfo::from_json(&data);
        }
        let fetcher = self
            .fetcher
            .as_ref()
            .ok_or("local metadata needs a MetadataService client")?;
        let request = MetadataRequest {
            url: metadata_service_url(instance),
            revision: revision.to_owned(),
            metadata_version: instance.metadata.get(METADATA_VERSION_KEY).cloned(),
        };
        match tokio::time::timeout(FETCH_TIMEOUT, fetcher.fetch(request)).await {
            Ok(result) => result,
            Err(_) => Err(format!(
                "MetadataService gave no answer in {FETCH_TIMEOUT:?}"
            )),
        }
    }

    /// Publishes the view of the instances and revisions known now.
    pub(crate) fn publish(&mut self) {
        let mut built = HashMap::with_capacity(self.nodes.len());
        let mut instances = Vec::with_capacity(self.nodes.len());
        let mut unresolved = 0;
        for (name, instance) in &self.nodes {
            let Some(revision) = instance.revision() else {
                continue;
            };
            let Some(info) = self.cache.known.get(revision) else {
                unresolved += 1;
                continue;
            };
            let urls = match self.built.remove(name) {
                Some((i, m, urls)) if Arc::ptr_eq(&i, instance) && Arc::ptr_eq(&m, info) => urls,
                _ => build_urls(instance, info),
            };
            instances.push(Arc::clone(&urls));
            built.insert(name.clone(), (Arc::clone(instance), Arc::clone(info), urls));
        }
        self.built = built;
        let view = AppView {
            listed: true,
            instances,
            malformed: self.malformed.count(),
            metadata_fetches: self.fetches,
            metadata_failures: self.failures,
            revisions: self.cache.known.len(),
            unresolved,
        };
        self.view.send_replace(Arc::new(view));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_retries_back_off_to_a_minute() {
        assert_eq!(metadata_retry(1), Duration::from_secs(3));
        assert_eq!(metadata_retry(2), Duration::from_secs(6));
        assert_eq!(metadata_retry(5), Duration::from_secs(48));
        assert_eq!(metadata_retry(6), METADATA_RETRY_MAX);
        assert_eq!(metadata_retry(u32::MAX), METADATA_RETRY_MAX);
    }
}
