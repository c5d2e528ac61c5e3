//! The router chain: rules in, routed views out.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;

use super::condition::ConditionRule;
use super::explain::{explain, Explanation};
use super::rule_key::{RuleError, RuleKey, RuleSlot};
use super::state::{ChainState, Parsed};
use super::table::Table;
use super::tag::TagRule;
use super::Consumer;
use crate::directory::ProviderSet;
use crate::rng::RngSource;
use crate::view::MethodView;

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
