//! The migration switches a subscription makes when its rule changes (see [`crate::migrating`] for
//! the rule and the state it keeps): start the view the new step needs, wait out `delay`, compare,
//! then switch or refuse.

use std::time::Duration;

use super::{Following, InterfaceLevel};
use crate::catalog::ProviderDelta;
use crate::migrating::Pending;
use crate::migration::{prefers_application, MigrationStep};
use crate::migration_rule::Resolved;
use tokio::time::Instant;

impl Following {
    /// A rule text arrived or a delayed switch is due.
    pub(crate) async fn on_migration(&mut self, interface: &mut dyn InterfaceLevel) {
        if self.migration.take_rule() {
            self.begin_migration(interface).await;
        }
        let due = self
            .migration
            .pending
            .as_ref()
            .is_some_and(|p| p.due <= Instant::now());
        if due {
            if let Some(pending) = self.migration.pending.take() {
                self.complete_migration(pending.target, interface).await;
            }
        }
        // A rule that changed only its proportion switches nothing, but shares the calls anew.
        self.share_calls();
        self.report_views();
    }

    /// `MigrationRuleHandler.doMigrate` with the new rule.
    async fn begin_migration(&mut self, interface: &mut dyn InterfaceLevel) {
        let followed = self.app_level.as_ref().map(|a| a.apps.clone());
        let apps = self.migration.apps(followed.as_deref()).await;
        let target = self.migration.rule.resolve(
            &self.migration.display_key,
            &apps,
            &self.migration.consumer,
        );
        self.migration.pending = None;
        if target.step == self.step && target.threshold == self.threshold {
            // The same step: only the other settings (proportion, ...) change.
            self.migration.resolved = target;
            return;
        }
        tracing::info!(from = %self.step, to = %target.step, by = %target.step_from, "migration rule changed the step");
        match target.step {
            MigrationStep::ApplicationFirst => {
                self.ensure_application().await;
                self.ensure_interface(interface).await;
                self.accept(target);
                self.feed();
            }
            MigrationStep::ForceApplication => {
                self.ensure_application().await;
                if self.migration.follow_interface {
                    self.switch_after_delay(target, interface).await;
                } else {
                    self.accept(target);
                    self.feed();
                }
            }
            MigrationStep::ForceInterface => {
                self.ensure_interface(interface).await;
                if self.app_level.is_some() {
                    self.switch_after_delay(target, interface).await;
                } else {
                    self.accept(target);
                    self.feed();
                }
            }
        }
    }

    async fn switch_after_delay(&mut self, target: Resolved, interface: &mut dyn InterfaceLevel) {
        if target.delay > 0 && !target.force {
            let delay = Duration::from_secs(u64::from(target.delay.unsigned_abs()));
            self.migration.pending = Some(Pending {
                target,
                due: Instant::now() + delay,
            });
        } else {
            self.complete_migration(target, interface).await;
        }
    }

    /// `migrateToForceApplicationInvoker` / `migrateToForceInterfaceInvoker` after the wait: force
    /// or compare, then switch (dropping the other view) or keep the step.
    async fn complete_migration(&mut self, target: Resolved, interface: &mut dyn InterfaceLevel) {
        let application = self
            .app_level
            .as_ref()
            .map_or(0, |a| a.catalog.usable_count());
        let interface_count = if self.migration.follow_interface {
            self.catalog.usable_count()
        } else {
            0
        };
        let (new, old) = match target.step {
            MigrationStep::ForceInterface => (interface_count, application),
            _ => (application, interface_count),
        };
        if target.force || prefers_application(new, old, target.threshold) {
            match target.step {
                MigrationStep::ForceApplication => self.stop_interface(interface).await,
                MigrationStep::ForceInterface => self.stop_application().await,
                MigrationStep::ApplicationFirst => {}
            }
            self.accept(target);
        } else {
            let (new_view, old_view) = match target.step {
                MigrationStep::ForceInterface => ("interface", "application"),
                _ => ("application", "interface"),
            };
            let refused = format!(
                "{} refused: {new} {new_view}-level / {old} {old_view}-level providers below threshold {}",
                target.step, target.threshold
            );
            tracing::warn!(%refused, step = %self.step, "migration not made; the step stays");
            // Dubbo drops again the view it started only for the attempt.
            match (self.step, target.step) {
                (MigrationStep::ForceInterface, MigrationStep::ForceApplication) => {
                    self.stop_application().await;
                }
                (MigrationStep::ForceApplication, MigrationStep::ForceInterface) => {
                    self.stop_interface(interface).await;
                }
                _ => {}
            }
            self.migration.refused = Some(refused);
        }
        self.feed();
    }

    fn accept(&mut self, target: Resolved) {
        self.step = target.step;
        self.threshold = target.threshold;
        self.migration.resolved = target;
        self.migration.refused = None;
    }

    /// Starts the application-level view if it is not followed, with the rules seen so far.
    async fn ensure_application(&mut self) {
        if self.app_level.is_some() {
            return;
        }
        let mut app_level = self.migration.starter.start().await;
        self.migration.mirror.apply(&mut app_level.catalog);
        self.app_level = Some(app_level);
        self.take_instances();
    }

    /// Lists the interface-level providers if they are not followed.
    async fn ensure_interface(&mut self, interface: &mut dyn InterfaceLevel) {
        if self.migration.follow_interface {
            return;
        }
        self.migration.follow_interface = true;
        interface.start(self).await;
    }

    async fn stop_interface(&mut self, interface: &mut dyn InterfaceLevel) {
        self.migration.follow_interface = false;
        interface.stop().await;
        let _ = self.catalog.set_providers(Vec::new());
        self.pending = ProviderDelta::default();
    }

    async fn stop_application(&mut self) {
        if let Some(app_level) = self.app_level.take() {
            app_level.feed.close().await;
        }
    }
}
