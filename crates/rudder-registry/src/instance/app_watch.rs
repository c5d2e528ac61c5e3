//! One application's instances in ZooKeeper, followed once per registry however many references need
//! them ([`ZkInstances`], the ZooKeeper [`InstanceSource`]).
//!
//! [`AppWatches::watch`] hands out a shared [`AppWatch`] per application name: the first caller
//! starts its task, later callers get the same one, and the task ends when the last handle is
//! dropped. The task lists `<instance root>/<app>` with a child watch, reads every instance node
//! with a data watch (a provider updates its node in place when its revision changes), groups the
//! instances by revision and gets each revision's MetadataInfo once ([`Revisions`]). It
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

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::oneshot;
use tokio::task::JoinSet;
use zookeeper_client::{Client, SessionState};

use super::json::Instance;
use super::metadata::MetadataFetcher;
use super::source::{InstanceSource, SourceFuture};
use super::view::{AppWatch, AppWatches, RemoteMetadata, Revisions, MAX_INSTANCES};
use crate::config_center::{RuleWatch, RuleWatcher};
use crate::error::RegistryError;
use crate::session::Sessions;
use crate::timing::sleep_opt;

/// One instance node as read, with its data watch.
type NodeRead = (
    Vec<u8>,
    zookeeper_client::Stat,
    zookeeper_client::OneshotWatcher,
);

/// Instance reads sent before the first answer is awaited.
const READ_PIPELINE: usize = 256;

/// Application-level discovery read from ZooKeeper: instances under `<instance root>/<app>`, the
/// mapping node `<root>/mapping/<interface>`, remote metadata under `<root>/metadata/<app>/<rev>`.
#[derive(Debug)]
pub(crate) struct ZkInstances {
    pub(crate) sessions: Arc<Sessions>,
    pub(crate) watches: AppWatches,
}

impl InstanceSource for ZkInstances {
    fn watch(&self, app: &str, fetcher: Option<Arc<dyn MetadataFetcher>>) -> Option<Arc<AppWatch>> {
        let sessions = &self.sessions;
        self.watches.watch(app, |view, stop| {
            let follower = Follower {
                sessions: Arc::clone(sessions),
                path: format!("{}/{app}", sessions.address().instance_root()),
                metadata: ZkMetadata {
                    sessions: Arc::clone(sessions),
                },
                revisions: Revisions::new(app, fetcher, view),
            };
            sessions.spawn(follower.run(stop)).is_some()
        })
    }

    fn follow_mapping(
        &self,
        interface: &str,
        sink: Arc<dyn RuleSink>,
    ) -> SourceFuture<'_, (RuleWatch, Option<RegistryError>)> {
        let root = format!("{}/mapping", self.sessions.address().root());
        let watcher = RuleWatcher::new(
            Arc::clone(&self.sessions),
            &root,
            [RuleKey::new(interface.to_owned())],
            sink,
        );
        Box::pin(watcher.start())
    }

    fn read_mapping<'a>(&'a self, interface: &'a str) -> SourceFuture<'a, Option<String>> {
        let read = async move {
            let client = self.sessions.renew(None).await.ok()?;
            let path = format!("{}/mapping/{interface}", self.sessions.address().root());
            let (data, _) = client.get_data(&path).await.ok()?;
            Some(String::from_utf8_lossy(&data).into_owned())
        };
        // `renew` waits for a session as long as it takes: a migration must not.
        let bound = self.sessions.options().connect_timeout();
        Box::pin(async move { tokio::time::timeout(bound, read).await.ok().flatten() })
    }

    fn connect_timeout(&self) -> Duration {
        self.sessions.options().connect_timeout()
    }
}

/// `<root>/metadata/<app>/<revision>`, where remote MetadataInfo lives.
struct ZkMetadata {
    sessions: Arc<Sessions>,
}

impl RemoteMetadata for ZkMetadata {
    fn read<'a>(
        &'a self,
        app: &'a str,
        revision: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send + 'a>> {
        let bound = self.sessions.options().connect_timeout();
        let read = async move {
            let path = format!(
                "{}/metadata/{app}/{revision}",
                self.sessions.address().root()
            );
            let client = self
                .sessions
                .renew(None)
                .await
                .map_err(|e| format!("read {path}: {e}"))?;
            let (data, _) = client
                .get_data(&path)
                .await
                .map_err(|e| format!("read {path}: {e}"))?;
            Ok(data)
        };
        Box::pin(async move {
            tokio::time::timeout(bound, read)
                .await
                .unwrap_or_else(|_| Err(format!("no ZooKeeper session within {bound:?}")))
        })
    }
}

/// The task's state.
struct Follower {
    sessions: Arc<Sessions>,
    /// `<instance root>/<app>`.
    path: String,
    metadata: ZkMetadata,
    revisions: Revisions,
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
                        let retry = self.revisions.resolve_metadata(&self.metadata).await;
                        self.revisions.publish();
                        retry
                    }
                    Err(error) => {
                        tracing::warn!(app = %self.revisions.app, error = &error as &dyn std::error::Error, "instance listing failed; keeping the last known instances");
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
            tracing::warn!(app = %self.revisions.app, listed = children.len(), kept = MAX_INSTANCES, "too many instances; the rest are left out");
            children.truncate(MAX_INSTANCES);
        }
        self.revisions
            .nodes
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
                self.revisions.nodes.remove(child);
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
        match Instance::parse(&self.revisions.app, &data) {
            Ok(instance) => {
                self.revisions.insert(child, instance);
            }
            Err(error) => {
                self.revisions.nodes.remove(child);
                if self
                    .revisions
                    .malformed
                    .first_sighting(&format!("{child}\n{data:?}"))
                {
                    tracing::warn!(app = %self.revisions.app, node = %child, %error, "skipping unreadable instance node");
                }
            }
        }
        Ok(())
    }
}
