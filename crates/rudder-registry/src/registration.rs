//! The consumer node of a subscription (`<root>/<interface>/consumers/<URL>`): written after the first
//! listing, retried in the background with backoff, re-written in every new session, removed on close.

use tokio::time::Instant;
use zookeeper_client::{Client, CreateMode};

use crate::error::RegistryError;
use crate::session::Sessions;

/// The longest a subscription that ends waits for ZooKeeper to delete its consumer node.
pub(crate) const UNREGISTER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The consumer node, and when to try writing it again.
pub(crate) struct Registration {
    /// The encoded consumer URL.
    pub(crate) node: String,
    /// Consecutive failed attempts.
    pub(crate) failures: u32,
    /// When the next attempt is due; `None` once registered in the current session.
    pub(crate) due: Option<Instant>,
}

impl Registration {
    pub(crate) fn new(node: String) -> Registration {
        Registration {
            node,
            failures: 0,
            due: Some(Instant::now()),
        }
    }
}

/// Creates the ephemeral consumer node (and its persistent parent), replacing a leftover of ours.
/// Read-only ([`crate::RegistryOptions::with_read_only`]) the parent is created only under a service
/// node that exists: `Ok(false)`, nothing written, when it does not.
pub(crate) async fn register(
    sessions: &Sessions,
    parent: &str,
    node: &str,
    client: &Client,
) -> Result<bool, RegistryError> {
    let persistent = sessions.create_options(CreateMode::Persistent);
    let ephemeral = sessions.create_options(CreateMode::Ephemeral);
    if sessions.options().read_only() {
        match client.create(parent, b"", &persistent).await {
            Ok(_) | Err(zookeeper_client::Error::NodeExists) => {}
            // No `<root>/<interface>`: the service is not in the registry, and stays out of it.
            Err(zookeeper_client::Error::NoNode) => return Ok(false),
            Err(e) => return Err(RegistryError::zookeeper("create", parent, e)),
        }
    } else {
        client
            .mkdir(parent, &persistent)
            .await
            .map_err(|e| RegistryError::zookeeper("create", parent, e))?;
    }
    let path = format!("{parent}/{node}");
    let created = match client.create(&path, b"", &ephemeral).await {
        // Left over from an expired session of ours: replace it, as Dubbo does.
        Err(zookeeper_client::Error::NodeExists) => {
            match client.delete(&path, None).await {
                Ok(()) | Err(zookeeper_client::Error::NoNode) => {}
                Err(e) => return Err(RegistryError::zookeeper("delete", &path, e)),
            }
            client.create(&path, b"", &ephemeral).await
        }
        other => other,
    };
    created
        .map(|_| true)
        .map_err(|e| RegistryError::zookeeper("create", &path, e))
}
