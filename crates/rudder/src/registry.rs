//! Registry wiring for [`Reference`](crate::Reference): subscribe the directory, register the consumer.

use std::sync::Arc;

use rudder_cluster::directory::Directory;
use rudder_common::url::DubboUrl;
use rudder_registry::{ConsumerSpec, RegistryOptions, Subscription, ZookeeperRegistry};

use crate::error::BuildError;

/// Keeps a registry subscription (and its session) alive for as long as the reference lives; dropping it
/// unsubscribes and removes the consumer node.
#[derive(Debug)]
pub(crate) struct Registration {
    _subscription: Subscription,
    _registry: ZookeeperRegistry,
}

/// The address this consumer registers under: `DUBBO_IP_TO_REGISTRY`, else loopback.
pub(crate) fn local_host() -> String {
    std::env::var("DUBBO_IP_TO_REGISTRY").unwrap_or_else(|_| "127.0.0.1".to_owned())
}

/// Connects to `registry`, subscribes `directory` to the providers `consumer` asks for, and waits for the
/// first listing.
pub(crate) async fn subscribe(
    registry: &str,
    consumer: &DubboUrl,
    directory: Arc<Directory>,
) -> Result<Registration, BuildError> {
    let fail = |e: rudder_registry::RegistryError| BuildError::Registry(e.to_string());
    let zookeeper = ZookeeperRegistry::connect(registry, RegistryOptions::default())
        .await
        .map_err(fail)?;
    let mut spec = ConsumerSpec::new(consumer.service_interface());
    if let Some(version) = consumer.parameter("version").filter(|v| !v.is_empty()) {
        spec = spec.version(version);
    }
    if let Some(group) = consumer.parameter("group").filter(|g| !g.is_empty()) {
        spec = spec.group(group);
    }
    if let Some(protocol) = consumer.parameter("protocol").filter(|p| !p.is_empty()) {
        spec = spec.protocol(protocol);
    }
    if let Some(application) = consumer.parameter("application").filter(|a| !a.is_empty()) {
        spec = spec.application(application);
    }
    let subscription = zookeeper.subscribe(spec, directory).await.map_err(fail)?;
    Ok(Registration {
        _subscription: subscription,
        _registry: zookeeper,
    })
}
