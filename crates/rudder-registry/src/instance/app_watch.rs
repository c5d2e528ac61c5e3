//! One application's instances, followed once per registry however many references need them.
//!
//! [`AppWatches::watch`] hands out a shared [`AppWatch`] per application name: the first caller
//! starts its task, later callers get the same one, and the task ends when the last handle is
//! dropped. The task lists `<instance root>/<app>` with a child watch, reads every instance node
//! with a data watch (a provider updates its node in place when its revision changes), groups the
//! instances by revision and gets each revision's MetadataInfo once ([`RevisionCache`]). It
//! publishes an [`AppView`] after every change. A change costs reads of what changed only: a new
//! child list reads the new children, a fired data watch re-reads that one node; everything is read
//! again only on a reconnect, a new session or after a failed read.
//!
//! It survives ZooKeeper trouble as the interface-level subscription does: a lost connection keeps
//! the last view; a reconnect or a new session (after an expiry) re-reads everything; a failed read
//! is retried with the registry's backoff. A revision whose metadata cannot be had is left out of
//! the view (one warning, counted in [`AppView::metadata_failures`]) and asked again after 3 s,
//! doubling per failure up to 60 s; the other revisions proceed (Dubbo's partial-failure rule).
//! Up to 4 revisions are fetched at once, each bounded by 5 s.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use zookeeper_client::{Client, SessionState};

use super::address::{build_urls, Built, BuiltUrl};
use super::join::join_all;
use super::json::Instance;
use super::metadata::{
    metadata_service_url, MetadataFetcher, MetadataInfo, MetadataRequest, METADATA_VERSION_KEY,
};
use crate::error::RegistryError;
use crate::junk::JunkLog;
use crate::session::Sessions;
use crate::timing::sleep_opt;

/// The most instances of one application followed (the rest are left out, with one warning).
pub(crate) const MAX_INSTANCES: usize = 10_000;
/// The most distinct revisions of one application whose metadata is fetched and kept.
pub(crate) const MAX_REVISIONS: usize = 64;
/// One instance node as read, with its data watch.
type NodeRead = (
    Vec<u8>,
    zookeeper_client::Stat,
    zookeeper_client::OneshotWatcher,
);

/// Instance reads sent before the first answer is awaited.
const READ_PIPELINE: usize = 256;
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
    /// The provider URLs of instances with a known revision, in node-name order: per instance, one
    /// per well-formed exported service. Built once per instance and revision, shared by every
    /// subscription.
    pub(crate) instances: Vec<Arc<[BuiltUrl]>>,
    /// Instance nodes that could not be read, each counted once.
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

/// A shared follower of one application; the task stops when the last clone of the `Arc` goes.
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
    /// The watch of `app`, started on first use; `None` once the registry is closed.
    pub(crate) fn watch(
        &self,
        sessions: &Arc<Sessions>,
        app: &str,
        fetcher: Option<Arc<dyn MetadataFetcher>>,
    ) -> Option<Arc<AppWatch>> {
        let mut live = self.live.lock().unwrap_or_else(PoisonError::into_inner);
        live.retain(|_, w| w.strong_count() > 0);
        if let Some(watch) = live.get(app).and_then(Weak::upgrade) {
            return Some(watch);
        }
        let (view_tx, view_rx) = watch::channel(Arc::new(AppView::default()));
        let (stop_tx, stop_rx) = oneshot::channel();
        let follower = Follower {
            sessions: Arc::clone(sessions),
            app: app.to_owned(),
            path: format!("{}/{app}", sessions.address().instance_root()),
            metadata_root: format!("{}/metadata/{app}", sessions.address().root()),
            fetcher,
            view: view_tx,
            cache: RevisionCache::default(),
            malformed: JunkLog::default(),
            nodes: BTreeMap::new(),
            fetches: 0,
            failures: 0,
            built: HashMap::new(),
        };
        sessions.spawn(follower.run(stop_rx))?;
        let watch = Arc::new(AppWatch {
            view: view_rx,
            _stop: stop_tx,
        });
        live.insert(app.to_owned(), Arc::downgrade(&watch));
        Some(watch)
    }
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

/// The task's state.
struct Follower {
    sessions: Arc<Sessions>,
    app: String,
    /// `<instance root>/<app>`.
    path: String,
    /// `<root>/metadata/<app>`, where remote MetadataInfo lives.
    metadata_root: String,
    fetcher: Option<Arc<dyn MetadataFetcher>>,
    view: watch::Sender<Arc<AppView>>,
    cache: RevisionCache,
    malformed: JunkLog,
    /// The instances read, by node name.
    nodes: BTreeMap<String, Arc<Instance>>,
    fetches: u64,
    failures: u64,
    /// The URLs built per node, with the instance and MetadataInfo they were built from.
    built: HashMap<String, Built>,
}

/// What a fired watch asks to re-read.
enum Fired {
    /// The application node's children (or its creation).
    Children,
    /// One instance node's data (changed or deleted).
    Data(String),
}

/// What the next pass reads.
enum Todo {
    /// Everything, re-arming every watch (first pass, reconnect, new session, after a failure).
    Everything,
    Children,
    Data(String),
    /// Nothing new: only revisions whose metadata is due for another try.
    Metadata,
}

/// The watches armed in the current session: at most one per node.
#[derive(Default)]
struct Armed {
    fired: JoinSet<Fired>,
    data: HashSet<String>,
}

impl Armed {
    fn reset(&mut self) {
        self.fired.abort_all();
        self.fired = JoinSet::new();
        self.data.clear();
    }
}

impl Follower {
    async fn run(mut self, mut stop: oneshot::Receiver<()>) {
        let mut client = match self.sessions.renew(None).await {
            Ok(client) => client,
            Err(_) => return,
        };
        let mut state = client.state_watcher();
        let mut failures: u32 = 0;
        let mut armed = Armed::default();
        let sessions = Arc::clone(&self.sessions);
        let mut todo = Todo::Everything;
        loop {
            // One pass (reads, metadata fetches) ends early when the watch or the registry does:
            // a MetadataService that does not answer must not hold a shutdown up.
            let pass = async {
                let read = match todo {
                    Todo::Everything => {
                        armed.reset();
                        self.read_children(&client, &mut armed).await
                    }
                    Todo::Children => self.read_children(&client, &mut armed).await,
                    Todo::Data(child) => self.read_child(&client, &child, &mut armed).await,
                    Todo::Metadata => Ok(()),
                };
                match read {
                    Ok(()) => {
                        failures = 0;
                        let retry = self.resolve_metadata(&client).await;
                        self.publish();
                        retry
                    }
                    Err(error) => {
                        tracing::warn!(app = %self.app, error = &error as &dyn std::error::Error, "instance listing failed; keeping the last known instances");
                        failures = failures.saturating_add(1);
                        Some(self.sessions.options().retry_delay(failures - 1))
                    }
                }
            };
            let retry = tokio::select! {
                _ = &mut stop => return,
                () = sessions.closed() => return,
                retry = pass => retry,
            };
            todo = tokio::select! {
                _ = &mut stop => return,
                () = self.sessions.closed() => return,
                Some(Ok(fired)) = armed.fired.join_next() => match fired {
                    Fired::Children => Todo::Children,
                    Fired::Data(child) => {
                        armed.data.remove(&child);
                        Todo::Data(child)
                    }
                },
                s = state.changed() => {
                    if s == SessionState::Disconnected {
                        // Keep the view; wait for the connection to come back (or the session to end).
                        loop {
                            let next = tokio::select! {
                                _ = &mut stop => return,
                                () = self.sessions.closed() => return,
                                s = state.changed() => s,
                            };
                            if next != SessionState::Disconnected {
                                break;
                            }
                        }
                    }
                    Todo::Everything
                }
                () = sleep_opt(retry) => if failures > 0 { Todo::Everything } else { Todo::Metadata },
            };
            // However the end of the session was noticed (a state change, a watch firing with it, a
            // failed read), the next read goes through a new one.
            if client.state().is_terminated() {
                let renewed = tokio::select! {
                    _ = &mut stop => return,
                    renewed = self.sessions.renew(Some(client.session_id())) => renewed,
                };
                let Ok(fresh) = renewed else { return };
                client = fresh;
                state = client.state_watcher();
                failures = 0;
                todo = Todo::Everything;
            }
        }
    }

    /// Lists the instances (re-arming the child watch) and reads the ones not followed yet; those no
    /// longer listed leave the view.
    async fn read_children(
        &mut self,
        client: &Client,
        armed: &mut Armed,
    ) -> Result<(), RegistryError> {
        let children = match client.list_and_watch_children(&self.path).await {
            Ok((children, watcher)) => {
                armed.fired.spawn(async move {
                    watcher.changed().await;
                    Fired::Children
                });
                children
            }
            Err(zookeeper_client::Error::NoNode) => {
                // No instance yet: wait for the application node to appear.
                let (_, watcher) = client
                    .check_and_watch_stat(&self.path)
                    .await
                    .map_err(|e| RegistryError::zookeeper("watch", &self.path, e))?;
                armed.fired.spawn(async move {
                    watcher.changed().await;
                    Fired::Children
                });
                Vec::new()
            }
            Err(e) => return Err(RegistryError::zookeeper("list", &self.path, e)),
        };
        let mut children = children;
        children.sort_unstable();
        if children.len() > MAX_INSTANCES {
            tracing::warn!(app = %self.app, listed = children.len(), kept = MAX_INSTANCES, "too many instances; the rest are left out");
            children.truncate(MAX_INSTANCES);
        }
        self.nodes
            .retain(|name, _| children.binary_search(name).is_ok());
        let new: Vec<String> = children
            .into_iter()
            .filter(|c| !armed.data.contains(c))
            .collect();
        // Pipelined: a read is sent when asked for, so a chunk of them costs about one round trip.
        for chunk in new.chunks(READ_PIPELINE) {
            let paths: Vec<String> = chunk.iter().map(|c| format!("{}/{c}", self.path)).collect();
            let reads: Vec<_> = paths.iter().map(|p| client.get_and_watch_data(p)).collect();
            for ((child, path), read) in chunk.iter().zip(&paths).zip(reads) {
                self.apply_read(child, path, read.await, armed)?;
            }
        }
        Ok(())
    }

    /// Reads one instance node, arming its data watch.
    async fn read_child(
        &mut self,
        client: &Client,
        child: &str,
        armed: &mut Armed,
    ) -> Result<(), RegistryError> {
        let path = format!("{}/{child}", self.path);
        let read = client.get_and_watch_data(&path).await;
        self.apply_read(child, &path, read, armed)
    }

    /// Takes the result of reading one instance node (arming its data watch when it exists).
    fn apply_read(
        &mut self,
        child: &str,
        path: &str,
        read: Result<NodeRead, zookeeper_client::Error>,
        armed: &mut Armed,
    ) -> Result<(), RegistryError> {
        let (data, _, watcher) = match read {
            Ok(read) => read,
            // Gone: the child watch says so too (and arms nothing here).
            Err(zookeeper_client::Error::NoNode) => {
                self.nodes.remove(child);
                return Ok(());
            }
            Err(e) => return Err(RegistryError::zookeeper("read", path, e)),
        };
        let name = child.to_owned();
        armed.fired.spawn(async move {
            watcher.changed().await;
            Fired::Data(name)
        });
        armed.data.insert(child.to_owned());
        match Instance::parse(&self.app, &data) {
            Ok(instance) => {
                if self.nodes.get(child).is_none_or(|old| **old != instance) {
                    self.nodes.insert(child.to_owned(), Arc::new(instance));
                }
            }
            Err(error) => {
                self.nodes.remove(child);
                if self.malformed.first_sighting(&format!("{child}\n{data:?}")) {
                    tracing::warn!(app = %self.app, node = %child, %error, "skipping unreadable instance node");
                }
            }
        }
        Ok(())
    }

    /// Fetches the MetadataInfo of every revision not known yet (one instance asked per revision);
    /// how long until a retry of one that could not be had is due.
    async fn resolve_metadata(&mut self, client: &Client) -> Option<Duration> {
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
                .map(|(revision, instance)| self.fetch(client, instance, revision))
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

    async fn fetch(
        &self,
        client: &Client,
        instance: &Instance,
        revision: &str,
    ) -> Result<MetadataInfo, String> {
        if instance.remote_metadata() {
            let path = format!("{}/{revision}", self.metadata_root);
            let (data, _) = client
                .get_data(&path)
                .await
                .map_err(|e| format!("read {path}: {e}"))?;
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

    fn publish(&mut self) {
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
