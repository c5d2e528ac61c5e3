//! The handle of one subscription: its status channel, and unsubscribing on drop.

use std::time::Duration;

use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::migration::DiscoveryView;

/// What a subscription has done so far, published after every step.
///
/// Tests and `rudder providers --watch` wait on [`Subscription::status`] for a condition (a generation
/// past the last one seen, `sessions >= 2`, ...) instead of sleeping.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SubscriptionStatus {
    /// Increases by one each time the directory's provider list changed.
    pub generation: u64,
    /// Increases by one after every complete listing of providers and configurators, changed or not,
    /// and after every config-center rule change that changed the rules in effect.
    pub listings: u64,
    /// Providers in the directory after the last update.
    pub providers: usize,
    /// Legacy configurator rules in effect (`override://` children of `/dubbo/<interface>/configurators`).
    pub configurators: usize,
    /// Config-center configurator rules in effect (application and service rule together).
    pub dynamic_rules: usize,
    /// Config-center rule texts taken so far (the first read of each rule included).
    pub rule_updates: u64,
    /// Config-center rule texts that could not be parsed (each kept the last good rule).
    pub rule_errors: u64,
    /// The last such failure: the rule key and why.
    pub last_rule_error: Option<String>,
    /// Registry children that could not be read, each counted once.
    pub malformed: u64,
    /// Provider URLs the sink refused (e.g. an unreadable `weight`), since the last full listing.
    pub rejected: u64,
    /// Whether the registry connection is up. While it is down the directory keeps its providers.
    pub connected: bool,
    /// Registry sessions this subscription has been attached to (with ZooKeeper, 2 after one expiry).
    pub sessions: u64,
    /// Whether the consumer node is registered in the current session. A failed registration does not
    /// stop discovery: it is retried in the background until it works.
    pub registered: bool,
    /// Why the last registration attempt failed, until one succeeds (the message names the node path,
    /// never a password).
    pub registration_error: Option<String>,
    /// Providers listed in the registry that a configurator rule disables (`disabled: true`), each with
    /// the rule that did, in node-name order: what `rudder providers --explain` shows as "out, by
    /// configurator".
    pub disabled: Vec<DisabledProvider>,
    /// Listed providers whose `weight` a configurator rule changes, each with the rule that set it, in
    /// node-name order: what `rudder providers` shows as `weight 300 (rule KEY)`.
    pub reweighted: Vec<ReweightedProvider>,
    /// Which view feeds the directory now (see `migration.step`).
    pub view: DiscoveryView,
    /// The step in effect (`FORCE_INTERFACE`, `APPLICATION_FIRST`, `FORCE_APPLICATION`): the
    /// migration rule's, else the consumer's `migration.step`, else `APPLICATION_FIRST`.
    pub migration_step: String,
    /// Why that step and view: who set the step (a rule entry, the rule, the consumer setting, the
    /// default), the comparison under `APPLICATION_FIRST`, a delayed or refused switch, e.g.
    /// `APPLICATION_FIRST (default): application view, 2 application-level / 1 interface-level
    /// providers >= threshold 0`.
    pub migration_decision: String,
    /// Migration rule texts taken (`<app>.migration` under `DUBBO_SERVICEDISCOVERY_MIGRATION`).
    pub migration_rule_updates: u64,
    /// Migration rule texts that could not be parsed (each kept the last good rule).
    pub migration_rule_errors: u64,
    /// The last such failure.
    pub last_migration_rule_error: Option<String>,
    /// Usable providers of the interface-level view (`/dubbo/<interface>/providers`).
    pub interface_providers: usize,
    /// Usable providers of the application-level view (instances).
    pub application_providers: usize,
    /// The provider applications followed (from `provided-by` or the mapping).
    pub applications: Vec<String>,
    /// Instance nodes that could not be read, each counted once.
    pub instance_malformed: u64,
    /// MetadataInfo fetches made (one per revision, plus retries) and failed.
    pub metadata_fetches: u64,
    /// MetadataInfo fetches that failed (their revisions' instances are left out meanwhile).
    pub metadata_failures: u64,
    /// Distinct revisions whose MetadataInfo is known.
    pub revisions: usize,
    /// Whether the last providers are kept because a notified list had none
    /// (`enable-empty-protection=true` on the registry URL), until a list with one arrives.
    pub empty_protected: bool,
    /// Notified provider lists that empty protection refused so far.
    pub empty_pushes_kept: u64,
}

/// A listed provider that a configurator rule takes out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DisabledProvider {
    /// `host:port`.
    pub address: String,
    /// The rule that disabled it: `configurators` (the legacy category), `<app>.configurators` or
    /// `<interface>:<version>:<group>.configurators`.
    pub rule: String,
}

/// A listed provider whose `weight` a configurator rule changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReweightedProvider {
    /// `host:port`.
    pub address: String,
    /// Its `weight` before the rules (registered, consumer parameters merged), if it had one.
    pub registered: Option<String>,
    /// Its `weight` after the rules.
    pub weight: String,
    /// The last rule that changed it, labelled as in [`DisabledProvider::rule`].
    pub rule: String,
}

impl ReweightedProvider {
    /// `address` weighted `weight` (from `registered`) by `rule`.
    ///
    /// ```
    /// use rudder_registry::ReweightedProvider;
    /// let r = ReweightedProvider::new("10.0.0.1:20880", Some("100"), "300", "configurators");
    /// assert_eq!(r.weight, "300");
    /// ```
    pub fn new(
        address: &str,
        registered: Option<&str>,
        weight: &str,
        rule: &str,
    ) -> ReweightedProvider {
        ReweightedProvider {
            address: address.to_owned(),
            registered: registered.map(str::to_owned),
            weight: weight.to_owned(),
            rule: rule.to_owned(),
        }
    }
}

/// A live subscription: the sink it feeds follows ZooKeeper until this is dropped or closed.
///
/// Dropping it stops following and removes the consumer node (in the background); [`Subscription::close`]
/// does the same and waits for it.
#[derive(Debug)]
pub struct Subscription {
    status: watch::Receiver<SubscriptionStatus>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl Subscription {
    pub(crate) fn new(
        status: watch::Receiver<SubscriptionStatus>,
        stop: oneshot::Sender<()>,
        task: JoinHandle<()>,
    ) -> Subscription {
        Subscription {
            status,
            stop: Some(stop),
            task: Some(task),
        }
    }

    /// A receiver of status updates; `changed()` wakes on every update.
    pub fn status(&self) -> watch::Receiver<SubscriptionStatus> {
        self.status.clone()
    }

    /// Waits until `condition` holds for the status, at most `timeout`; returns the status that satisfied
    /// it, or `None` on timeout.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        condition: impl FnMut(&SubscriptionStatus) -> bool,
    ) -> Option<SubscriptionStatus> {
        let mut status = self.status.clone();
        let seen = match tokio::time::timeout(timeout, status.wait_for(condition)).await {
            Ok(Ok(seen)) => Some(seen.clone()),
            _ => None,
        };
        seen
    }

    /// Unsubscribes, removes the consumer node and waits for the background task to end.
    pub async fn close(mut self) {
        self.signal_stop();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    fn signal_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.signal_stop();
    }
}
