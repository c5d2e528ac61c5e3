//! Registry wiring (feature `zookeeper`): one session per registry address, shared by a consumer's
//! references; one subscription per reference and registry.
//!
//! A registry URL may also say how a reference with several registries chooses among them
//! (`zookeeper://h:p?zone=hz&weight=300&preferred=true`, see [`rudder_cluster::zone_aware`]). Those
//! parameters are read here and stripped before the URL opens a session, so they never make two
//! sessions of one ensemble.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Weak};

use rudder_cluster::directory::Directory;
use rudder_cluster::router::{self, RouterChain};
use rudder_cluster::zone_aware::{RegistryChoice, REGISTRY_CHOICE_KEYS};
use rudder_common::discovery::{ProviderSink, ProviderUpdate, RuleKey, RuleSink, UpdateOutcome};
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;
use rudder_registry::config_center::RuleWatch;
use rudder_registry::{
    ConsumerSpec, RegistryAddress, RegistryOptions, Subscription, ZookeeperRegistry,
};

use crate::consumer::ConsumerInner;
use crate::error::BuildError;

/// The registry sessions of one consumer, by address.
#[derive(Default)]
pub(crate) struct Registries {
    open: tokio::sync::Mutex<HashMap<String, ZookeeperRegistry>>,
    /// Where governance rules are read, when not from each registry itself.
    config_center: Option<String>,
    /// Connect timeout and retry pacing of every session.
    options: RegistryOptions,
    /// How many are open, readable without the async lock.
    count: std::sync::atomic::AtomicUsize,
    /// The status channels of live subscriptions, for the metrics.
    #[cfg(feature = "metrics")]
    watched: std::sync::Mutex<Vec<Watched>>,
    #[cfg(feature = "metrics")]
    next_id: std::sync::atomic::AtomicU64,
}

/// One subscription's labels and status channel; its sender closes when the subscription ends.
#[cfg(feature = "metrics")]
struct Watched {
    id: u64,
    registry: String,
    service: String,
    status: tokio::sync::watch::Receiver<rudder_registry::SubscriptionStatus>,
}

/// Keeps a registry subscription alive for as long as the reference lives; dropping it unsubscribes and
/// removes the consumer node (the session stays, shared with the consumer's other references).
#[derive(Debug)]
pub(crate) struct Registration {
    _subscription: Subscription,
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
    /// Sessions that read governance rules from `config_center` (`None`: each registry's own).
    pub(crate) fn with_config_center(config_center: Option<String>) -> Registries {
        Registries {
            config_center,
            ..Registries::default()
        }
    }

    /// These sessions, opened with `options`.
    pub(crate) fn with_options(self, options: RegistryOptions) -> Registries {
        Registries { options, ..self }
    }

    /// The session for `url`, reading its rules from the config center when one is set.
    pub(crate) async fn governed(&self, url: &str) -> Result<ZookeeperRegistry, BuildError> {
        let registry = self.session(url).await?;
        match &self.config_center {
            Some(config_center) => {
                Ok(registry.with_config_center(&self.session(config_center).await?))
            }
            None => Ok(registry),
        }
    }

    /// The session for `url`, opened on first use.
    pub(crate) async fn session(&self, url: &str) -> Result<ZookeeperRegistry, BuildError> {
        let address = RegistryAddress::parse(url)?;
        let key = session_key(&address, url);
        let mut open = self.open.lock().await;
        if let Some(registry) = open.get(&key) {
            return Ok(registry.clone());
        }
        let registry = ZookeeperRegistry::connect(url, self.options).await?;
        open.insert(key, registry.clone());
        self.count
            .store(open.len(), std::sync::atomic::Ordering::Relaxed);
        Ok(registry)
    }

    /// Sessions open.
    pub(crate) fn len(&self) -> usize {
        self.count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Closes every session.
    pub(crate) async fn close_all(&self) {
        let open: Vec<ZookeeperRegistry> = self.open.lock().await.drain().map(|(_, r)| r).collect();
        self.count.store(0, std::sync::atomic::Ordering::Relaxed);
        for registry in open {
            registry.close().await;
        }
    }

    /// Subscribes `sink` to the providers `consumer` asks for in the registry at `url` (a
    /// [`RegistryTarget::session_url`]), and waits for the first listing.
    pub(crate) async fn subscribe(
        &self,
        url: &str,
        consumer: &DubboUrl,
        sink: impl ProviderSink,
    ) -> Result<Registration, BuildError> {
        let registry = self.governed(url).await?;
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
        spec = spec.parameters(ConsumerParams::new(consumer));
        // Registered under the host the consumer URL (and so every routing rule) carries.
        spec.host = Some(consumer.host().to_owned());
        let subscription = registry.subscribe(spec, sink).await?;
        #[cfg(feature = "metrics")]
        self.watch(url, consumer.service_interface(), subscription.status());
        Ok(Registration {
            _subscription: subscription,
        })
    }
}

/// Subscribes a reference to each of its registries, each into a directory of its own, after checking
/// every URL (nothing is opened when one is wrong). Waits for each registry's first listing; a failure
/// drops the subscriptions already made.
pub(crate) async fn subscribe_all(
    consumer: &Arc<ConsumerInner>,
    urls: &[String],
    consumer_url: &DubboUrl,
) -> Result<
    (
        Vec<(RegistryChoice, Arc<Directory>)>,
        Vec<Registration>,
        Vec<String>,
    ),
    BuildError,
> {
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
    let mut sources = Vec::with_capacity(targets.len());
    let mut registrations = Vec::with_capacity(targets.len());
    let mut session_urls = Vec::with_capacity(targets.len());
    for target in targets {
        session_urls.push(target.session_url.clone());
        let directory = Arc::new(Directory::sorted(Arc::clone(&consumer.statuses)));
        let sink = PruningSink {
            directory: Arc::clone(&directory),
            consumer: Arc::downgrade(consumer),
        };
        let registration = consumer
            .registries
            .subscribe(&target.session_url, consumer_url, sink)
            .await?;
        registrations.push(registration);
        sources.push((target.choice, directory));
    }
    Ok((sources, registrations, session_urls))
}

/// Follows the router rules of one reference in the config center of the registry at `url` and sets
/// them on `chain`: the service's condition rule, the consumer application's condition rule, and the
/// tag and condition rules of every provider application listed in `directory` now.
///
/// Provider applications are read once, when the reference is built (Dubbo re-subscribes when the
/// providers' application changes; a reference whose providers move to another application must be
/// rebuilt to follow that application's tag rule).
pub(crate) async fn watch_router_rules(
    consumer: &Arc<ConsumerInner>,
    url: &str,
    consumer_url: &DubboUrl,
    directory: &Directory,
    chain: &Arc<RouterChain>,
) -> Result<RuleWatch, BuildError> {
    let registry = consumer.registries.governed(url).await?;
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
    let sink = RouterRules {
        chain: Arc::downgrade(chain),
        slots,
    };
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
        chain: Arc::downgrade(&chain),
        slots,
    };
    // The current texts reach the sink before `watch_rules` returns.
    let watched = registry.watch_rules(keys, sink).await;
    registry.close().await;
    watched?.close().await;
    Ok(chain)
}

/// Hands rule texts from the config center to a reference's router chain.
struct RouterRules {
    chain: Weak<RouterChain>,
    /// Config-center key → the chain keys it fills.
    slots: HashMap<String, Vec<router::RuleKey>>,
}

impl RuleSink for RouterRules {
    fn rule(&self, key: &RuleKey, text: Option<&str>) {
        let Some(chain) = self.chain.upgrade() else {
            return;
        };
        for slot in self.slots.get(key.as_str()).into_iter().flatten() {
            // A bad rule is reported by the chain, which keeps the last good one.
            if let Err(error) = chain.set_rule(slot.clone(), text) {
                tracing::warn!(%error, "router rule not applied");
            }
        }
    }
}

/// One registry's directory of one reference: every update goes to the directory, and a provider that
/// left may free statistics and connections.
struct PruningSink {
    directory: Arc<Directory>,
    consumer: Weak<ConsumerInner>,
}

impl ProviderSink for PruningSink {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let outcome = self.directory.update(update);
        if outcome.removed > 0 {
            if let Some(consumer) = self.consumer.upgrade() {
                consumer.prune(&[]);
            }
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
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        let mut watched = self
            .watched
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
