//! What every subscription does with its lists, whichever registry they come from: the state of
//! the two views (interface and application level), the configurator rules applied to both, the
//! migration step choosing between them (`migrate`, `views`), and what goes to the sink and the
//! status.
//!
//! A registry's subscriber owns a [`Following`] and feeds it: it puts the interface-level lists it
//! reads into [`Following::catalog`] (through `crate::empty_push::apply_providers`) and
//! [`Following::pending`], then calls [`Following::feed`]; it wakes on [`Following::rules`],
//! the application-level feed and the migration rule as ZooKeeper's and Nacos's subscribers both
//! do. Starting and stopping the interface-level listing, which a migration step may ask for, is
//! the registry's own ([`InterfaceLevel`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rudder_common::discovery::{ProviderSink, ProviderUpdate, RuleKey};
use tokio::sync::watch;

use crate::app_level::AppLevel;
use crate::catalog::{Catalog, ProviderDelta};
use crate::config_center::{RuleInbox, RuleOutcome, RuleSource, RuleWatch};
use crate::migrating::Migration;
use crate::migration::{DiscoveryView, MigrationStep};
use crate::split::SplitFeed;
use crate::subscription::SubscriptionStatus;

mod migrate;
mod views;

/// A registry's interface-level listing, as a migration step starts and stops it.
pub(crate) trait InterfaceLevel: Send {
    /// Lists the interface-level providers into `following` (its catalog and pending changes, fed
    /// with [`Following::feed`]) and follows them from then on. A failure is the registry's to
    /// retry; this logs it.
    fn start<'a>(
        &'a mut self,
        following: &'a mut Following,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

    /// Stops following them.
    fn stop(&mut self) -> Pin<Box<dyn Future<Output = ()> + Send + '_>>;
}

/// The config-center configurator rules a subscription follows.
pub(crate) struct RuleFeed {
    pub(crate) inbox: Arc<RuleInbox>,
    /// Owns the watcher task; closed with the subscription.
    pub(crate) watch: RuleWatch,
    /// `<application>.configurators`.
    pub(crate) application: RuleKey,
    /// `<interface>:<version>:<group>.configurators`.
    pub(crate) service: RuleKey,
}

/// One subscription's views, rules and migration state, and where its providers go.
pub(crate) struct Following {
    pub(crate) catalog: Catalog,
    pub(crate) sink: Arc<dyn ProviderSink>,
    pub(crate) status: watch::Sender<SubscriptionStatus>,
    /// Provider changes listed but not yet fed to the directory.
    pub(crate) pending: ProviderDelta,
    /// Whether the directory has had its first full list.
    pub(crate) fed_once: bool,
    /// Whether the configurator rules changed since the last feed.
    pub(crate) rules_changed: bool,
    /// The config-center rules, unless dynamic configuration is off.
    pub(crate) rules: Option<RuleFeed>,
    /// Which views are followed and used (`migration.step`).
    pub(crate) step: MigrationStep,
    /// The comparator's threshold (`migration.threshold`).
    pub(crate) threshold: f32,
    /// The view feeding the sink now.
    pub(crate) view: DiscoveryView,
    /// The application-level view, unless the step is `FORCE_INTERFACE`.
    pub(crate) app_level: Option<AppLevel>,
    /// The migration rule and the switches it makes.
    pub(crate) migration: Migration,
    /// Where the interface view goes while a rule's `proportion` shares the calls, if anywhere.
    pub(crate) split: Option<SplitFeed>,
}

impl Following {
    /// The state of a subscription before its first listing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        catalog: Catalog,
        sink: Arc<dyn ProviderSink>,
        status: watch::Sender<SubscriptionStatus>,
        rules: Option<RuleFeed>,
        migration: Migration,
        app_level: Option<AppLevel>,
        split: Option<SplitFeed>,
    ) -> Following {
        Following {
            catalog,
            sink,
            status,
            pending: ProviderDelta::default(),
            fed_once: false,
            rules_changed: false,
            rules,
            step: migration.resolved.step,
            threshold: migration.resolved.threshold,
            view: DiscoveryView::default(),
            app_level,
            migration,
            split,
        }
    }

    /// Applies the config-center rule texts that arrived; whether the rules in effect changed.
    pub(crate) fn take_rules(&mut self) -> bool {
        let Some(feed) = &self.rules else {
            return false;
        };
        let mut changed = false;
        let mut updates = 0;
        let mut errors = Vec::new();
        for (key, text) in feed.inbox.take() {
            let source = if key == feed.service {
                RuleSource::Service
            } else if key == feed.application {
                RuleSource::Application
            } else {
                continue;
            };
            updates += 1;
            self.migration.mirror.dynamic(source, text.as_deref());
            if let Some(app_level) = &mut self.app_level {
                app_level.catalog.set_dynamic_rule(source, text.as_deref());
            }
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
        self.rules_changed |= changed;
        changed
    }

    /// Hands what changed to the directory: the whole list the first time and whenever the rules
    /// changed (every provider may be affected), otherwise only the providers that came or went, so a
    /// change among 10,000 providers costs work for one.
    pub(crate) fn feed(&mut self) {
        let view = self.choose_view();
        let switched = view != self.view;
        if switched {
            tracing::info!(from = %self.view, to = %view, step = %self.step, "discovery view switched");
        }
        self.view = view;
        let interface_pending = std::mem::take(&mut self.pending);
        let app_pending = self
            .app_level
            .as_mut()
            .map(|a| std::mem::take(&mut a.pending))
            .unwrap_or_default();
        let full = !self.fed_once || self.rules_changed || switched;
        let percent = self.split_percent();
        if let Some(split) = &mut self.split {
            split.feed(percent, &self.catalog, &interface_pending, full);
        }
        let (catalog, pending) = match (view, &self.app_level) {
            (DiscoveryView::Application, Some(app_level)) => (&app_level.catalog, app_pending),
            _ => (&self.catalog, interface_pending),
        };
        let update = if full {
            self.fed_once = true;
            self.rules_changed = false;
            Some(
                self.sink
                    .update(ProviderUpdate::Full(catalog.provider_urls())),
            )
        } else if !pending.is_empty() {
            Some(
                self.sink
                    .update(ProviderUpdate::Delta(catalog.changes(&pending))),
            )
        } else {
            None
        };
        let malformed = self.catalog.malformed();
        let configurators = self.catalog.configurators().len();
        let dynamic_rules = self.catalog.dynamic_rules();
        let disabled = if update.is_some() {
            Some((catalog.disabled(), catalog.reweighted()))
        } else {
            None
        };
        self.report_views();
        self.status.send_modify(|s| {
            if let Some((disabled, reweighted)) = disabled {
                s.disabled = disabled;
                s.reweighted = reweighted;
            }
            s.dynamic_rules = dynamic_rules;
            s.listings += 1;
            if let Some(update) = update {
                s.generation += 1;
                s.providers = update.total;
                s.rejected = if full {
                    update.rejected as u64
                } else {
                    s.rejected + update.rejected as u64
                };
            }
            s.malformed = malformed;
            s.configurators = configurators;
        });
    }

    /// Stops following the instances, the rules and the migration rule.
    pub(crate) async fn close(&mut self) {
        if let Some(app_level) = self.app_level.take() {
            app_level.feed.close().await;
        }
        if let Some(feed) = self.rules.take() {
            feed.watch.close().await;
        }
        self.migration.close().await;
    }
}

/// Resolves when the application-level feed changed (never without one).
pub(crate) async fn instances_changed(app_level: Option<&mut AppLevel>) {
    match app_level {
        Some(app_level) => app_level.feed.changed().await,
        None => std::future::pending().await,
    }
}

/// Resolves when rule texts arrived (never without rules).
pub(crate) async fn rules_arrived(inbox: Option<&RuleInbox>) {
    match inbox {
        Some(inbox) => inbox.arrived().await,
        None => std::future::pending().await,
    }
}
