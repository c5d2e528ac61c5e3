//! Following rule nodes in the config center: one data watch per node, or an exists-watch while the node
//! does not exist yet, re-armed by every read (the read and the watch are one request, so no change
//! between a watch firing and the next read is missed).
//!
//! | what happens | what the task does |
//! |---|---|
//! | a node is created, changed or deleted | re-read it, re-arm, tell the sink if the text changed |
//! | connection lost | keep the last texts, wait |
//! | reconnected (same session) | re-read every node |
//! | a read fails | retry with backoff (doubling up to the registry's retry maximum) |
//! | session expired | open a new session, re-read every node |

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use zookeeper_client::{Client, SessionState, WatchedEvent};

use crate::error::RegistryError;
use crate::session::Sessions;
use crate::timing::sleep_opt;

type WatchFuture = Pin<Box<dyn Future<Output = WatchedEvent> + Send>>;

/// One followed rule node.
struct RuleNode {
    key: RuleKey,
    path: String,
    /// The text last handed to the sink (`Some(None)`: reported absent); `None` before the first report.
    reported: Option<Option<String>>,
    watch: Option<WatchFuture>,
    dirty: bool,
}

/// The task state: the nodes, the sink, and the session they are read through.
pub(crate) struct RuleWatcher {
    sessions: Arc<Sessions>,
    nodes: Vec<RuleNode>,
    sink: Arc<dyn RuleSink>,
}

/// A running watch of rule nodes: the sink hears of every change until this is dropped or closed.
#[derive(Debug)]
pub struct RuleWatch {
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl RuleWatch {
    /// A watch whose background `task` ends when `stop` fires (or its receiver sees the sender
    /// dropped): how a [`ConfigCenter`](crate::ConfigCenter) other than ZooKeeper's hands one out.
    pub(crate) fn new(stop: oneshot::Sender<()>, task: JoinHandle<()>) -> RuleWatch {
        RuleWatch {
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// Stops following and waits for the background task to end.
    pub async fn close(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for RuleWatch {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

enum Wake {
    Stop,
    Watch(usize, WatchedEvent),
    State(SessionState),
    Retry,
}

impl RuleWatcher {
    /// A watcher of `keys` under `group_path` (`/dubbo/config/dubbo` by default).
    pub(crate) fn new(
        sessions: Arc<Sessions>,
        group_path: &str,
        keys: impl IntoIterator<Item = RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RuleWatcher {
        let mut nodes: Vec<RuleNode> = Vec::new();
        for key in keys {
            if nodes.iter().any(|n| n.key == key) {
                continue;
            }
            nodes.push(RuleNode {
                path: format!("{group_path}/{}", key.as_str()),
                key,
                reported: None,
                watch: None,
                dirty: true,
            });
        }
        RuleWatcher {
            sessions,
            nodes,
            sink,
        }
    }

    /// Reads every node once (the sink hears each key's current text before this returns), then
    /// follows them in the background. A first read that fails is returned with the handle: the
    /// background task keeps retrying it.
    pub(crate) async fn start(mut self) -> (RuleWatch, Option<RegistryError>) {
        let first = match self.sessions.renew(None).await {
            Ok(client) => self.refresh(&client).await.err().map(|e| (Some(client), e)),
            Err(error) => Some((None, error)),
        };
        let (client, error) = match first {
            None => (None, None),
            Some((client, error)) => (client, Some(error)),
        };
        let (stop_tx, stop_rx) = oneshot::channel();
        let sessions = Arc::clone(&self.sessions);
        // `None`: the registry closed meanwhile, and a closed registry starts nothing.
        let task = sessions.spawn(self.run(client, stop_rx));
        let error = match (&task, error) {
            (None, None) => Some(RegistryError::Closed),
            (_, error) => error,
        };
        let watch = RuleWatch {
            stop: Some(stop_tx),
            task,
        };
        (watch, error)
    }

    /// Reads the dirty nodes, re-arming their watches.
    async fn refresh(&mut self, client: &Client) -> Result<(), RegistryError> {
        for node in self.nodes.iter_mut().filter(|n| n.dirty) {
            let (text, watch) = read_node(client, &node.path).await?;
            node.watch = Some(watch);
            node.dirty = false;
            if node.reported.as_ref() != Some(&text) {
                self.sink.rule(&node.key, text.as_deref());
                node.reported = Some(text);
            }
        }
        Ok(())
    }

    fn mark_all_dirty(&mut self) {
        for node in &mut self.nodes {
            node.dirty = true;
            node.watch = None;
        }
    }

    async fn run(mut self, client: Option<Client>, mut stop: oneshot::Receiver<()>) {
        let mut client = match client {
            Some(client) => client,
            None => tokio::select! {
                _ = &mut stop => return,
                renewed = self.sessions.renew(None) => match renewed {
                    Ok(client) => client,
                    Err(_) => return,
                },
            },
        };
        let mut state = client.state_watcher();
        let mut failures: u32 = 0;
        loop {
            let dirty = self.nodes.iter().any(|n| n.dirty);
            // Read at once what became dirty; after a failure, only when the backoff says so.
            if dirty && failures == 0 && client.state() != SessionState::Disconnected {
                if let Err(error) = self.refresh(&client).await {
                    failures = 1;
                    tracing::warn!(
                        error = &error as &dyn std::error::Error,
                        "config center read failed; keeping the last rules"
                    );
                }
                continue;
            }
            let retry_after =
                (dirty && failures > 0).then(|| self.sessions.options().retry_delay(failures - 1));
            let wake = tokio::select! {
                _ = &mut stop => Wake::Stop,
                () = self.sessions.closed() => Wake::Stop,
                (index, event) = any_fired(&mut self.nodes) => Wake::Watch(index, event),
                s = state.changed() => Wake::State(s),
                () = sleep_opt(retry_after) => Wake::Retry,
            };
            let mut session_over = false;
            match wake {
                Wake::Stop => return,
                Wake::Watch(index, event) => {
                    let node = &mut self.nodes[index];
                    node.watch = None;
                    if event.session_state.is_terminated() {
                        session_over = true;
                    } else {
                        node.dirty = true;
                    }
                }
                Wake::State(s) if s.is_terminated() => session_over = true,
                Wake::State(SessionState::SyncConnected) => self.mark_all_dirty(),
                Wake::State(_) => {}
                Wake::Retry => match self.refresh(&client).await {
                    Ok(()) => failures = 0,
                    Err(error) => {
                        failures = failures.saturating_add(1);
                        tracing::warn!(
                            error = &error as &dyn std::error::Error,
                            "config center read failed again; keeping the last rules"
                        );
                    }
                },
            }
            if session_over {
                let renewed = tokio::select! {
                    _ = &mut stop => return,
                    renewed = self.sessions.renew(Some(client.session_id())) => renewed,
                };
                let Ok(fresh) = renewed else { return };
                client = fresh;
                state = client.state_watcher();
                self.mark_all_dirty();
                failures = 0;
            }
        }
    }
}

/// Reads a node's text and arms a watch on it: a data watch when it exists, an exists-watch when not.
async fn read_node(
    client: &Client,
    path: &str,
) -> Result<(Option<String>, WatchFuture), RegistryError> {
    let failed = |e| RegistryError::zookeeper("read", path, e);
    match client.get_and_watch_data(path).await {
        Ok((data, _, watcher)) => Ok((Some(text_of(&data)), Box::pin(watcher.changed()))),
        Err(zookeeper_client::Error::NoNode) => {
            let (stat, watcher) = client.check_and_watch_stat(path).await.map_err(failed)?;
            let watch: WatchFuture = Box::pin(watcher.changed());
            if stat.is_none() {
                return Ok((None, watch));
            }
            // Created in between: read it; the exists-watch also fires on its next change or delete.
            match client.get_data(path).await {
                Ok((data, _)) => Ok((Some(text_of(&data)), watch)),
                Err(zookeeper_client::Error::NoNode) => Ok((None, watch)),
                Err(e) => Err(failed(e)),
            }
        }
        Err(e) => Err(failed(e)),
    }
}

/// Node data is UTF-8 (Dubbo's Curator client); anything else is replaced, as Java's decoder does.
fn text_of(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

/// The first armed watch to fire, with its node's index.
async fn any_fired(nodes: &mut [RuleNode]) -> (usize, WatchedEvent) {
    std::future::poll_fn(|cx| {
        for (index, node) in nodes.iter_mut().enumerate() {
            if let Some(watch) = node.watch.as_mut() {
                if let Poll::Ready(event) = watch.as_mut().poll(cx) {
                    return Poll::Ready((index, event));
                }
            }
        }
        Poll::Pending
    })
    .await
}
