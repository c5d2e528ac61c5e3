//! The application-level side of a subscription: taking the instance feed's URLs in, choosing the
//! view, reporting both views and sharing the calls (the state is [`crate::app_level::AppLevel`]).

use super::Following;
use crate::catalog::ProviderDelta;
use crate::migration::{choose, DiscoveryView, MigrationStep};

impl Following {
    /// Takes the instance feed's current URLs into the application-level catalog.
    pub(crate) fn take_instances(&mut self) {
        let Some(app_level) = &mut self.app_level else {
            return;
        };
        let snapshot = app_level.feed.snapshot();
        let delta = app_level.catalog.set_providers(snapshot.names);
        app_level.pending.added.extend(delta.added);
        app_level.pending.removed.extend(delta.removed);
        app_level.apps = snapshot.apps;
        app_level.malformed = snapshot.malformed;
        app_level.metadata_fetches = snapshot.metadata_fetches;
        app_level.metadata_failures = snapshot.metadata_failures;
        app_level.revisions = snapshot.revisions;
        app_level.unresolved = snapshot.unresolved;
    }

    /// The view the step and the comparator choose now.
    ///
    /// Unlike Dubbo's comparator, under `APPLICATION_FIRST` an application view known to be missing
    /// instances (their revision's metadata cannot be had, or not yet: a MetadataService that does
    /// not answer, or answers neither V2 nor V1) does not win over an interface view
    /// that has providers: Dubbo would have read those instances, rudder would lose them.
    pub(crate) fn choose_view(&self) -> DiscoveryView {
        let (application, unresolved) = self
            .app_level
            .as_ref()
            .map_or((0, 0), |a| (a.catalog.usable_count(), a.unresolved));
        let interface = if self.step == MigrationStep::ForceApplication {
            0
        } else {
            self.catalog.usable_count()
        };
        if self.step == MigrationStep::ApplicationFirst && unresolved > 0 && interface > 0 {
            return DiscoveryView::Interface;
        }
        choose(self.step, application, interface, self.threshold)
    }

    /// Publishes the views' counts, the view in use and why.
    pub(crate) fn report_views(&self) {
        let interface = self.catalog.usable_count();
        let view = self.view;
        let step = self.step.to_string();
        let app = self.app_level.as_ref().map(|a| {
            (
                a.catalog.usable_count(),
                a.apps.clone(),
                a.malformed,
                a.metadata_fetches,
                a.metadata_failures,
                a.revisions,
            )
        });
        let decision = self
            .migration
            .decision(Some(self.comparison()), self.proportion_note());
        let (updates, errors, last_error) = self.migration.counters();
        self.status.send_modify(|s| {
            s.view = view;
            s.migration_step = step;
            s.migration_decision = decision;
            s.migration_rule_updates = updates;
            s.migration_rule_errors = errors;
            s.last_migration_rule_error = last_error;
            s.interface_providers = interface;
            match app {
                Some((count, apps, malformed, fetches, failures, revisions)) => {
                    s.application_providers = count;
                    s.applications = apps;
                    s.instance_malformed = malformed;
                    s.metadata_fetches = fetches;
                    s.metadata_failures = failures;
                    s.revisions = revisions;
                }
                None => {
                    s.application_providers = 0;
                    s.applications.clear();
                }
            }
        });
    }

    /// The application view's share of the calls when a `proportion` shares them now: under
    /// `APPLICATION_FIRST`, with the application view in use, a `proportion` below 100 and interface
    /// providers to send the rest to (Dubbo would send them to an empty view, to fail).
    fn shared_percent(&self) -> Option<u8> {
        let proportion = self.migration.resolved.proportion;
        let shares = self.step == MigrationStep::ApplicationFirst
            && self.view == DiscoveryView::Application
            && proportion < 100
            && self.catalog.usable_count() > 0;
        // A negative proportion sends every call to the interface view, as Dubbo's draw does.
        shares.then(|| proportion.clamp(0, 100) as u8)
    }

    /// [`shared_percent`](Self::shared_percent), when the subscription was given a
    /// [`ViewSplit`](crate::ViewSplit) to share the calls with.
    pub(crate) fn split_percent(&self) -> Option<u8> {
        self.split.as_ref().and(self.shared_percent())
    }

    /// Starts, re-shares or ends the split of the calls as the rule says now, with no provider
    /// change to hand over.
    pub(crate) fn share_calls(&mut self) {
        let percent = self.split_percent();
        if let Some(split) = &mut self.split {
            split.feed(percent, &self.catalog, &ProviderDelta::default(), false);
        }
    }

    /// What the rule's `proportion` does now, when it is below 100 under `APPLICATION_FIRST`.
    fn proportion_note(&self) -> Option<String> {
        let proportion = self.migration.resolved.proportion;
        if self.step != MigrationStep::ApplicationFirst || proportion >= 100 {
            return None;
        }
        let percent = proportion.clamp(0, 100);
        Some(match self.shared_percent() {
            // A listing (`rudder providers`) subscribes without a second list; a reference has one.
            Some(_) if self.split.is_none() => format!(
                "proportion {percent} %: a reference sends the other {} % of calls to the interface view",
                100 - percent
            ),
            Some(_) => format!(
                "proportion {percent} %: the other {} % of calls go to the interface view",
                100 - percent
            ),
            None if self.view == DiscoveryView::Interface => {
                format!("proportion {percent} %: every call goes to the interface view in use")
            }
            None => format!(
                "proportion {percent} %: no interface-level provider, every call goes to the application view"
            ),
        })
    }

    /// The view in use and, under `APPLICATION_FIRST`, the comparison that chose it.
    fn comparison(&self) -> String {
        let view = self.view;
        if self.step != MigrationStep::ApplicationFirst {
            return format!("{view} view");
        }
        let (application, unresolved) = self
            .app_level
            .as_ref()
            .map_or((0, 0), |a| (a.catalog.usable_count(), a.unresolved));
        let interface = self.catalog.usable_count();
        let threshold = self.threshold;
        if application == 0 {
            return format!("{view} view, no application-level provider");
        }
        if interface == 0 {
            return format!("{view} view, no interface-level provider");
        }
        if unresolved > 0 && view == DiscoveryView::Interface {
            return format!(
                "{view} view, {unresolved} instance(s) without metadata (the application view would miss them)"
            );
        }
        let sign = if view == DiscoveryView::Application {
            ">="
        } else {
            "<"
        };
        format!(
            "{view} view, {application} application-level / {interface} interface-level providers {sign} threshold {threshold}"
        )
    }
}
