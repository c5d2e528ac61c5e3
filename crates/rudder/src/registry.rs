//! Registry wiring for [`Reference`](crate::Reference): subscribe the directory, register the consumer.

use std::sync::Arc;

use rudder_cluster::directory::Directory;
use rudder_common::url::DubboUrl;

use crate::error::BuildError;

/// Keeps a registry subscription alive for as long as the reference lives.
#[derive(Debug)]
pub(crate) struct Registration;

/// The address this consumer registers under: loopback unless `RUDDER_HOST` says otherwise.
pub(crate) fn local_host() -> String {
    std::env::var("RUDDER_HOST").unwrap_or_else(|_| "127.0.0.1".to_owned())
}

pub(crate) async fn subscribe(
    registry: &str,
    _consumer: &DubboUrl,
    _directory: Arc<Directory>,
) -> Result<Registration, BuildError> {
    Err(BuildError::Registry(format!(
        "registry {registry:?}: ZooKeeper support is not wired in yet"
    )))
}
