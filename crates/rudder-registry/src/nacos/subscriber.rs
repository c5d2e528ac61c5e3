//! One interface-level subscription on Nacos: the first list, then every push, applied as deltas.
//!
//! | what happens | what the task does |
//! |---|---|
//! | Nacos pushes the service's instances | apply the latest list (older ones are skipped), hand the delta over |
//! | a push leaves no usable provider | as Dubbo: clear, or keep the last ones with `enable-empty-protection=true` |
//! | a config-centre configurator changes | re-apply the rules, hand the whole list over |
//! | the connection drops | nacos-sdk reconnects (next server of the list) and re-subscribes; the last list stays |
//! | the subscription ends | unsubscribe, deregister the consumer instance if one was registered |

use std::sync::{Arc, Mutex};

use nacos_sdk::api::naming::{NamingChangeEvent, NamingEventListener, ServiceInstance};
use rudder_common::discovery::{ProviderSink, ProviderUpdate, RuleSink};
use tokio::sync::{oneshot, watch, Notify};

use crate::catalog::Catalog;
use crate::config_center::{RuleInbox, RuleOutcome, RuleSource, RuleWatch};
use crate::nacos::client::{Clients, Connection};
use crate::nacos::naming::provider_names;
use crate::subscription::SubscriptionStatus;

/// The latest instance list pushed for one service, and a wake-up: a burst of pushes costs one
/// application and never queues.
#[derive(Default)]
pub(crate) struct Pushes {
    latest: Mutex<Option<Vec<ServiceInstance>>>,
    arrived: Notify,
}

impl Pushes {
    pub(crate) fn offer(&self, instances: Vec<ServiceInstance>) {
        *self.latest.lock().unwrap_or_else(|p| p.into_inner()) = Some(instances);
        self.arrived.notify_one();
    }

    /// The first list, unless a push already brought one (which is as new or newer).
    pub(crate) fn offer_first(&self, instances: Vec<ServiceInstance>) {
        let mut latest = self.latest.lock().unwrap_or_else(|p| p.into_inner());
        if latest.is_none() {
            *latest = Some(instances);
            self.arrived.notify_one();
        }
    }

    fn take(&self) -> Option<Vec<ServiceInstance>> {
        self.latest.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

impl NamingEventListener for Pushes {
    fn event(&self, event: Arc<NamingChangeEvent>) {
        self.offer(event.instances.clone().unwrap_or_default());
    }
}

/// The configurator rules followed (as on ZooKeeper, from the config centre).
pub(crate) struct Rules {
    pub(crate) inbox: Arc<RuleInbox>,
    pub(crate) watch: RuleWatch,
    pub(crate) application: rudder_common::discovery::RuleKey,
    pub(crate) service: rudder_common::discovery::RuleKey,
}

pub(crate) struct NacosSubscriber {
    pub(crate) connection: Arc<Connection>,
    pub(crate) clients: Clients,
    pub(crate) service: String,
    pub(crate) pushes: Arc<Pushes>,
    pub(crate) catalog: Catalog,
    pub(crate) sink: Arc<dyn ProviderSink>,
    pub(crate) status: watch::Sender<SubscriptionStatus>,
    pub(crate) rules: Option<Rules>,
    pub(crate) fed_once: bool,
    /// The consumer instance (service name, instance) when registered.
    pub(crate) consumer: Option<(String, ServiceInstance)>,
}

impl NacosSubscriber {
    /// Applies the pushed list, if one came: the whole list the first time, a delta after.
    pub(crate) fn apply_push(&mut self) {
        let Some(instances) = self.pushes.take() else {
            return;
        };
        let protect = self.connection.address.empty_protection;
        let delta = crate::empty_push::apply_providers(
            &mut self.catalog,
            provider_names(&instances),
            protect,
            &self.service,
            &self.status,
        );
        if !self.fed_once {
            self.feed_full();
        } else if !delta.is_empty() {
            let update = self
                .sink
                .update(ProviderUpdate::Delta(self.catalog.changes(&delta)));
            self.report(update.total, update.rejected as u64, false);
        } else {
            self.status.send_modify(|s| s.listings += 1);
        }
    }

    fn feed_full(&mut self) {
        self.fed_once = true;
        let update = self
            .sink
            .update(ProviderUpdate::Full(self.catalog.provider_urls()));
        self.report(update.total, update.rejected as u64, true);
    }

    fn report(&self, total: usize, rejected: u64, full: bool) {
        let disabled = self.catalog.disabled();
        let reweighted = self.catalog.reweighted();
        let (malformed, dynamic_rules) = (self.catalog.malformed(), self.catalog.dynamic_rules());
        let usable = self.catalog.usable_count();
        self.status.send_modify(|s| {
            s.generation += 1;
            s.listings += 1;
            s.providers = total;
            s.rejected = if full {
                rejected
            } else {
                s.rejected + rejected
            };
            s.disabled = disabled;
            s.reweighted = reweighted;
            s.malformed = malformed;
            s.dynamic_rules = dynamic_rules;
            s.interface_providers = usable;
        });
    }

    /// Applies the configurator texts that arrived; whether the rules in effect changed.
    pub(crate) fn take_rules(&mut self) -> bool {
        let Some(rules) = &self.rules else {
            return false;
        };
        let mut changed = false;
        let (mut updates, mut errors) = (0, Vec::new());
        for (key, text) in rules.inbox.take() {
            let source = if key == rules.service {
                RuleSource::Service
            } else if key == rules.application {
                RuleSource::Application
            } else {
                continue;
            };
            updates += 1;
            match self.catalog.set_dynamic_rule(source, text.as_deref()) {
                RuleOutcome::Changed => changed = true,
                RuleOutcome::Unchanged => {}
                RuleOutcome::Rejected(error) => {
                    tracing::warn!(rule = %key, %error, "failed to parse a dynamic configuration rule; keeping the last good one");
                    errors.push(format!("{key}: {error}"));
                }
            }
        }
        let in_effect = self.catalog.dynamic_rules();
        self.status.send_modify(|s| {
            s.rule_updates += updates;
            s.rule_errors += errors.len() as u64;
            if let Some(last) = errors.pop() {
                s.last_rule_error = Some(last);
            }
            s.dynamic_rules = in_effect;
        });
        changed
    }

    /// Follows pushes and rules until `stop` fires or the registry closes.
    pub(crate) async fn run(mut self, mut stop: oneshot::Receiver<()>) {
        let inbox = self.rules.as_ref().map(|r| Arc::clone(&r.inbox));
        loop {
            tokio::select! {
                _ = &mut stop => break,
                () = self.connection.closed() => break,
                () = self.pushes.arrived.notified() => self.apply_push(),
                () = rules_arrived(inbox.as_deref()) => {
                    if self.take_rules() && self.fed_once {
                        self.feed_full();
                    }
                }
            }
        }
        let group = self.connection.address.group.clone();
        let listener = Arc::clone(&self.pushes) as Arc<dyn NamingEventListener>;
        let _ = self
            .clients
            .naming
            .unsubscribe(
                self.service.clone(),
                Some(group.clone()),
                Vec::new(),
                listener,
            )
            .await;
        if let Some((service, instance)) = self.consumer.take() {
            let _ = self
                .clients
                .naming
                .deregister_instance(service, Some(group), instance)
                .await;
        }
        if let Some(rules) = self.rules.take() {
            rules.watch.close().await;
        }
    }
}

async fn rules_arrived(inbox: Option<&RuleInbox>) {
    match inbox {
        Some(inbox) => inbox.arrived().await,
        None => std::future::pending().await,
    }
}

/// The inbox as a sink the config centre can hold.
pub(crate) fn inbox_sink(inbox: &Arc<RuleInbox>) -> Arc<dyn RuleSink> {
    Arc::clone(inbox) as Arc<dyn RuleSink>
}
