//! Which view of a service a consumer uses: interface-level providers, application-level instances,
//! or both with a preference (Dubbo 3's `MigrationInvoker`, consumer setting `migration.step`).
//!
//! | `migration.step` | subscribes to | uses |
//! |---|---|---|
//! | `FORCE_INTERFACE` | `/dubbo/<interface>/providers` | those providers (rudder before application-level discovery) |
//! | `APPLICATION_FIRST` (default, as Dubbo 3.3) | both | the application view when [`prefers_application`] says so, else the interface view |
//! | `FORCE_APPLICATION` | the instances only | the instances |
//!
//! The choice is made again after every change of either view, as Dubbo recomputes it on every
//! address notification; a switch hands the directory the whole list of the view now in use. The
//! live migration rule (see [`crate::migration_rule`] and [`crate::migrating`]) changes the step
//! and threshold while the subscription runs.

use std::fmt;

/// The consumer setting that names the step.
pub(crate) const STEP_KEY: &str = "migration.step";
/// The consumer setting that overrides the comparator's threshold (Dubbo's
/// `dubbo.application.migration.threshold`, default 0.0).
pub(crate) const THRESHOLD_KEY: &str = "migration.threshold";

/// Dubbo's `MigrationStep`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum MigrationStep {
    /// Interface-level providers only.
    ForceInterface,
    /// Both views; the application view when the comparator prefers it.
    #[default]
    ApplicationFirst,
    /// Application-level instances only.
    ForceApplication,
}

impl MigrationStep {
    /// Reads a step name (case-insensitive, as Dubbo's `MigrationStep.valueOf` after upper-casing);
    /// `None` for anything else.
    pub(crate) fn parse(text: &str) -> Option<MigrationStep> {
        match text.trim().to_ascii_uppercase().as_str() {
            "FORCE_INTERFACE" => Some(MigrationStep::ForceInterface),
            "APPLICATION_FIRST" => Some(MigrationStep::ApplicationFirst),
            "FORCE_APPLICATION" => Some(MigrationStep::ForceApplication),
            _ => None,
        }
    }

    /// Whether the interface-level providers are listed.
    pub(crate) fn uses_interface(self) -> bool {
        self != MigrationStep::ForceApplication
    }

    /// Whether the application-level instances are followed.
    pub(crate) fn uses_application(self) -> bool {
        self != MigrationStep::ForceInterface
    }
}

impl fmt::Display for MigrationStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MigrationStep::ForceInterface => "FORCE_INTERFACE",
            MigrationStep::ApplicationFirst => "APPLICATION_FIRST",
            MigrationStep::ForceApplication => "FORCE_APPLICATION",
        })
    }
}

/// Which view feeds the directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiscoveryView {
    /// `/dubbo/<interface>/providers`.
    #[default]
    Interface,
    /// `/services/<app>/<host:port>` instances and their MetadataInfo.
    Application,
}

impl fmt::Display for DiscoveryView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DiscoveryView::Interface => "interface",
            DiscoveryView::Application => "application",
        })
    }
}

/// Dubbo's `DefaultMigrationAddressComparator.shouldMigrate`: no application-level address → no;
/// no interface-level address → yes; else `application / interface >= threshold` (default 0.0, so
/// any application-level address wins).
pub(crate) fn prefers_application(application: usize, interface: usize, threshold: f32) -> bool {
    if application == 0 {
        return false;
    }
    if interface == 0 {
        return true;
    }
    (application as f32 / interface as f32) >= threshold
}

/// The view `step` uses with `application` and `interface` usable providers.
pub(crate) fn choose(
    step: MigrationStep,
    application: usize,
    interface: usize,
    threshold: f32,
) -> DiscoveryView {
    match step {
        MigrationStep::ForceInterface => DiscoveryView::Interface,
        MigrationStep::ForceApplication => DiscoveryView::Application,
        MigrationStep::ApplicationFirst
            if prefers_application(application, interface, threshold) =>
        {
            DiscoveryView::Application
        }
        MigrationStep::ApplicationFirst => DiscoveryView::Interface,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_read_as_dubbo_names_them() {
        assert_eq!(
            MigrationStep::parse("force_interface"),
            Some(MigrationStep::ForceInterface)
        );
        assert_eq!(
            MigrationStep::parse(" APPLICATION_FIRST "),
            Some(MigrationStep::ApplicationFirst)
        );
        assert_eq!(
            MigrationStep::parse("FORCE_APPLICATION"),
            Some(MigrationStep::ForceApplication)
        );
        assert_eq!(MigrationStep::parse("sideways"), None);
        assert_eq!(MigrationStep::default().to_string(), "APPLICATION_FIRST");
    }

    #[test]
    fn the_comparator_is_dubbos() {
        // DefaultMigrationAddressComparator: no new addresses keeps the old view, no old ones moves.
        assert!(!prefers_application(0, 0, 0.0));
        assert!(!prefers_application(0, 5, 0.0));
        assert!(prefers_application(1, 0, 5.0));
        // Threshold 0.0 (the default): any application-level address wins.
        assert!(prefers_application(1, 100, 0.0));
        assert!(!prefers_application(1, 100, 0.5));
        assert!(prefers_application(50, 100, 0.5));
        assert_eq!(
            choose(MigrationStep::ForceInterface, 9, 0, 0.0),
            DiscoveryView::Interface
        );
        assert_eq!(
            choose(MigrationStep::ForceApplication, 0, 9, 0.0),
            DiscoveryView::Application
        );
        assert_eq!(
            choose(MigrationStep::ApplicationFirst, 1, 9, 0.0),
            DiscoveryView::Application
        );
    }
}
