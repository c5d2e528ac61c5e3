//! The router rules of one reference: which config-centre keys it follows, and how their texts
//! reach its router chains.

use std::collections::HashMap;
use std::sync::{Arc, Weak};

use rudder_cluster::directory::Directory;
use rudder_cluster::router::{self, RouterChain};
use rudder_common::discovery::{RuleKey, RuleSink};
use rudder_common::url::DubboUrl;
use rudder_registry::config_center::RuleWatch;
use rudder_registry::Registry;

use crate::error::BuildError;

/// Follows the router rules of one reference in the config center of `registry` and sets them on
/// `chains` (one per provider list): the service's condition rule, the consumer application's condition rule, and the tag and
/// condition rules of every provider application listed in `directory` now.
///
/// Provider applications are read once, when the reference is attached (Dubbo re-subscribes when the
/// providers' application changes; a reference whose providers move to another application must be
/// rebuilt to follow that application's tag rule).
pub(super) async fn watch_router_rules(
    registry: &dyn Registry,
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
    let (keys, sink) = RouterRules::new(chains, consumer_url, &providers);
    Ok(registry.watch_rules(keys, Arc::new(sink)).await?)
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
pub async fn load_router_rules(
    registry_url: &str,
    consumer_url: &DubboUrl,
    providers: &[DubboUrl],
) -> Result<Arc<RouterChain>, BuildError> {
    let registry = rudder_registry::connect(
        registry_url,
        rudder_registry::RegistryOptions::default(),
        None,
    )
    .await?;
    let chain = Arc::new(RouterChain::new(consumer_url.clone()));
    let (keys, sink) = RouterRules::new(vec![Arc::downgrade(&chain)], consumer_url, providers);
    // The current texts reach the sink before `watch_rules` returns.
    let watched = registry.watch_rules(keys, Arc::new(sink)).await;
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

impl RouterRules {
    /// The sink for `chains` and the config-centre keys it wants, for a consumer of `consumer_url`
    /// over `providers`.
    fn new(
        chains: Vec<Weak<RouterChain>>,
        consumer_url: &DubboUrl,
        providers: &[DubboUrl],
    ) -> (Vec<RuleKey>, RouterRules) {
        let slots = rule_slots(consumer_url, providers);
        let keys = slots
            .keys()
            .map(|name| RuleKey::new(name.clone()))
            .collect();
        (keys, RouterRules { chains, slots })
    }
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
