//! The router chain: rules in, routed views out.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

use super::condition::ConditionRule;
use super::explain::{explain, Explanation};
use super::state::{ChainState, Parsed};
use super::table::Table;
use super::tag::TagRule;
use super::Consumer;
use crate::directory::ProviderSet;
use crate::loadbalance::MethodView;
use crate::rng::RngSource;

/// Where a rule sits in the chain, in Dubbo 3.3's order (`@Activate(order)`): tag (100), service
/// conditions (140), provider-application conditions (145), consumer-application conditions (150).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleSlot {
    /// `<provider app>.tag-router`.
    Tag,
    /// `<interface>:<version>:<group>.condition-router`.
    ServiceCondition,
    /// `<provider app>.condition-router`.
    ProviderAppCondition,
    /// `<consumer app>.condition-router`.
    AppCondition,
}

impl fmt::Display for RuleSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleSlot::Tag => "tag",
            RuleSlot::ServiceCondition => "service-condition",
            RuleSlot::ProviderAppCondition => "provider-app-condition",
            RuleSlot::AppCondition => "app-condition",
        })
    }
}

/// A rule's slot and its key in the config center (the node name under `/dubbo/config/dubbo/`).
///
/// ```
/// use rudder_cluster::router::{RuleKey, RuleSlot};
/// let key = RuleKey::service_condition("com.acme.Greeter", "1.0", "");
/// assert_eq!(key.name, "com.acme.Greeter:1.0:.condition-router");
/// assert_eq!(RuleKey::tag("demo-provider").slot, RuleSlot::Tag);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RuleKey {
    /// Where the rule applies in the chain.
    pub slot: RuleSlot,
    /// The config-center key, e.g. `demo-provider.tag-router`.
    pub name: String,
}

impl RuleKey {
    /// `<provider_app>.tag-router`.
    pub fn tag(provider_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::Tag,
            name: format!("{provider_app}.tag-router"),
        }
    }

    /// `<interface>:<version>:<group>.condition-router` (empty version and group stay empty).
    pub fn service_condition(interface: &str, version: &str, group: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::ServiceCondition,
            name: format!("{interface}:{version}:{group}.condition-router"),
        }
    }

    /// `<provider_app>.condition-router`, read by the provider-application router.
    pub fn provider_app_condition(provider_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::ProviderAppCondition,
            name: format!("{provider_app}.condition-router"),
        }
    }

    /// `<consumer_app>.condition-router`, read by the application router.
    pub fn app_condition(consumer_app: &str) -> RuleKey {
        RuleKey {
            slot: RuleSlot::AppCondition,
            name: format!("{consumer_app}.condition-router"),
        }
    }

    /// For a tag or provider-application rule, the provider application whose providers it governs:
    /// the name without its `.tag-router` / `.condition-router` suffix (the whole name when it has
    /// none). Empty for the other slots.
    ///
    /// ```
    /// use rudder_cluster::router::RuleKey;
    /// assert_eq!(RuleKey::tag("demo-provider").provider_application(), "demo-provider");
    /// assert_eq!(RuleKey::app_condition("shop").provider_application(), "");
    /// ```
    pub fn provider_application(&self) -> &str {
        let suffix = match self.slot {
            RuleSlot::Tag => ".tag-router",
            RuleSlot::ProviderAppCondition => ".condition-router",
            RuleSlot::ServiceCondition | RuleSlot::AppCondition => return "",
        };
        self.name.strip_suffix(suffix).unwrap_or(&self.name)
    }
}

/// A rule that could not be used; the chain keeps applying the last good rule of that key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("rule {} ({}) not applied, the previous one stays: {message}", key.name, key.slot)]
pub struct RuleError {
    /// The rule.
    pub key: RuleKey,
    /// What is wrong with it.
    pub message: String,
}

/// The rules as last set, by key (sorted by slot, then name).
#[derive(Debug)]
struct Rules {
    consumer: Consumer,
    rules: Vec<(RuleKey, Parsed)>,
    errors: Vec<RuleError>,
    version: u64,
}

/// The routers of one reference, between its directory and its load balancer.
///
/// Always holds the tag router (static `dubbo.tag` applies without any rule, as in Dubbo); rules add
/// dynamic tags and condition lines. Rule updates reach the next pick without a restart: picks read
/// an immutable state swapped atomically.
pub struct RouterChain {
    state: ArcSwap<ChainState>,
    table: ArcSwap<Table>,
    rules: Mutex<Rules>,
    /// The version last published, for [`RouterChain::watch`].
    changes: tokio::sync::watch::Sender<u64>,
}

impl RouterChain {
    /// A chain for the consumer `consumer_url` (its `application`, `host`, parameters and
    /// `dubbo.tag` are what rules read), with no rule yet.
    pub fn new(consumer_url: DubboUrl) -> RouterChain {
        let rules = Rules {
            consumer: Consumer::new(consumer_url),
            rules: Vec::new(),
            errors: Vec::new(),
            version: 1,
        };
        let state = Arc::new(build_state(&rules));
        RouterChain {
            table: ArcSwap::from_pointee(Table::detached(Arc::clone(&state))),
            changes: tokio::sync::watch::Sender::new(rules.version),
            state: ArcSwap::new(state),
            rules: Mutex::new(rules),
        }
    }

    /// Sets (`Some(yaml)`) or deletes (`None`) the rule stored under `key`. Rules are kept by key:
    /// the tag rules of two provider applications (`a.tag-router`, `b.tag-router`) are both in force,
    /// each for its own application's providers, and deleting one leaves the other.
    ///
    /// # Errors
    /// [`RuleError`] when the text cannot be parsed; the previous rule of that key stays in force and
    /// the error is kept for [`RouterChain::errors`] until the key next changes.
    pub fn set_rule(&self, key: RuleKey, text: Option<&str>) -> Result<(), RuleError> {
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.errors.retain(|e| e.key != key);
        let parsed = match text {
            None => None,
            Some(text) => {
                let parsed = match key.slot {
                    RuleSlot::Tag => TagRule::parse(text).map(|r| Parsed::Tag(Arc::new(r))),
                    _ => ConditionRule::parse(text).map(|r| Parsed::Condition(Arc::new(r))),
                };
                match parsed {
                    Ok(parsed) => Some(parsed),
                    Err(message) => {
                        let error = RuleError { key, message };
                        tracing::warn!(%error, "routing rule rejected");
                        rules.errors.push(error.clone());
                        return Err(error);
                    }
                }
            }
        };
        rules.rules.retain(|(k, _)| *k != key);
        if let Some(parsed) = parsed {
            rules.rules.push((key, parsed));
            rules
                .rules
                .sort_by(|(a, _), (b, _)| (a.slot, &a.name).cmp(&(b.slot, &b.name)));
        }
        self.publish(&mut rules);
        Ok(())
    }

    /// Replaces the consumer URL rules read (after a consumer-side configurator changed it).
    pub fn set_consumer(&self, consumer_url: DubboUrl) {
        let mut rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.consumer = Consumer::new(consumer_url);
        self.publish(&mut rules);
    }

    /// The rules in force, by slot and then key.
    pub fn rules(&self) -> Vec<RuleKey> {
        let rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.rules.iter().map(|(k, _)| k.clone()).collect()
    }

    /// The rules last refused, one per key at most.
    pub fn errors(&self) -> Vec<RuleError> {
        let rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        rules.errors.clone()
    }

    /// Increases with every rule or consumer change.
    pub fn version(&self) -> u64 {
        self.state.load().version
    }

    /// Notifies of every new [`RouterChain::version`] (a rule set, deleted or a consumer change in
    /// force): the receiver holds the latest version. Wait on it instead of polling, as with
    /// [`Directory::watch`](crate::directory::Directory::watch). A refused rule changes nothing, so
    /// it notifies nothing.
    ///
    /// ```
    /// use rudder_cluster::router::{RouterChain, RuleKey};
    /// use rudder_common::url::DubboUrl;
    ///
    /// let chain = RouterChain::new(DubboUrl::parse("consumer://10.0.0.9/S?application=app")?);
    /// let mut changes = chain.watch();
    /// let rule = "configVersion: v3.0\nscope: service\nkey: S\nconditions:\n  - => port = 1\n";
    /// chain.set_rule(RuleKey::service_condition("S", "", ""), Some(rule)).unwrap();
    /// assert!(changes.has_changed().unwrap());
    /// assert_eq!(*changes.borrow_and_update(), chain.version());
    /// # Ok::<(), rudder_common::url::UrlError>(())
    /// ```
    pub fn watch(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn publish(&self, rules: &mut Rules) {
        rules.version += 1;
        let state = Arc::new(build_state(rules));
        self.state.store(Arc::clone(&state));
        self.table.store(Arc::new(Table::detached(state)));
        self.changes.send_replace(rules.version);
    }

    /// Each provider's fate for `invocation` over `snapshot` under the current rules, and why.
    pub fn explain(&self, snapshot: &ProviderSet, invocation: &Invocation) -> Explanation {
        explain(&self.state.load(), snapshot.providers(), invocation)
    }

    /// Runs `f` with the view `invocation` picks in: the routed subset of `snapshot` for its method.
    /// An empty snapshot gives its empty view to `f`.
    ///
    /// # Errors
    /// [`RpcErrorKind::NoProvider`] when providers are listed but the routers keep none; else `f`'s.
    pub(crate) fn with_view<R>(
        &self,
        snapshot: &Arc<ProviderSet>,
        invocation: &Invocation,
        rng: &RngSource,
        f: impl FnOnce(&MethodView) -> Result<R, RpcError>,
    ) -> Result<R, RpcError> {
        if snapshot.providers().is_empty() {
            return snapshot.with_view(invocation.method_name(), |view| f(view));
        }
        let table = self.table.load();
        if table.serves(snapshot) && table.passes(invocation) {
            return snapshot.with_view(invocation.method_name(), |view| f(view));
        }
        let view = if table.serves(snapshot) {
            table.route(snapshot, invocation, rng)
        } else {
            self.current_table(snapshot)
                .route(snapshot, invocation, rng)
        };
        match view {
            Some(view) => f(&view),
            None => Err(RpcError::new(
                RpcErrorKind::NoProvider,
                format!(
                    "no provider available for method {} after routing: {} listed, the routers kept none",
                    invocation.method_name(),
                    snapshot.providers().len()
                ),
            )),
        }
    }

    /// The table for `snapshot`: the stored one, a new one stored for a newer snapshot, or a throwaway
    /// one for an older snapshot still in use somewhere (so it cannot evict the newer table).
    fn current_table(&self, snapshot: &Arc<ProviderSet>) -> Arc<Table> {
        let _rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        let table = self.table.load_full();
        if table.serves(snapshot) {
            return table;
        }
        let fresh = Arc::new(Table::new(snapshot, self.state.load_full()));
        if table.generation() <= snapshot.generation() {
            self.table.store(Arc::clone(&fresh));
        }
        fresh
    }

    /// Builds the routing table of a snapshot about to be published, replaying the routes the current
    /// table has cached, and runs `prepare_view` on every routed view built (policy state).
    pub(crate) fn prepare(&self, snapshot: &Arc<ProviderSet>, prepare_view: &dyn Fn(&MethodView)) {
        let _rules = self.rules.lock().unwrap_or_else(PoisonError::into_inner);
        let old = self.table.load_full();
        let fresh = Arc::new(Table::new(snapshot, self.state.load_full()));
        fresh.replay(&old, snapshot, prepare_view);
        self.table.store(fresh);
    }

    /// How many routing nodes the current table caches (for tests and metrics).
    pub fn cached_routes(&self) -> usize {
        self.table.load().nodes()
    }
}

fn build_state(rules: &Rules) -> ChainState {
    ChainState::build(rules.version, rules.consumer.clone(), &rules.rules)
}

impl fmt::Debug for RouterChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.load();
        f.debug_struct("RouterChain")
            .field("version", &state.version)
            .field("routers", &state.routers.len())
            .finish_non_exhaustive()
    }
}
