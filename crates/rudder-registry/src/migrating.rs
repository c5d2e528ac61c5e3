//! The migration rule applied while calls go on (Dubbo 3.3's `MigrationRuleListener`,
//! `MigrationRuleHandler` and `MigrationInvoker`).
//!
//! Each subscription reads the rule `<app>.migration` of group `DUBBO_SERVICEDISCOVERY_MIGRATION`
//! (ZooKeeper: `<config root>/config/DUBBO_SERVICEDISCOVERY_MIGRATION/<app>.migration`)
//! before its first listing (the step the subscription starts with: no comparison, as Dubbo's
//! first `doMigrate` has no other invoker yet) and then follows it through the registry's shared
//! session. A rule change resolves the step and threshold for this reference again; when either
//! differs from the one in effect:
//!
//! | new step | what happens |
//! |---|---|
//! | `APPLICATION_FIRST` | both views followed (the missing one started and listed first), the comparator picks, again after every change |
//! | `FORCE_APPLICATION` | the instances followed and listed, then after `delay` seconds: with `force`, or if the comparator prefers them (`application / interface >= threshold`), the directory switches to them and the interface view is dropped; else the step stays (and instances started only for this are dropped again) |
//! | `FORCE_INTERFACE` | the same the other way round: `interface / application >= threshold` |
//!
//! The directory keeps the providers of the view in use until the switch, which hands it the whole
//! list of the new view at once: no call meets an empty or half-built list in between. Unlike Dubbo,
//! the `delay` wait does not block anything: calls, address changes and the next rule go on.
//!
//! A rule that cannot be parsed keeps the last good one (one warning, counted in
//! [`SubscriptionStatus::migration_rule_errors`](crate::SubscriptionStatus::migration_rule_errors));
//! a deleted or empty node is the initial rule (the consumer settings decide). A refused switch is
//! not retried until the rule changes again, as in Dubbo.

use std::sync::Arc;

use rudder_common::discovery::{RuleKey, RuleSink};
use tokio::time::Instant;

use crate::app_level::AppLevel;
use crate::backend::ConfigCenter;
use crate::catalog::Catalog;
use crate::config_center::{RuleInbox, RuleSource, RuleWatch};
use crate::configurator::ConsumerSide;
use crate::consumer::ConsumerSpec;
use crate::error::RegistryError;
use crate::instance::feed::InstanceFeed;
use crate::instance::mapping::{app_names, PROVIDED_BY_KEY};
use crate::instance::metadata::MetadataFetcher;
use crate::instance::source::InstanceSource;
use crate::migration_rule::{self, ConsumerMigration, MigrationRule, Resolved};

/// What a subscription needs to start its application-level view later (a rule moving it off
/// `FORCE_INTERFACE`).
pub(crate) struct AppLevelStarter {
    pub(crate) source: Arc<dyn InstanceSource>,
    pub(crate) fetcher: Option<Arc<dyn MetadataFetcher>>,
    pub(crate) spec: ConsumerSpec,
    pub(crate) side: ConsumerSide,
    pub(crate) provided_by: Option<String>,
}

impl AppLevelStarter {
    /// Starts the view and waits (at most the connect timeout) for its first listing.
    pub(crate) async fn start(&self) -> AppLevel {
        let feed = InstanceFeed::start(
            Arc::clone(&self.source),
            self.fetcher.clone(),
            self.spec.interface.trim(),
            self.provided_by.as_deref(),
        )
        .await;
        feed.wait_listed(self.source.connect_timeout()).await;
        AppLevel::new(feed, Catalog::new(&self.spec, self.side.clone()))
    }

    /// The provider applications of the interface, read once: `provided-by`, else the mapping node
    /// (Dubbo's `getRemoteMapping`, which a rule's `applications` entries are matched against).
    async fn mapping_apps(&self) -> Vec<String> {
        if let Some(apps) = self
            .provided_by
            .as_deref()
            .map(app_names)
            .filter(|a| !a.is_empty())
        {
            return apps;
        }
        self.source
            .read_mapping(self.spec.interface.trim())
            .await
            .map(|text| app_names(&text))
            .unwrap_or_default()
    }
}

/// The configurator rules last seen, so that a view started later applies them too.
#[derive(Default)]
pub(crate) struct RuleMirror {
    configurators: Option<Vec<String>>,
    application: Option<Option<String>>,
    service: Option<Option<String>>,
}

impl RuleMirror {
    pub(crate) fn configurators(&mut self, children: &[String]) {
        self.configurators = Some(children.to_vec());
    }

    pub(crate) fn dynamic(&mut self, source: RuleSource, text: Option<&str>) {
        let slot = match source {
            RuleSource::Application => &mut self.application,
            RuleSource::Service => &mut self.service,
        };
        *slot = Some(text.map(str::to_owned));
    }

    pub(crate) fn apply(&self, catalog: &mut Catalog) {
        if let Some(children) = &self.configurators {
            catalog.set_configurators(children.clone());
        }
        for (source, text) in [
            (RuleSource::Application, &self.application),
            (RuleSource::Service, &self.service),
        ] {
            if let Some(text) = text {
                catalog.set_dynamic_rule(source, text.as_deref());
            }
        }
    }
}

/// A `FORCE_*` switch waiting for its `delay`.
pub(crate) struct Pending {
    pub(crate) target: Resolved,
    pub(crate) due: Instant,
}

/// One subscription's migration state.
pub(crate) struct Migration {
    pub(crate) consumer: ConsumerMigration,
    /// `<interface>[:<version>]`, what `interfaces` entries are keyed by.
    pub(crate) display_key: String,
    key: RuleKey,
    inbox: Arc<RuleInbox>,
    watch: Option<RuleWatch>,
    /// The last good rule.
    pub(crate) rule: MigrationRule,
    /// The settings in effect.
    pub(crate) resolved: Resolved,
    pub(crate) pending: Option<Pending>,
    /// Whether `/dubbo/<interface>/providers` is listed (not under `FORCE_APPLICATION`).
    pub(crate) follow_interface: bool,
    /// Why the last switch was refused, until the next one is made.
    pub(crate) refused: Option<String>,
    updates: u64,
    errors: u64,
    last_error: Option<String>,
    pub(crate) starter: AppLevelStarter,
    pub(crate) mirror: RuleMirror,
}

impl Migration {
    /// How a subscription of `spec` starts, on either registry: the consumer's migration settings
    /// read from its parameters, the rule read once and followed (it decides the first step, as
    /// Dubbo's first `doMigrate` does with no view to compare yet), and the application-level view,
    /// listed once, when that step uses it.
    ///
    /// # Errors
    /// `BadConsumer` when a migration setting of the consumer does not parse.
    pub(crate) async fn begin(
        config_center: Arc<dyn ConfigCenter>,
        source: Arc<dyn InstanceSource>,
        fetcher: Option<Arc<dyn MetadataFetcher>>,
        spec: &ConsumerSpec,
        side: &ConsumerSide,
    ) -> Result<(Migration, Option<AppLevel>), RegistryError> {
        let setting = |key: &str| {
            spec.parameters
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_owned())
        };
        let consumer = ConsumerMigration::read(setting)
            .map_err(|reason| RegistryError::BadConsumer { reason })?;
        let starter = AppLevelStarter {
            source,
            fetcher,
            spec: spec.clone(),
            side: side.clone(),
            provided_by: setting(PROVIDED_BY_KEY),
        };
        let migration = Migration::start(config_center, consumer, starter).await;
        let app_level = if migration.resolved.step.uses_application() {
            Some(migration.starter.start().await)
        } else {
            None
        };
        Ok((migration, app_level))
    }

    /// Reads the rule of `starter.spec`'s application once (through `config_center`) and follows it
    /// from then on; resolves the step the subscription starts with.
    pub(crate) async fn start(
        config_center: Arc<dyn ConfigCenter>,
        consumer: ConsumerMigration,
        starter: AppLevelStarter,
    ) -> Migration {
        let spec = &starter.spec;
        let mut display_key = spec.interface.trim().to_owned();
        if let Some(version) = spec
            .version
            .as_deref()
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            display_key = format!("{display_key}:{version}");
        }
        let key = RuleKey::new(migration_rule::rule_key(&spec.application));
        let inbox = Arc::new(RuleInbox::default());
        let (watch, error) = config_center
            .follow(
                migration_rule::MIGRATION_GROUP,
                vec![key.clone()],
                Arc::clone(&inbox) as Arc<dyn RuleSink>,
            )
            .await;
        if let Some(error) = error {
            tracing::warn!(
                error = &error as &dyn std::error::Error,
                "migration rule not readable yet; following it in the background"
            );
        }
        let resolved = MigrationRule::default().resolve(&display_key, &[], &consumer);
        let mut migration = Migration {
            consumer,
            display_key,
            key,
            inbox,
            watch: Some(watch),
            rule: MigrationRule::default(),
            follow_interface: resolved.step.uses_interface(),
            resolved,
            pending: None,
            refused: None,
            updates: 0,
            errors: 0,
            last_error: None,
            starter,
            mirror: RuleMirror::default(),
        };
        if migration.take_rule() {
            let apps = migration.apps(None).await;
            migration.resolved =
                migration
                    .rule
                    .resolve(&migration.display_key, &apps, &migration.consumer);
            migration.follow_interface = migration.resolved.step.uses_interface();
        }
        migration
    }

    /// Takes a rule text that arrived; whether a new good rule is in `self.rule`.
    pub(crate) fn take_rule(&mut self) -> bool {
        let Some((_, text)) = self.inbox.take().into_iter().next_back() else {
            return false;
        };
        self.updates += 1;
        match MigrationRule::parse(text.as_deref().unwrap_or("")) {
            Ok(rule) => {
                self.rule = rule;
                true
            }
            Err(error) => {
                tracing::warn!(rule = %self.key, %error, "failed to parse the migration rule; keeping the last good one");
                self.errors += 1;
                self.last_error = Some(format!("{}: {error}", self.key));
                false
            }
        }
    }

    /// The provider applications `applications` entries are matched against (none needed when the
    /// rule has no such entry).
    pub(crate) async fn apps(&self, followed: Option<&[String]>) -> Vec<String> {
        if !self.rule.has_application_entries() {
            return Vec::new();
        }
        match followed.filter(|a| !a.is_empty()) {
            Some(apps) => apps.to_vec(),
            None => self.starter.mapping_apps().await,
        }
    }

    /// Wakes when a rule text arrived or a delayed switch is due.
    pub(crate) async fn wake(&self) {
        let due = self.pending.as_ref().map(|p| p.due);
        tokio::select! {
            () = self.inbox.arrived() => {}
            () = async {
                match due {
                    Some(due) => tokio::time::sleep_until(due).await,
                    None => std::future::pending().await,
                }
            } => {}
        }
    }

    /// Stops following the rule.
    pub(crate) async fn close(&mut self) {
        if let Some(watch) = self.watch.take() {
            watch.close().await;
        }
    }

    /// What the status says about the rule: updates, errors, the last error.
    pub(crate) fn counters(&self) -> (u64, u64, Option<String>) {
        (self.updates, self.errors, self.last_error.clone())
    }

    /// Why the step in effect is what it is, and what is under way.
    pub(crate) fn decision(
        &self,
        comparison: Option<String>,
        proportion: Option<String>,
    ) -> String {
        let r = &self.resolved;
        let mut text = format!("{} ({})", r.step, r.step_from);
        if let Some(comparison) = comparison {
            text.push_str(": ");
            text.push_str(&comparison);
        }
        if let Some(proportion) = proportion {
            text.push_str("; ");
            text.push_str(&proportion);
        }
        if let Some(pending) = &self.pending {
            let left = pending.due.saturating_duration_since(Instant::now());
            text.push_str(&format!(
                "; switching to {} in {} s (delay)",
                pending.target.step,
                left.as_secs()
            ));
        }
        if let Some(refused) = &self.refused {
            text.push_str("; ");
            text.push_str(refused);
        }
        text
    }
}
