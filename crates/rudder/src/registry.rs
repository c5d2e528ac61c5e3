//! Registry wiring (feature `zookeeper`): one session per registry address, shared by a consumer's
//! references; one subscription per reference and registry.
//!
//! A registry URL may also say how a reference with several registries chooses among them
//! (`zookeeper://h:p?zone=hz&weight=300&preferred=true`, see [`rudder_cluster::zone_aware`]). Those
//! parameters are read here and stripped before the URL opens a session, so they never make two
//! sessions of one ensemble.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rudder_cluster::directory::Directory;
use rudder_cluster::router::{self, RouterChain};
use rudder_cluster::zone_aware::{RegistryChoice, REGISTRY_CHOICE_KEYS};
use rudder_common::discovery::{
    CallShare, ProviderSink, ProviderUpdate, RuleKey, RuleSink, UpdateOutcome,
};
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::config_center::RuleWatch;
use rudder_registry::{
    ConsumerSpec, MetadataFetcher, RegistryAddress, RegistryOptions, Subscription, ViewSplit,
    ZookeeperRegistry,
};

use crate::consumer::ConsumerInner;
use crate::error::BuildError;

/// The registry sessions of one consumer, by address. Cheap to clone (one shared state).
///
/// Sessions are opened on first use and shared by every reference naming the same servers, root and
/// credentials. Looking one up takes a plain mutex for a map lookup, never across I/O: a session is
/// connected in the background by its own connector ([`ZookeeperRegistry::open`]), so a build that
/// waits for a registry that is down never delays builds that use other registries.
///
/// A session no reference uses any more is closed after [`Registries::idle`] (the consumer's
/// [`ConsumerBuilder::registry_idle_timeout`](crate::ConsumerBuilder::registry_idle_timeout), 30 s by
/// default), unless a reference takes it up again first.
#[derive(Clone)]
pub(crate) struct Registries {
    shared: Arc<Shared>,
}

struct Shared {
    open: Mutex<Open>,
    /// Where governance rules are read, when not from each registry itself.
    config_center: Option<String>,
    /// How long an unused session stays open.
    idle: Duration,
    /// Connect timeout and retry pacing of every session (a registry URL's `timeout` and `session`
    /// override them for that registry).
    options: RegistryOptions,
    next_generation: AtomicU64,
    /// Asks instances for their MetadataInfo (application-level discovery), through the consumer's
    /// own dubbo:// client.
    metadata: Arc<dyn MetadataFetcher>,
    /// The status channels of live subscriptions, for the metrics.
    #[cfg(feature = "metrics")]
    watched: Mutex<Vec<Watched>>,
    #[cfg(feature = "metrics")]
    next_id: AtomicU64,
}

/// The sessions by key, and whether [`Registries::close_all`] has run (nothing opens after it).
#[derive(Default)]
struct Open {
    entries: HashMap<String, Entry>,
    closed: bool,
}

/// One open session and how many leases hold it.
struct Entry {
    registry: ZookeeperRegistry,
    users: usize,
    /// Tells this entry from a later one under the same key.
    generation: u64,
    /// Unused past the idle timeout and being closed: not handed out again.
    closing: bool,
}

/// One user's hold on a session (one per reference and registry, plus one on the config center);
/// the last one dropped starts the idle timeout.
pub(crate) struct Lease {
    shared: Weak<Shared>,
    key: String,
    generation: u64,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(shared) = self.shared.upgrade() {
            Shared::release(&shared, &self.key, self.generation);
        }
    }
}

/// One subscription's labels and status channel; its sender closes when the subscription ends.
#[cfg(feature = "metrics")]
struct Watched {
    id: u64,
    registry: String,
    service: String,
    status: tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>,
}

/// One registry of one reference, followed in the background: the subscription feeding its directory
/// and the router rules feeding its chain. Dropping it (with the reference) stops both and releases
/// the session.
pub(crate) struct Attachment {
    task: tokio::task::JoinHandle<()>,
    /// The subscription's status channel, once subscribed.
    status: StatusSlot,
}

/// Where an attachment's task leaves its subscription's status channel.
type StatusSlot =
    Arc<Mutex<Option<tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>>>>;

impl Attachment {
    /// The subscription's status now (`None` before the first subscription succeeded).
    pub(crate) fn status(&self) -> Option<rudder_registry::SubscriptionStatus> {
        lock(&self.status).as_ref().map(|r| r.borrow().clone())
    }

    /// A receiver of the subscription's status (`None` before the first subscription succeeded).
    pub(crate) fn status_changes(
        &self,
    ) -> Option<tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>> {
        lock(&self.status).clone()
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One registry URL as a reference reads it: the URL its session is opened with, and how the registry
/// is chosen among several (`preferred`, `zone`, `weight`, stripped from the session URL). Public only
/// through `rudder::internals` (the CLI reads registry URLs as references do).
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
pub struct RegistryTarget {
    /// The registry URL without the choice parameters.
    pub(crate) session_url: String,
    /// `preferred`, `zone` and `weight`, labelled with the address (no password).
    pub(crate) choice: RegistryChoice,
    /// The session this registry uses: two targets with one key are the same registry.
    pub(crate) session_key: String,
    /// The URL's `timeout` (connect, and the build's deadline) and `session` (milliseconds, as
    /// Dubbo's registry URL takes them), over the consumer's registry options.
    pub(crate) timeout: Option<Duration>,
    pub(crate) session: Option<Duration>,
}

#[cfg_attr(not(feature = "internals"), allow(unreachable_pub))]
impl RegistryTarget {
    /// Reads a registry URL as [`ReferenceBuilder::registry`](crate::ReferenceBuilder::registry) takes it.
    ///
    /// # Errors
    /// [`BuildError::Registry`] (`BadRegistryUrl`) for a URL that names no ZooKeeper,
    /// [`BuildError::BadParameter`] for a
    /// `preferred` or `weight` of the wrong form.
    pub fn parse(url: &str) -> Result<RegistryTarget, BuildError> {
        let url = url.trim();
        let (head, query) = split_query(url);
        let mut kept: Vec<&str> = Vec::new();
        let mut choice_parameters: Vec<(&str, &str)> = Vec::new();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            if REGISTRY_CHOICE_KEYS.contains(&key.trim()) {
                choice_parameters.push((key.trim(), value));
            } else {
                kept.push(part);
            }
        }
        let session_url = if kept.is_empty() {
            head.to_owned()
        } else {
            format!("{head}?{}", kept.join("&"))
        };
        let address = RegistryAddress::parse(&session_url)?;
        let choice = RegistryChoice::from_parameters(&address.to_string(), choice_parameters)
            .map_err(|e| BuildError::BadParameter(e.to_string()))?;
        Ok(RegistryTarget {
            session_key: session_key(&address, &session_url),
            timeout: registry_millis(query, "timeout")?,
            session: registry_millis(query, "session")?,
            session_url,
            choice,
        })
    }

    /// The registry URL without the choice parameters: what opens the ZooKeeper session.
    #[cfg(feature = "internals")]
    pub fn session_url(&self) -> &str {
        &self.session_url
    }

    /// How this registry is chosen among several, labelled with its address (never its password).
    #[cfg(feature = "internals")]
    pub fn choice(&self) -> &RegistryChoice {
        &self.choice
    }
}

/// The registry URL parameter `key` (Dubbo's `timeout` or `session`), in milliseconds.
fn registry_millis(query: &str, key: &str) -> Result<Option<Duration>, BuildError> {
    let Some(value) = query
        .split('&')
        .filter_map(|part| part.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
    else {
        return Ok(None);
    };
    match value.parse::<u64>() {
        Ok(millis) if millis > 0 => Ok(Some(Duration::from_millis(millis))),
        _ => Err(BuildError::BadParameter(format!(
            "registry {key}={value:?} is not a positive number of milliseconds"
        ))),
    }
}

/// `(everything before the query, the query)`. The query starts at the first `?` after the credentials,
/// which run to the last `@` before the query's first `=` (the rule of [`RegistryAddress::parse`], so a
/// password holding `?` is not taken for a query).
fn split_query(url: &str) -> (&str, &str) {
    let first_key_end = url
        .find('?')
        .and_then(|q| url[q..].find('=').map(|e| q + e))
        .unwrap_or(url.len());
    let host_start = url[..first_key_end].rfind('@').map_or(0, |at| at + 1);
    match url[host_start..].find('?') {
        Some(q) => (&url[..host_start + q], &url[host_start + q + 1..]),
        None => (url, ""),
    }
}

/// What identifies one session: the servers, the root and the credentials (two references naming the
/// same servers in another order, or with other URL parameters, share it).
fn session_key(address: &RegistryAddress, url: &str) -> String {
    let mut hosts: Vec<&str> = address.hosts().iter().map(String::as_str).collect();
    hosts.sort_unstable();
    // Credentials are part of the identity but never of anything printed: hash-free, kept in memory only.
    let credentials = DubboUrl::parse_any(url)
        .ok()
        .and_then(|u| {
            u.username()
                .map(|user| format!("{user}:{}", u.password().unwrap_or("")))
        })
        .unwrap_or_default();
    format!("{}|{}|{credentials}", hosts.join(","), address.root())
}

impl Registries {
    /// Sessions that read governance rules from `config_center` (`None`: each registry's own), and
    /// close `idle` after their last user is gone.
    pub(crate) fn new(
        config_center: Option<String>,
        idle: Duration,
        options: RegistryOptions,
        metadata: Arc<dyn MetadataFetcher>,
    ) -> Registries {
        Registries {
            shared: Arc::new(Shared {
                open: Mutex::new(Open::default()),
                config_center,
                idle,
                options,
                metadata,
                next_generation: AtomicU64::new(0),
                #[cfg(feature = "metrics")]
                watched: Mutex::new(Vec::new()),
                #[cfg(feature = "metrics")]
                next_id: AtomicU64::new(0),
            }),
        }
    }

    /// The session of `target`, reading its rules from the config center when one is set, with the
    /// leases that keep both open. Never waits: the session connects in the background.
    pub(crate) fn governed(
        &self,
        target: &RegistryTarget,
    ) -> Result<(ZookeeperRegistry, Vec<Lease>), BuildError> {
        let (registry, lease) = self.lease(&target.session_url, self.options_for(target))?;
        match &self.shared.config_center {
            Some(url) => {
                let config_center = RegistryTarget::parse(url)?;
                let (center, center_lease) =
                    self.lease(&config_center.session_url, self.options_for(&config_center))?;
                Ok((
                    registry.with_config_center(&center),
                    vec![lease, center_lease],
                ))
            }
            None => Ok((registry, vec![lease])),
        }
    }

    /// The consumer's registry options with `target`'s own `timeout` and `session`.
    pub(crate) fn options_for(&self, target: &RegistryTarget) -> RegistryOptions {
        let mut options = self.shared.options;
        if let Some(timeout) = target.timeout {
            options = options.with_connect_timeout(timeout);
        }
        if let Some(session) = target.session {
            options = options.with_session_timeout(session);
        }
        options
    }

    /// The session for `url` and a lease on it; a new one is opened (in the background) on first use.
    fn lease(
        &self,
        url: &str,
        options: RegistryOptions,
    ) -> Result<(ZookeeperRegistry, Lease), BuildError> {
        let address = RegistryAddress::parse(url)?;
        let key = session_key(&address, url);
        let mut open = lock(&self.shared.open);
        if open.closed {
            return Err(BuildError::ShutDown);
        }
        let entry = match open.entries.get_mut(&key) {
            Some(entry) if !entry.closing => entry,
            _ => {
                let registry = ZookeeperRegistry::open(url, options)?
                    .with_metadata_fetcher(Arc::clone(&self.shared.metadata));
                let generation = self.shared.next_generation.fetch_add(1, Ordering::Relaxed);
                // A closing entry under this key keeps closing on its own (its task owns a clone).
                open.entries.insert(
                    key.clone(),
                    Entry {
                        registry,
                        users: 0,
                        generation,
                        closing: false,
                    },
                );
                open.entries.get_mut(&key).expect("just inserted")
            }
        };
        entry.users += 1;
        let lease = Lease {
            shared: Arc::downgrade(&self.shared),
            key,
            generation: entry.generation,
        };
        Ok((entry.registry.clone(), lease))
    }

    /// Sessions open (those closing after their idle timeout not counted).
    pub(crate) fn len(&self) -> usize {
        lock(&self.shared.open)
            .entries
            .values()
            .filter(|e| !e.closing)
            .count()
    }

    /// Closes every session, waiting for their tasks to end (see `ZookeeperRegistry::close`); none
    /// opens afterwards.
    pub(crate) async fn close_all(&self) {
        let open: Vec<ZookeeperRegistry> = {
            let mut open = lock(&self.shared.open);
            open.closed = true;
            open.entries.drain().map(|(_, e)| e.registry).collect()
        };
        for registry in open {
            registry.close().await;
        }
    }
}

impl Shared {
    /// One lease fewer on `key`; the last one starts the idle timeout.
    fn release(shared: &Arc<Shared>, key: &str, generation: u64) {
        let mut open = lock(&shared.open);
        let Some(entry) = open
            .entries
            .get_mut(key)
            .filter(|e| e.generation == generation)
        else {
            return;
        };
        entry.users = entry.users.saturating_sub(1);
        if entry.users > 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // No runtime to time the grace on: close now (dropping the last handle ends the session).
            open.entries.remove(key);
            return;
        };
        let (weak, key, idle) = (Arc::downgrade(shared), key.to_owned(), shared.idle);
        drop(runtime.spawn(async move {
            tokio::time::sleep(idle).await;
            let Some(shared) = weak.upgrade() else {
                return;
            };
            let registry = {
                let mut open = lock(&shared.open);
                match open.entries.get_mut(&key) {
                    Some(e) if e.generation == generation && e.users == 0 && !e.closing => {
                        e.closing = true;
                        e.registry.clone()
                    }
                    _ => return,
                }
            };
            tracing::debug!(registry = %registry.address(), "closing a registry session no reference uses");
            registry.close().await;
            let mut open = lock(&shared.open);
            if open
                .entries
                .get(&key)
                .is_some_and(|e| e.generation == generation)
            {
                open.entries.remove(&key);
            }
        }));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn registry_error(error: rudder_registry::RegistryError) -> BuildError {
    BuildError::Registry(error)
}

/// Subscribes `sink` to the providers `consumer` asks for in `registry`; returns after the first
/// listing.
async fn subscribe(
    registry: &ZookeeperRegistry,
    consumer: &DubboUrl,
    sink: impl ProviderSink,
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
    registry
        .subscribe_split(spec, sink, Some(split))
        .await
        .map_err(registry_error)
}

/// Whether a build fails when a registry gives no session and first listing within its deadline
/// (Dubbo's reference `check`, default `true`); `check=false` builds without them, and the providers
/// arrive when the registry answers.
pub(crate) fn check(consumer_url: &DubboUrl) -> Result<bool, BuildError> {
    match consumer_url.parameter("check").map(str::trim) {
        None | Some("") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
        Some(value) => Err(BuildError::BadParameter(format!(
            "check={value:?} is not true or false"
        ))),
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
    consumer: &Arc<ConsumerInner>,
    urls: &[String],
    consumer_url: &DubboUrl,
) -> Result<(Vec<Attached>, Vec<Attachment>), BuildError> {
    let check = check(consumer_url)?;
    let targets = urls
        .iter()
        .map(|url| RegistryTarget::parse(url))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, target) in targets.iter().enumerate() {
        if targets[..i]
            .iter()
            .any(|t| t.session_key == target.session_key)
        {
            return Err(BuildError::BadParameter(format!(
                "registry {} is given twice (one subscription per registry)",
                target.choice.label()
            )));
        }
    }
    let registries = consumer.registries();
    let started = tokio::time::Instant::now();
    let mut attached = Vec::with_capacity(targets.len());
    let mut attachments = Vec::with_capacity(targets.len());
    let mut waits = Vec::with_capacity(targets.len());
    for target in targets {
        let (registry, leases) = registries.governed(&target)?;
        let directory = Arc::new(Directory::sorted(consumer.statistics()));
        // Tracked before any update arrives, so a removal never prunes this directory's providers.
        consumer.track(&directory);
        let chain = Arc::new(RouterChain::new(consumer_url.clone()));
        let split_directory = Arc::new(Directory::sorted(consumer.statistics()));
        consumer.track(&split_directory);
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
            session_url: target.session_url.clone(),
            consumer_url: consumer_url.clone(),
            sink: PruningSink {
                directory: Arc::clone(&directory),
                consumer: Arc::downgrade(consumer),
            },
            split: ViewSplit {
                sink: Arc::new(PruningSink {
                    directory: Arc::clone(&split_directory),
                    consumer: Arc::downgrade(consumer),
                }),
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
        match tokio::time::timeout_at(deadline, done).await {
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

/// Everything one [`Attachment`] task needs.
struct Follow {
    status: StatusSlot,
    registries: Registries,
    registry: ZookeeperRegistry,
    leases: Vec<Lease>,
    label: String,
    session_url: String,
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
            &self.registry,
            &self.consumer_url,
            self.sink.clone(),
            self.split.clone(),
        )
        .await?;
        *lock(&self.status) = Some(subscription.status());
        #[cfg(feature = "metrics")]
        self.registries.watch(
            &self.session_url,
            self.consumer_url.service_interface(),
            subscription.status(),
        );
        #[cfg(not(feature = "metrics"))]
        let _ = (&self.registries, &self.session_url);
        if self.chains.iter().all(|c| c.strong_count() == 0) {
            // The reference is gone already.
            return Ok((subscription, None));
        }
        let rules = watch_router_rules(
            &self.registry,
            &self.consumer_url,
            &self.sink.directory,
            self.chains.clone(),
        )
        .await?;
        Ok((subscription, Some(rules)))
    }
}

/// First pause between retries of a failed `check=false` subscription, and the longest.
const RETRY: Duration = Duration::from_millis(200);
const MAX_RETRY: Duration = Duration::from_secs(10);

/// Follows the router rules of one reference in the config center of `registry` and sets them on
/// `chains` (one per provider list): the service's condition rule, the consumer application's condition rule, and the tag and
/// condition rules of every provider application listed in `directory` now.
///
/// Provider applications are read once, when the reference is attached (Dubbo re-subscribes when the
/// providers' application changes; a reference whose providers move to another application must be
/// rebuilt to follow that application's tag rule).
async fn watch_router_rules(
    registry: &ZookeeperRegistry,
    consumer_url: &DubboUrl,
    directory: &Directory,
    chains: Vec<Weak<RouterChain>>,
) -> Result<RuleWatch, BuildError> {
    let providers: Vec<DubboUrl> = directory
        .snapshot()
        .providers()
        .iter()
        .map(|p| p.url().clone())
        .collect();
    let slots = rule_slots(consumer_url, &providers);
    let keys: Vec<RuleKey> = slots
        .keys()
        .map(|name| RuleKey::new(name.clone()))
        .collect();
    let sink = RouterRules { chains, slots };
    Ok(registry.watch_rules(keys, sink).await?)
}

/// The config-center keys of the router rules for a consumer of `consumer_url` over `providers`, each
/// with the chain slots it fills.
fn rule_slots(
    consumer_url: &DubboUrl,
    providers: &[DubboUrl],
) -> HashMap<String, Vec<router::RuleKey>> {
    let interface = consumer_url.service_interface();
    let version = consumer_url.parameter("version").filter(|v| !v.is_empty());
    let group = consumer_url.parameter("group").filter(|g| !g.is_empty());
    let mut slots: HashMap<String, Vec<router::RuleKey>> = HashMap::new();
    let mut add = |key: router::RuleKey| slots.entry(key.name.clone()).or_default().push(key);
    add(router::RuleKey::service_condition(
        interface,
        version.unwrap_or(""),
        group.unwrap_or(""),
    ));
    if let Some(app) = consumer_url
        .parameter("application")
        .filter(|a| !a.is_empty())
    {
        add(router::RuleKey::app_condition(app));
    }
    let mut provider_apps: Vec<&str> = providers
        .iter()
        .filter_map(|p| p.parameter("application"))
        .filter(|a| !a.is_empty())
        .collect();
    provider_apps.sort_unstable();
    provider_apps.dedup();
    let own_app = consumer_url.parameter("application").unwrap_or("");
    for app in provider_apps {
        add(router::RuleKey::tag(app));
        // Dubbo's ProviderAppStateRouter skips the consumer's own application: its
        // `<app>.condition-router` is the application rule already.
        if app != own_app {
            add(router::RuleKey::provider_app_condition(app));
        }
    }
    slots
}

/// The router rules the config center of the registry at `registry_url` holds now, for a consumer of
/// `consumer_url` over `providers`, set on a new chain: what a reference would route by at this
/// moment. For tools (`rudder providers --explain`, `rudder simulate`); a reference follows the rules
/// live by itself.
///
/// # Errors
/// [`BuildError::Registry`] when the registry cannot be reached or read.
#[cfg(feature = "internals")]
pub async fn load_router_rules(
    registry_url: &str,
    consumer_url: &DubboUrl,
    providers: &[DubboUrl],
) -> Result<Arc<RouterChain>, BuildError> {
    let registry = ZookeeperRegistry::connect(registry_url, RegistryOptions::default()).await?;
    let chain = Arc::new(RouterChain::new(consumer_url.clone()));
    let slots = rule_slots(consumer_url, providers);
    let keys: Vec<RuleKey> = slots
        .keys()
        .map(|name| RuleKey::new(name.clone()))
        .collect();
    let sink = RouterRules {
        chains: vec![Arc::downgrade(&chain)],
        slots,
    };
    // The current texts reach the sink before `watch_rules` returns.
    let watched = registry.watch_rules(keys, sink).await;
    // Closing the registry ends the watch's task too (and waits for it).
    registry.close().await;
    watched?.close().await;
    Ok(chain)
}

/// Hands rule texts from the config center to a reference's router chains.
struct RouterRules {
    chains: Vec<Weak<RouterChain>>,
    /// Config-center key → the chain keys it fills.
    slots: HashMap<String, Vec<router::RuleKey>>,
}

impl RuleSink for RouterRules {
    fn rule(&self, key: &RuleKey, text: Option<&str>) {
        for (i, chain) in self.chains.iter().filter_map(Weak::upgrade).enumerate() {
            for slot in self.slots.get(key.as_str()).into_iter().flatten() {
                // A bad rule is reported by the chain, which keeps the last good one: once.
                if let Err(error) = chain.set_rule(slot.clone(), text) {
                    if i == 0 {
                        tracing::warn!(%error, "router rule not applied");
                    }
                }
            }
        }
    }
}

/// One registry's directory of one reference: every update goes to the directory, and a provider that
/// left may free statistics and connections.
#[derive(Clone)]
struct PruningSink {
    directory: Arc<Directory>,
    consumer: Weak<ConsumerInner>,
}

impl ProviderSink for PruningSink {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let mut removed = Vec::new();
        let outcome = self.directory.update_reporting(update, &mut removed);
        if let Some(consumer) = self.consumer.upgrade() {
            consumer.prune_soon(removed);
        }
        outcome
    }
}

#[cfg(feature = "metrics")]
impl Registries {
    fn watch(
        &self,
        url: &str,
        service: &str,
        status: tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>,
    ) {
        // The servers only: the URL may carry credentials.
        let registry = RegistryAddress::parse(url)
            .map(|a| a.hosts().join(","))
            .unwrap_or_default();
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut watched = lock(&self.shared.watched);
        // Forget ended subscriptions here too, so the list stays bounded without scrapes.
        watched.retain(|w| w.status.has_changed().is_ok());
        watched.push(Watched {
            id,
            registry,
            service: service.to_owned(),
            status,
        });
    }

    /// The status of every live subscription, in subscription order.
    pub(crate) fn samples(&self) -> Vec<crate::metrics::SubscriptionSample> {
        let mut watched = lock(&self.shared.watched);
        watched.retain(|w| w.status.has_changed().is_ok());
        watched
            .iter()
            .map(|w| {
                let status = w.status.borrow();
                crate::metrics::SubscriptionSample {
                    id: w.id,
                    registry: w.registry.clone(),
                    service: w.service.clone(),
                    generation: status.generation,
                    listings: status.listings,
                    providers: status.providers as u64,
                    configurators: status.configurators as u64,
                    malformed: status.malformed,
                    rejected: status.rejected,
                    connected: status.connected,
                    sessions: status.sessions,
                    registered: status.registered,
                }
            })
            .collect()
    }
}

impl fmt::Debug for Registries {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registries")
            .field("open", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_parameters_are_read_and_kept_out_of_the_session_url() {
        let target = RegistryTarget::parse(
            "zookeeper://10.0.0.1:2181?zone=hz&backup=10.0.0.2:2181&weight=300&preferred=true",
        )
        .unwrap();
        assert_eq!(
            target.session_url,
            "zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181"
        );
        assert_eq!(
            target.choice,
            RegistryChoice::new("zookeeper://10.0.0.1:2181,10.0.0.2:2181/dubbo")
                .zone("hz")
                .weight(300)
                .preferred(true)
        );
        let plain =
            RegistryTarget::parse("zookeeper://10.0.0.2:2181?backup=10.0.0.1:2181").unwrap();
        assert_eq!(
            plain.session_key, target.session_key,
            "one ensemble, one session"
        );
        assert_eq!(
            RegistryTarget::parse("zookeeper://10.0.0.1:2181?zone=sh")
                .unwrap()
                .session_url,
            "zookeeper://10.0.0.1:2181"
        );
    }

    #[test]
    fn a_password_with_a_question_mark_is_not_a_query() {
        let target = RegistryTarget::parse("zookeeper://app:a?b@10.0.0.1:2181?zone=hz").unwrap();
        assert_eq!(target.session_url, "zookeeper://app:a?b@10.0.0.1:2181");
        assert_eq!(target.choice.zone_name(), Some("hz"));
        assert!(
            !target.choice.label().contains("a?b"),
            "no password in the label"
        );
    }

    #[test]
    fn bad_choice_parameters_are_refused_by_name() {
        let error = RegistryTarget::parse("zookeeper://10.0.0.1:2181?weight=heavy").unwrap_err();
        assert!(error.to_string().contains("weight=\"heavy\""), "{error}");
    }
}
