//! [`Diagnostics`]: what a consumer holds open right now, for health checks, tests and soak tools.
//!
//! Kept apart from [`Consumer`]'s own methods, which configure and call: these only count, and a
//! service needs them when it checks for leaks or reports its state, not on every call.

use crate::consumer::Consumer;

/// A read-only view of what one [`Consumer`] holds open: connections, connection tasks, registry
/// sessions. Cheap: each figure is read when asked.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let consumer = rudder::Consumer::builder().build();
/// let diagnostics = consumer.diagnostics();
/// assert_eq!(diagnostics.open_connections(), 0);
/// assert_eq!(diagnostics.live_tasks(), 0);
/// diagnostics.wait_until_idle().await; // nothing open: returns at once
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Diagnostics {
    consumer: Consumer,
}

impl Consumer {
    /// What this consumer holds open now (connections, tasks, registry sessions): for health
    /// checks, leak tests and soak tools.
    pub fn diagnostics(&self) -> Diagnostics {
        Diagnostics {
            consumer: self.clone(),
        }
    }
}

impl Diagnostics {
    /// Open connections over every transport (dubbo://, tri://, plugged-in ones), over all references.
    pub fn open_connections(&self) -> usize {
        self.consumer.inner.protocol().open_connections()
    }

    /// dubbo:// connection tasks (connect, driver, writer) alive, over all references (a tri://
    /// connection's tasks are tonic's and end with it).
    pub fn live_tasks(&self) -> usize {
        self.consumer.inner.protocol().live_tasks()
    }

    /// Returns once no dubbo:// connection of this consumer is open and no connection task is alive
    /// (after its references are gone, or its providers left). Bound it with a timeout if calls may
    /// still run.
    pub async fn wait_until_idle(&self) {
        self.consumer.inner.protocol().wait_until_idle().await;
    }

    /// Registry sessions this consumer holds open: one per distinct registry address some reference
    /// (or the config center) uses, and those released less than the idle timeout ago
    /// ([`ConsumerBuilder::registry_idle_timeout`](crate::ConsumerBuilder::registry_idle_timeout)).
    #[cfg(feature = "zookeeper")]
    pub fn registry_sessions(&self) -> usize {
        self.consumer.inner.registries().len()
    }

    /// Which MetadataService answered this consumer's application-level discovery, so far: V1
    /// (hessian2) or MetadataServiceV2 (protobuf over tri://, asked of instances that say
    /// `meta-v=2.0.0`), and how often V2 was not served and V1 was asked instead.
    #[cfg(feature = "zookeeper")]
    pub fn metadata_service_calls(&self) -> crate::MetadataServiceCalls {
        self.consumer.inner.metadata_service_calls()
    }
}
