//! One reference attached to each of its registries: a task per registry that subscribes (into a
//! directory of its own, which prunes after removals) and follows the router rules, retried in the
//! background under `check=false`.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use rudder_cluster::directory::Directory;
use rudder_cluster::router::RouterChain;
use rudder_cluster::zone_aware::RegistryChoice;
use rudder_common::discovery::CallShare;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::config_center::RuleWatch;
use rudder_registry::{
    ConsumerSpec, Registry, RegistryError, Subscription, SubscriptionStatus, ViewSplit,
};

use super::pool::{lock, Lease, Registries};
use super::rules::watch_router_rules;
use super::target::{check, RegistryTarget};
use crate::error::BuildError;
use crate::prune::{Keeper, PruningSink};

/// One registry of one reference, followed in the background: the subscription feeding its directory
/// and the router rules feeding its chain. Dropping it (with the reference) stops both and releases
/// the session.
pub(crate) struct Attachment {
    task: tokio::task::JoinHandle<()>,
    /// The subscription's status channel, once subscribed.
    status: StatusSlot,
}

/// Where an attachment's task leaves its subscription's status channel.
type StatusSlot = Arc<Mutex<Option<tokio::sync::watch::Receiver<SubscriptionStatus>>>>;

impl Attachment {
    /// The subscription's status now (`None` before the first subscription succeeded).
    pub(crate) fn status(&self) -> Option<SubscriptionStatus> {
        lock(&self.status).as_ref().map(|r| r.borrow().clone())
    }

    /// A receiver of the subscription's status (`None` before the first subscription succeeded).
    pub(crate) fn status_changes(
        &self,
    ) -> Option<tokio::sync::watch::Receiver<SubscriptionStatus>> {
        lock(&self.status).clone()
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What [`attach_all`] gives a reference, per registry.
pub(crate) struct Attached {
    pub(crate) choice: RegistryChoice,
    /// The view in use.
    pub(crate) directory: Arc<Directory>,
    pub(crate) chain: Arc<RouterChain>,
    /// The interface view while a migration `proportion` shares the calls (empty otherwise), its
    /// own router chain, and the share.
    pub(crate) split: (Arc<Directory>, Arc<RouterChain>, Arc<CallShare>),
}

/// Attaches a reference to each of its registries, each into a directory and router chain of its own,
/// after checking every URL (nothing is opened when one is wrong).
///
/// Each registry is followed by a task of its own (see [`Attachment`]), all at once; this waits for
/// each one's first listing and router rules until the registry's deadline (its URL's `timeout`, else
/// the consumer's registry connect timeout). Past
/// it, with `check=true` (the default) the build fails with [`BuildError::RegistryUnreachable`]
/// naming the registry, and what was attached is dropped; with `check=false` it goes on, and the
/// providers arrive when the registry answers.
pub(crate) async fn attach_all(
    registries: &Registries,
    keeper: &Arc<dyn Keeper>,
    urls: &[String],
    consumer_url: &DubboUrl,
) -> Result<(Vec<Attached>, Vec<Attachment>), BuildError> {
    let check = check(consumer_url)?;
    let targets = urls
        .iter()
        .map(|url| RegistryTarget::parse(url))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, target) in targets.iter().enumerate() {
        if targets[..i].iter().any(|t| t.identity == target.identity) {
            return Err(BuildError::BadParameter(format!(
                "registry {} is given twice (one subscription per registry)",
                target.choice.label()
            )));
        }
    }
    let started = tokio::time::Instant::now();
    let mut attached = Vec::with_capacity(targets.len());
    let mut attachments = Vec::with_capacity(targets.len());
    let mut waits = Vec::with_capacity(targets.len());
    for target in targets {
        let (registry, leases) = registries.governed(&target)?;
        let directory = Arc::new(Directory::sorted(keeper.statistics()));
        // Tracked before any update arrives, so a removal never prunes this directory's providers.
        keeper.track(&directory);
        let chain = Arc::new(RouterChain::new(consumer_url.clone()));
        let split_directory = Arc::new(Directory::sorted(keeper.statistics()));
        keeper.track(&split_directory);
        let split_chain = Arc::new(RouterChain::new(consumer_url.clone()));
        let share = Arc::new(CallShare::default());
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let status = StatusSlot::default();
        let follow = Follow {
            status: Arc::clone(&status),
            registries: registries.clone(),
            registry: registry.clone(),
            leases,
            label: target.choice.label().to_owned(),
            servers: target.servers.clone(),
            consumer_url: consumer_url.clone(),
            sink: PruningSink::new(Arc::clone(&directory), keeper),
            split: ViewSplit {
                sink: Arc::new(PruningSink::new(Arc::clone(&split_directory), keeper)),
                share: Arc::clone(&share),
            },
            chains: vec![Arc::downgrade(&chain), Arc::downgrade(&split_chain)],
            check,
        };
        attachments.push(Attachment {
            task: tokio::spawn(follow.run(done_tx)),
            status,
        });
        attached.push(Attached {
            choice: target.choice.clone(),
            directory,
            chain,
            split: (split_directory, split_chain, share),
        });
        waits.push((target, registry, done_rx));
    }
    for (target, registry, done) in waits {
        let waited = registries.options_for(&target).connect_timeout();
        let deadline = started + waited;
        let first = tokio::time::timeout_at(deadline, done);
        // With check=true, a registry that cannot be one (nothing listens, not ZooKeeper, the
        // credentials refused) fails the build as soon as that is known, not at the deadline.
        let verdict = async {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match registry.wait_connected(left).await {
                Err(error) if is_verdict(&error) => Some(error),
                _ => None,
            }
        };
        let outcome = tokio::select! {
            outcome = first => outcome,
            Some(error) = verdict, if check => return Err(BuildError::Registry(error)),
        };
        match outcome {
            Ok(Ok(Ok(()))) => {}
            Ok(Ok(Err(error))) => return Err(error),
            // The task ended without a word: the consumer was shut down meanwhile.
            Ok(Err(_)) => return Err(BuildError::ShutDown),
            Err(_) if check => {
                let source = registry.unreachable_error(waited);
                return Err(BuildError::RegistryUnreachable {
                    registry: target.choice.label().to_owned(),
                    waited,
                    source,
                });
            }
            Err(_) => tracing::warn!(
                registry = %target.choice.label(),
                ?waited,
                "registry not ready; building without its providers (check=false), they arrive when it answers"
            ),
        }
    }
    Ok((attached, attachments))
}

/// Whether `error` says the registry will not answer however long the build waits.
fn is_verdict(error: &RegistryError) -> bool {
    matches!(
        error,
        RegistryError::Refused { .. }
            | RegistryError::NotZookeeper { .. }
            | RegistryError::AuthFailed { .. }
            | RegistryError::Tls { .. }
    )
}

/// Everything one [`Attachment`] task needs.
struct Follow {
    status: StatusSlot,
    registries: Registries,
    registry: Arc<dyn Registry>,
    leases: Vec<Lease>,
    label: String,
    /// The registry's servers, the subscription's metric label.
    servers: String,
    consumer_url: DubboUrl,
    sink: PruningSink,
    /// The interface view's second list, while a migration `proportion` shares the calls.
    split: ViewSplit,
    /// The router chains of both lists: the same rules route each.
    chains: Vec<Weak<RouterChain>>,
    check: bool,
}

impl Follow {
    /// Subscribes and follows the router rules; reports the first outcome on `done`, then holds the
    /// subscription and the rule watch until aborted (the reference dropped). With `check=false`, a
    /// failure is retried with backoff instead of reported.
    async fn run(self, done: tokio::sync::oneshot::Sender<Result<(), BuildError>>) {
        let _leases = &self.leases;
        let mut done = Some(done);
        let mut failures: u32 = 0;
        loop {
            match self.attach_once().await {
                Ok(held) => {
                    if let Some(done) = done.take() {
                        let _ = done.send(Ok(()));
                    } else {
                        tracing::info!(registry = %self.label, "registry attached");
                    }
                    let _held = held;
                    std::future::pending::<()>().await;
                }
                Err(_) if self.registry.is_closed() => return,
                Err(error) if self.check => {
                    if let Some(done) = done.take() {
                        let _ = done.send(Err(error));
                    }
                    return;
                }
                Err(error) => {
                    let delay = RETRY
                        .saturating_mul(2u32.saturating_pow(failures.min(6)))
                        .min(MAX_RETRY);
                    failures = failures.saturating_add(1);
                    tracing::warn!(registry = %self.label, error = &error as &dyn std::error::Error, retry_in = ?delay, "registry subscription failed (check=false); retrying");
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    async fn attach_once(&self) -> Result<(Subscription, Option<RuleWatch>), BuildError> {
        let subscription = subscribe(
            &*self.registry,
            &self.consumer_url,
            self.sink.clone(),
            self.split.clone(),
        )
        .await?;
        *lock(&self.status) = Some(subscription.status());
        #[cfg(feature = "metrics")]
        self.registries.subscriptions().watch(
            &self.servers,
            self.consumer_url.service_interface(),
            subscription.status(),
        );
        #[cfg(not(feature = "metrics"))]
        let _ = (&self.registries, &self.servers);
        if self.chains.iter().all(|c| c.strong_count() == 0) {
            // The reference is gone already.
            return Ok((subscription, None));
        }
        let rules = watch_router_rules(
            &*self.registry,
            &self.consumer_url,
            self.sink.directory(),
            self.chains.clone(),
        )
        .await?;
        Ok((subscription, Some(rules)))
    }
}

/// First pause between retries of a failed `check=false` subscription, and the longest.
const RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Subscribes `sink` to the providers `consumer` asks for in `registry`; returns after the first
/// listing.
async fn subscribe(
    registry: &dyn Registry,
    consumer: &DubboUrl,
    sink: PruningSink,
    split: ViewSplit,
) -> Result<Subscription, BuildError> {
    let mut spec = ConsumerSpec::new(consumer.service_interface());
    if let Some(version) = consumer.parameter("version").filter(|v| !v.is_empty()) {
        spec = spec.version(version);
    }
    if let Some(group) = consumer.parameter("group").filter(|g| !g.is_empty()) {
        spec = spec.group(group);
    }
    if let Some(protocol) = consumer.parameter("protocol").filter(|p| !p.is_empty()) {
        spec = spec.protocol(protocol);
    } else if cfg!(not(feature = "triple")) {
        // Without Triple support a tri:// provider could only fail its calls.
        spec = spec.protocol("dubbo");
    }
    if let Some(application) = consumer.parameter("application").filter(|a| !a.is_empty()) {
        spec = spec.application(application);
    }
    spec = spec.parameters(ConsumerParams::new(consumer));
    // Registered under the host the consumer URL (and so every routing rule) carries.
    spec.host = Some(consumer.host().to_owned());
    Ok(registry
        .subscribe(spec, Arc::new(sink), Some(split))
        .await?)
}
