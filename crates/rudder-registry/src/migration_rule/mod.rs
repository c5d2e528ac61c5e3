//! The live migration rule: `<config root>/config/DUBBO_SERVICEDISCOVERY_MIGRATION/<consumer app>.migration`
//! (Dubbo 3.3's `MigrationRule`, read by `MigrationRuleListener`).
//!
//! ```yaml
//! key: demo-consumer          # informational, not checked
//! step: APPLICATION_FIRST     # FORCE_INTERFACE | APPLICATION_FIRST | FORCE_APPLICATION (exact, as Java's valueOf)
//! threshold: 1.0              # the comparator's threshold
//! proportion: 60              # % of calls sent to the application view under APPLICATION_FIRST
//! delay: 60                   # seconds to wait for the new view before comparing (FORCE_* steps)
//! force: false                # switch without comparing
//! interfaces:                 # per reference, by `<interface>[:<version>]` (Dubbo's display service key)
//!   - serviceKey: DemoService:1.0.0
//!     step: FORCE_APPLICATION
//! applications:               # per provider application (the interface's mapping)
//!   - serviceKey: TestApplication
//!     step: FORCE_INTERFACE
//! ```
//!
//! Each setting is resolved on its own, as `MigrationRule.getValue` does: the reference's
//! `interfaces` entry, else the first `applications` entry (in the mapping's sorted order) that
//! sets it, else the rule's top level, else the consumer setting (`migration.step`,
//! `migration.threshold`, `migration.promotion`, `migration.delay`, `migration.force`), else
//! Dubbo's default. A rule Java cannot parse (an unknown step, a threshold that is not a number, an
//! entry that is not a map) is rejected whole; the caller keeps the last good one. An empty or
//! deleted node is the initial rule (nothing set: the consumer settings decide).

use std::fmt;

use rudder_common::yaml::scalar_string;
use yaml_serde::Value;

use crate::migration::MigrationStep;

/// The config-center group of migration rules.
pub(crate) const MIGRATION_GROUP: &str = "DUBBO_SERVICEDISCOVERY_MIGRATION";
/// The most `interfaces` plus `applications` entries read from one rule.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// Consumer settings read beside the rule (Dubbo's `migration.*` consumer URL parameters).
pub(crate) const PROMOTION_KEY: &str = "migration.promotion";
pub(crate) const DELAY_KEY: &str = "migration.delay";
pub(crate) const FORCE_KEY: &str = "migration.force";

/// The rule key of a consumer application: `<app>.migration`.
pub(crate) fn rule_key(application: &str) -> String {
    format!("{application}.migration")
}

/// The settings one level of a rule can make (the top level, or one entry).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RuleSettings {
    pub(crate) step: Option<MigrationStep>,
    pub(crate) threshold: Option<f32>,
    pub(crate) proportion: Option<i32>,
    pub(crate) delay: Option<i32>,
    pub(crate) force: Option<bool>,
}

/// One `interfaces` or `applications` entry.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SubRule {
    pub(crate) service_key: Option<String>,
    pub(crate) settings: RuleSettings,
}

/// A parsed migration rule; [`MigrationRule::default`] is Dubbo's initial rule (nothing set).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct MigrationRule {
    pub(crate) key: Option<String>,
    pub(crate) top: RuleSettings,
    pub(crate) interfaces: Vec<SubRule>,
    pub(crate) applications: Vec<SubRule>,
}

/// Where a resolved setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Level {
    /// The rule's `interfaces` entry of this reference.
    Interface(String),
    /// The rule's `applications` entry of a provider application.
    Application(String),
    /// The rule's top level.
    Rule,
    /// The consumer setting.
    Consumer,
    /// Dubbo's default.
    Default,
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Interface(key) => write!(f, "rule entry interfaces[{key}]"),
            Level::Application(app) => write!(f, "rule entry applications[{app}]"),
            Level::Rule => f.write_str("rule"),
            Level::Consumer => f.write_str("consumer setting"),
            Level::Default => f.write_str("default"),
        }
    }
}

/// The consumer settings a rule falls back to.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ConsumerMigration {
    pub(crate) step: Option<MigrationStep>,
    pub(crate) threshold: Option<f32>,
    pub(crate) proportion: Option<i32>,
    pub(crate) delay: Option<i32>,
    pub(crate) force: Option<bool>,
}

impl ConsumerMigration {
    /// Reads the `migration.*` settings; `setting` gives a consumer parameter.
    ///
    /// # Errors
    /// A `migration.step` that names no step.
    pub(crate) fn read(setting: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let step = match setting(crate::migration::STEP_KEY) {
            None => None,
            Some(text) => Some(MigrationStep::parse(&text).ok_or_else(|| {
                format!(
                    "migration.step={text:?} is not FORCE_INTERFACE, APPLICATION_FIRST or FORCE_APPLICATION"
                )
            })?),
        };
        Ok(ConsumerMigration {
            step,
            threshold: setting(crate::migration::THRESHOLD_KEY)
                .and_then(|t| java_float(&t).ok())
                .filter(|t| *t >= 0.0),
            proportion: setting(PROMOTION_KEY).and_then(|t| java_int(&t).ok()),
            delay: setting(DELAY_KEY).and_then(|t| java_int(&t).ok()),
            force: setting(FORCE_KEY).map(|t| t.trim().eq_ignore_ascii_case("true")),
        })
    }
}

/// A rule resolved for one reference.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Resolved {
    pub(crate) step: MigrationStep,
    /// Who decided the step.
    pub(crate) step_from: Level,
    /// The comparator's threshold (a negative one falls back to the default 0.0, as Dubbo's comparator).
    pub(crate) threshold: f32,
    /// Percentage of calls the application view gets under `APPLICATION_FIRST` (100: all).
    pub(crate) proportion: i32,
    /// Seconds to wait for the new view before a `FORCE_*` switch compares.
    pub(crate) delay: i32,
    /// Switch without comparing.
    pub(crate) force: bool,
}

impl MigrationRule {
    /// Parses a rule text as Dubbo does; an empty text is the initial rule.
    ///
    /// # Errors
    /// Why Java would reject it (its `MigrationRule.parse` throwing).
    pub(crate) fn parse(text: &str) -> Result<MigrationRule, String> {
        if text.trim().is_empty() {
            return Ok(MigrationRule::default());
        }
        let value: Value = yaml_serde::from_str(text).map_err(|e| format!("not YAML: {e}"))?;
        let Value::Mapping(_) = &value else {
            return Err("the rule is not a YAML map".to_owned());
        };
        let interfaces = sub_rules(&value, "interfaces")?;
        let applications = sub_rules(&value, "applications")?;
        if interfaces.len() + applications.len() > MAX_ENTRIES {
            return Err(format!(
                "more than {MAX_ENTRIES} interfaces and applications entries"
            ));
        }
        Ok(MigrationRule {
            key: value.get("key").and_then(scalar_string),
            top: settings(&value)?,
            interfaces,
            applications,
        })
    }

    /// Whether any entry is keyed by provider application (then the mapping is needed to resolve).
    pub(crate) fn has_application_entries(&self) -> bool {
        !self.applications.is_empty()
    }

    /// Resolves every setting for the reference `display_key` (`<interface>[:<version>]`) whose
    /// provider applications are `apps` (sorted), falling back to `consumer`.
    pub(crate) fn resolve(
        &self,
        display_key: &str,
        apps: &[String],
        consumer: &ConsumerMigration,
    ) -> Resolved {
        let (step, step_from) = match self.value(display_key, apps, |s| s.step) {
            Some((step, level)) => (step, level),
            None => match consumer.step {
                Some(step) => (step, Level::Consumer),
                None => (MigrationStep::default(), Level::Default),
            },
        };
        let threshold = self
            .value(display_key, apps, |s| s.threshold)
            .map(|(t, _)| t)
            .or(consumer.threshold)
            .filter(|t| *t >= 0.0 && t.is_finite())
            .unwrap_or(0.0);
        Resolved {
            step,
            step_from,
            threshold,
            proportion: self
                .value(display_key, apps, |s| s.proportion)
                .map(|(p, _)| p)
                .or(consumer.proportion)
                .unwrap_or(100),
            delay: self
                .value(display_key, apps, |s| s.delay)
                .map(|(d, _)| d)
                .or(consumer.delay)
                .unwrap_or(0),
            force: self
                .value(display_key, apps, |s| s.force)
                .map(|(f, _)| f)
                .or(consumer.force)
                .unwrap_or(false),
        }
    }

    /// `MigrationRule.getValue` and the top-level fallback: the interface entry, the first
    /// application entry setting it, the top level.
    fn value<T>(
        &self,
        display_key: &str,
        apps: &[String],
        pick: impl Fn(&RuleSettings) -> Option<T>,
    ) -> Option<(T, Level)> {
        // Java keeps the last entry of a duplicated serviceKey (a HashMap put).
        let entry = self
            .interfaces
            .iter()
            .rev()
            .find(|r| r.service_key.as_deref() == Some(display_key));
        if let Some(value) = entry.and_then(|r| pick(&r.settings)) {
            return Some((value, Level::Interface(display_key.to_owned())));
        }
        for app in apps {
            let entry = self
                .applications
                .iter()
                .rev()
                .find(|r| r.service_key.as_deref() == Some(app.as_str()));
            if let Some(value) = entry.and_then(|r| pick(&r.settings)) {
                return Some((value, Level::Application(app.clone())));
            }
        }
        pick(&self.top).map(|v| (v, Level::Rule))
    }
}

/// The `interfaces` or `applications` list: absent or not a list is none (Java's
/// `List.class.isAssignableFrom` check); an entry that is not a map rejects the rule.
fn sub_rules(rule: &Value, field: &str) -> Result<Vec<SubRule>, String> {
    let Some(Value::Sequence(items)) = rule.get(field) else {
        return Ok(Vec::new());
    };
    if items.len() > MAX_ENTRIES {
        return Err(format!("{field}: more than {MAX_ENTRIES} entries"));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let Value::Mapping(_) = item else {
                return Err(format!("{field}[{i}] is not a map"));
            };
            Ok(SubRule {
                service_key: item.get("serviceKey").and_then(scalar_string),
                settings: settings(item).map_err(|e| format!("{field}[{i}]: {e}"))?,
            })
        })
        .collect()
}

/// The five settings of one level, each parsed as Java parses `String.valueOf(value)`.
fn settings(level: &Value) -> Result<RuleSettings, String> {
    let text = |key: &str| {
        level
            .get(key)
            .filter(|v| !v.is_null())
            .map(|v| scalar_string(v).ok_or_else(|| format!("{key} is not a single value")))
            .transpose()
    };
    Ok(RuleSettings {
        step: text("step")?
            .map(|s| {
                // `MigrationStep.valueOf`: the exact constant name.
                match s.as_str() {
                    "FORCE_INTERFACE" | "APPLICATION_FIRST" | "FORCE_APPLICATION" => {
                        MigrationStep::parse(&s).ok_or(s)
                    }
                    _ => Err(s),
                }
                .map_err(|s| {
                    format!(
                        "step {s:?} is not FORCE_INTERFACE, APPLICATION_FIRST or FORCE_APPLICATION \
                         (upper case, as Dubbo reads it)"
                    )
                })
            })
            .transpose()?,
        threshold: text("threshold")?
            .map(|t| java_float(&t).map_err(|()| format!("threshold {t:?} is not a number")))
            .transpose()?,
        proportion: text("proportion")?
            .map(|t| java_int(&t).map_err(|()| format!("proportion {t:?} is not an integer")))
            .transpose()?,
        delay: text("delay")?
            .map(|t| java_int(&t).map_err(|()| format!("delay {t:?} is not an integer")))
            .transpose()?,
        // `Boolean.valueOf`: anything but a case-insensitive `true` is false, never an error.
        force: text("force")?.map(|t| t.eq_ignore_ascii_case("true")),
    })
}

/// `Float.valueOf`: surrounding whitespace allowed, an `f`/`d` suffix allowed.
fn java_float(text: &str) -> Result<f32, ()> {
    let t = text.trim();
    let t = t
        .strip_suffix(['f', 'F', 'd', 'D'])
        .filter(|rest| !rest.is_empty() && !rest.ends_with(['e', 'E']))
        .unwrap_or(t);
    match t {
        "NaN" => Ok(f32::NAN),
        "Infinity" | "+Infinity" => Ok(f32::INFINITY),
        "-Infinity" => Ok(f32::NEG_INFINITY),
        _ if t
            .chars()
            .any(|c| c.is_ascii_alphabetic() && c != 'e' && c != 'E') =>
        {
            Err(())
        }
        _ => t.parse::<f32>().map_err(drop),
    }
}

/// `Integer.valueOf`: an optional sign and decimal digits, within `i32`.
fn java_int(text: &str) -> Result<i32, ()> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(());
    }
    text.parse::<i32>().map_err(drop)
}

#[cfg(test)]
mod tests;
