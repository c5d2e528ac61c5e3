//! What a registry tells the layers above it: a service's provider list, whole or as changes, and the
//! raw text of governance rules ([`RuleSink`]).
//!
//! A registry does not know who keeps the providers. It hands each update to a [`ProviderSink`], a
//! one-method trait that a directory implements, and so do a fan-out to several directories, a test's
//! recorder or a user's own consumer of discovery events. That keeps the data path one-way: the registry
//! layer never compiles against the directory, so one registry can feed several directories and one
//! reference can be fed by several registries.
//!
//! ```
//! use std::sync::Mutex;
//! use rudder_common::discovery::{Change, ProviderSink, ProviderUpdate, UpdateOutcome};
//! use rudder_common::url::DubboUrl;
//!
//! /// Counts the providers it is told about.
//! #[derive(Default)]
//! struct Counter(Mutex<usize>);
//!
//! impl ProviderSink for Counter {
//!     fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
//!         let mut n = self.0.lock().unwrap();
//!         match update {
//!             ProviderUpdate::Full(urls) => *n = urls.len(),
//!             ProviderUpdate::Delta(changes) => {
//!                 for change in changes {
//!                     match change {
//!                         Change::Insert(_) => *n += 1,
//!                         Change::Remove(_) => *n -= 1,
//!                     }
//!                 }
//!             }
//!         }
//!         UpdateOutcome { total: *n, ..UpdateOutcome::default() }
//!     }
//! }
//!
//! let sink = Counter::default();
//! let a = DubboUrl::parse("dubbo://10.0.0.1:20880/S")?;
//! sink.update(ProviderUpdate::Full(vec![a.clone()]));
//! let outcome = sink.update(ProviderUpdate::Delta(vec![Change::Remove(a)]));
//! assert_eq!(outcome.total, 0);
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use std::fmt;
use std::sync::Arc;

use crate::url::DubboUrl;

/// One change to a provider list.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A provider URL appeared (or re-appeared with new parameters).
    Insert(DubboUrl),
    /// A provider URL disappeared; matched by full URL.
    Remove(DubboUrl),
}

/// A registry's news about one service's providers.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderUpdate {
    /// This is the whole list now (the first listing, and after rules changed).
    Full(Vec<DubboUrl>),
    /// These providers came or went since the last update; apply in order.
    Delta(Vec<Change>),
}

/// What a sink did with an update, reported back to the registry's status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UpdateOutcome {
    /// Providers new to the list.
    pub added: usize,
    /// Providers no longer in it.
    pub removed: usize,
    /// URLs skipped because they could not be used (each logged once by the sink).
    pub rejected: usize,
    /// Providers in the list after the update.
    pub total: usize,
}

/// Receives provider updates from a registry.
///
/// Called from the registry's task, one update at a time per subscription, in order; an implementation
/// should return quickly (publish a snapshot, send on a channel) and never block on I/O.
pub trait ProviderSink: Send + Sync + 'static {
    /// Takes one update and says what it did with it.
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome;
}

impl<S: ProviderSink + ?Sized> ProviderSink for Arc<S> {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        (**self).update(update)
    }
}

/// Feeds every update to each of several sinks: one registry subscription behind many directories.
///
/// The outcome reported is the first sink's.
#[derive(Default)]
pub struct FanOut {
    sinks: Vec<Arc<dyn ProviderSink>>,
}

impl FanOut {
    /// A fan-out to `sinks`.
    pub fn new(sinks: Vec<Arc<dyn ProviderSink>>) -> FanOut {
        FanOut { sinks }
    }
}

impl ProviderSink for FanOut {
    fn update(&self, update: ProviderUpdate) -> UpdateOutcome {
        let Some((last, rest)) = self.sinks.split_last() else {
            return UpdateOutcome::default();
        };
        let mut first = None;
        for sink in rest {
            let outcome = sink.update(update.clone());
            first.get_or_insert(outcome);
        }
        let outcome = last.update(update);
        first.unwrap_or(outcome)
    }
}

impl fmt::Debug for FanOut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FanOut")
            .field("sinks", &self.sinks.len())
            .finish()
    }
}

/// The name of one governance rule in a config center: Dubbo's rule key, such as
/// `demo-provider.tag-router`, `com.acme.Greeter:1.0.0:blue.condition-router` or
/// `shop.configurators` (the node `/dubbo/config/dubbo/<key>` on ZooKeeper by default).
///
/// The constructors build the keys Dubbo 3.3 listens on; [`RuleKey::new`] takes any other.
///
/// ```
/// use rudder_common::discovery::RuleKey;
///
/// assert_eq!(RuleKey::tag_router("demo-provider").as_str(), "demo-provider.tag-router");
/// let service = RuleKey::service_condition_router("com.acme.Greeter", None, Some("blue"));
/// assert_eq!(service.as_str(), "com.acme.Greeter::blue.condition-router");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleKey(String);

impl RuleKey {
    /// A key as written (no check; a key holding `/` or `?` names no ZooKeeper node Dubbo would read).
    pub fn new(key: impl Into<String>) -> RuleKey {
        RuleKey(key.into())
    }

    /// `<interface>:<version>:<group>` followed by `suffix`, missing parts left empty
    /// (Dubbo's `URL.getColonSeparatedKey` + suffix).
    pub fn service(
        interface: &str,
        version: Option<&str>,
        group: Option<&str>,
        suffix: &str,
    ) -> RuleKey {
        let version = version.unwrap_or("");
        let group = group.unwrap_or("");
        RuleKey(format!("{interface}:{version}:{group}{suffix}"))
    }

    /// `<application>.tag-router`: the tag rule of a provider application.
    pub fn tag_router(application: &str) -> RuleKey {
        RuleKey(format!("{application}.tag-router"))
    }

    /// `<application>.condition-router`: the condition rule of an application.
    pub fn app_condition_router(application: &str) -> RuleKey {
        RuleKey(format!("{application}.condition-router"))
    }

    /// `<interface>:<version>:<group>.condition-router`: the condition rule of a service.
    pub fn service_condition_router(
        interface: &str,
        version: Option<&str>,
        group: Option<&str>,
    ) -> RuleKey {
        RuleKey::service(interface, version, group, ".condition-router")
    }

    /// `<application>.configurators`: the dynamic configuration of an application.
    pub fn app_configurators(application: &str) -> RuleKey {
        RuleKey(format!("{application}.configurators"))
    }

    /// `<interface>:<version>:<group>.configurators`: the dynamic configuration of a service.
    pub fn service_configurators(
        interface: &str,
        version: Option<&str>,
        group: Option<&str>,
    ) -> RuleKey {
        RuleKey::service(interface, version, group, ".configurators")
    }

    /// The key as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RuleKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Receives the raw text of governance rules (router rules, configurators) from a config center.
///
/// A config center calls [`RuleSink::rule`] once per key when it starts watching (with the current text,
/// `None` when the rule does not exist), then once per change it sees: `Some(text)` when the rule is
/// created or changed, `None` when it is deleted. A write that leaves the text as it was is not reported.
/// Calls for one watch come from one task, in order; an implementation should return quickly and parse
/// elsewhere or quickly (a parse error is the sink's to report: the config center does not read rules).
///
/// ```
/// use std::sync::Mutex;
/// use rudder_common::discovery::{RuleKey, RuleSink};
///
/// #[derive(Default)]
/// struct Latest(Mutex<Option<String>>);
///
/// impl RuleSink for Latest {
///     fn rule(&self, _key: &RuleKey, text: Option<&str>) {
///         *self.0.lock().unwrap() = text.map(str::to_owned);
///     }
/// }
///
/// let sink = Latest::default();
/// sink.rule(&RuleKey::tag_router("demo-provider"), Some("tags: []"));
/// assert_eq!(sink.0.lock().unwrap().as_deref(), Some("tags: []"));
/// ```
pub trait RuleSink: Send + Sync + 'static {
    /// The rule named `key` is now `text` (`None`: there is no such rule).
    fn rule(&self, key: &RuleKey, text: Option<&str>);
}

impl<S: RuleSink + ?Sized> RuleSink for Arc<S> {
    fn rule(&self, key: &RuleKey, text: Option<&str>) {
        (**self).rule(key, text)
    }
}

/// The share of calls, in percent, that a reference's primary provider list gets while a second
/// list takes the rest: Dubbo's migration `proportion` under `APPLICATION_FIRST`, where the primary
/// list is the application-level view and the rest of the calls go to the interface-level one.
///
/// The registry sets it, the cluster layer reads it once per call (one relaxed atomic load); 100, the
/// default, sends every call to the primary list. Values above 100 are stored as 100.
///
/// ```
/// use rudder_common::discovery::CallShare;
///
/// let share = CallShare::default();
/// assert_eq!(share.primary_percent(), 100);
/// share.set_primary_percent(30); // 70 % of calls to the second list
/// assert!(share.goes_to_primary(29) && !share.goes_to_primary(30));
/// ```
#[derive(Debug)]
pub struct CallShare(std::sync::atomic::AtomicU8);

impl CallShare {
    /// A share sending `percent` of calls to the primary list.
    pub fn new(percent: u8) -> CallShare {
        CallShare(std::sync::atomic::AtomicU8::new(percent.min(100)))
    }

    /// The percentage of calls the primary list gets now.
    pub fn primary_percent(&self) -> u8 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets the percentage of calls the primary list gets.
    pub fn set_primary_percent(&self, percent: u8) {
        self.0
            .store(percent.min(100), std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a call that drew `draw`, uniform in `0..100`, goes to the primary list: as Dubbo's
    /// `MigrationInvoker`, whose call goes to the interface view when `nextDouble(100) > proportion`.
    pub fn goes_to_primary(&self, draw: u8) -> bool {
        draw < self.primary_percent()
    }
}

impl Default for CallShare {
    fn default() -> CallShare {
        CallShare::new(100)
    }
}
