//! Fault-tolerance modes and how they are read from consumer parameters.

use std::fmt;
use std::sync::Arc;

use rudder_common::url::ranges::IntRange;
use rudder_common::url::DubboUrl;

/// Dubbo's default `retries` for failover.
pub const DEFAULT_RETRIES: u32 = 2;

/// `retries`: 0 ..= 100 extra attempts (negative is 0, as in Dubbo; more than 100 attempts of one call is a
/// retry storm, not fault tolerance).
pub const RETRIES: IntRange = IntRange {
    key: "retries",
    default: DEFAULT_RETRIES as i64,
    min: 0,
    max: 100,
};

/// Dubbo's default `retries` for failback (`DEFAULT_FAILBACK_TIMES`).
pub const DEFAULT_FAILBACK_RETRIES: u32 = 3;

/// `retries` as failback reads it (service level only, as Dubbo): a negative value means the default 3,
/// more than 100 is 100.
const FAILBACK_RETRIES: IntRange = IntRange {
    key: "retries",
    default: DEFAULT_FAILBACK_RETRIES as i64,
    min: i32::MIN as i64,
    max: 100,
};

/// `failbacktasks`: how many failed calls may wait for a retry at once (default 100; 0 or less is the
/// default, as in Dubbo). At most 10,000: each waiting call keeps its arguments.
pub const FAILBACK_TASKS: IntRange = IntRange {
    key: "failbacktasks",
    default: 100,
    min: i32::MIN as i64,
    max: 10_000,
};

/// `retry.period`, ms between failback retries: 100 ..= 3,600,000, default 5,000. Dubbo fixes it at 5 s;
/// rudder reads the name Dubbo's failback *registry* uses for the same idea.
pub const RETRY_PERIOD: IntRange = IntRange {
    key: "retry.period",
    default: 5_000,
    min: 100,
    max: 3_600_000,
};

/// `forks`: providers a forking call goes to at once (default 2); 0 or less means all of them.
pub const FORKS: IntRange = IntRange {
    key: "forks",
    default: 2,
    min: i32::MIN as i64,
    max: 1_000,
};

/// `timeout`, ms: the deadline of a whole forking call (default 1000, as Dubbo's).
pub const FORKING_TIMEOUT: IntRange = IntRange {
    key: "timeout",
    default: 1_000,
    min: 1,
    max: i32::MAX as i64,
};

/// `broadcast.fail.percent`: the share of failed providers, in percent, after which broadcast stops
/// calling the rest (default 100); outside 0 ..= 100 it is 100, as in Dubbo.
pub const BROADCAST_FAIL_PERCENT: IntRange = IntRange {
    key: "broadcast.fail.percent",
    default: 100,
    min: i32::MIN as i64,
    max: i32::MAX as i64,
};

/// Which provider groups a `mergeable` call spans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Groups {
    /// `group=*`: every group among the listed providers, in name order.
    Any,
    /// `group=a,b`: these groups, in this order (the comma list as configured).
    Listed(Arc<str>),
    /// `cluster=mergeable` on a single-group reference: as in Dubbo, every provider is its own "group".
    EachProvider,
}

impl Groups {
    /// The listed group names, in order, without blanks or repeats (empty for `Any`/`EachProvider`).
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        if let Groups::Listed(list) = self {
            for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
}

/// What the cluster invoker does when a call fails.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterMode {
    /// Retry on other providers; `retries` extra attempts.
    Failover {
        /// Extra attempts after the first.
        retries: u32,
    },
    /// Fail at once.
    Failfast,
    /// Return an empty result instead of failing.
    Failsafe,
    /// Call the first listed provider not known to be failing, no balancing.
    Available,
    /// Return an empty result at once and retry in the background.
    Failback {
        /// Background retries after the first failure (0: none).
        retries: u32,
        /// Failed calls that may wait for a retry at once; more are refused and counted.
        tasks: u32,
        /// Time between retries, ms.
        period_millis: u64,
    },
    /// Call several providers at once; the first answer wins.
    Forking {
        /// Providers per call; 0 means all.
        forks: u32,
        /// Deadline of the whole call, ms.
        timeout_millis: u64,
    },
    /// Call every provider, one after another; any failure fails the call.
    Broadcast {
        /// Stop calling the rest once this percentage of all providers has failed (0 ..= 100).
        fail_percent: u32,
    },
    /// Call one provider group, or every group and merge their results (`merger`).
    Mergeable {
        /// `merger` for the method: `None` calls the first group that has providers.
        merger: Option<Arc<str>>,
        /// The groups the reference spans.
        groups: Groups,
        /// Failover retries within each group.
        retries: u32,
    },
}

impl Default for ClusterMode {
    fn default() -> Self {
        ClusterMode::Failover {
            retries: DEFAULT_RETRIES,
        }
    }
}

/// The `cluster` name is not one rudder implements.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported cluster mode {0:?}; supported: failover, failfast, failsafe, failback, forking, broadcast, available, mergeable")]
pub struct UnsupportedClusterMode(pub String);

impl ClusterMode {
    /// Reads `cluster` and the mode's parameters from consumer parameters, as Dubbo 3 does: from the
    /// consumer's own configuration, never from provider URLs.
    ///
    /// * failover: `<method>.retries` / `retries` (default 2, negative 0);
    /// * failback: `retries` (service level, default 3, negative 3), `failbacktasks` (default 100),
    ///   `retry.period` (ms, default 5000);
    /// * forking: `forks` (service level, default 2, 0 or less all), `<method>.timeout` / `timeout`
    ///   (default 1000 ms);
    /// * broadcast: `broadcast.fail.percent` (default 100);
    /// * a `group` of `*` or a comma list selects mergeable whatever `cluster` says, as Dubbo's
    ///   `RegistryProtocol` does; `<method>.merger` / `merger` says how results are merged.
    ///
    /// ```
    /// use rudder_cluster::cluster::{ClusterMode, Groups};
    /// use rudder_common::url::DubboUrl;
    /// let consumer = DubboUrl::parse("consumer://10.0.0.9/S?retries=4&save.retries=0").unwrap();
    /// assert_eq!(ClusterMode::from_consumer(&consumer, "get").unwrap(), ClusterMode::Failover { retries: 4 });
    /// assert_eq!(ClusterMode::from_consumer(&consumer, "save").unwrap(), ClusterMode::Failover { retries: 0 });
    /// let forking = DubboUrl::parse("consumer://10.0.0.9/S?cluster=forking&forks=3&get.timeout=200").unwrap();
    /// assert_eq!(
    ///     ClusterMode::from_consumer(&forking, "get").unwrap(),
    ///     ClusterMode::Forking { forks: 3, timeout_millis: 200 }
    /// );
    /// let groups = DubboUrl::parse("consumer://10.0.0.9/S?group=a,b&merger=list").unwrap();
    /// assert!(matches!(
    ///     ClusterMode::from_consumer(&groups, "get").unwrap(),
    ///     ClusterMode::Mergeable { groups: Groups::Listed(_), .. }
    /// ));
    /// ```
    ///
    /// # Errors
    /// [`UnsupportedClusterMode`] for a name rudder does not implement (e.g. `zone-aware`).
    pub fn from_consumer(
        consumer: &DubboUrl,
        method: &str,
    ) -> Result<ClusterMode, UnsupportedClusterMode> {
        let group = consumer.parameter("group").unwrap_or("");
        if group == "*" || group.contains(',') {
            let groups = if group == "*" {
                Groups::Any
            } else {
                Groups::Listed(group.into())
            };
            return Ok(mergeable(consumer, method, groups));
        }
        let mode = match consumer.parameter("cluster").unwrap_or("failover") {
            "" | "failover" => ClusterMode::Failover {
                retries: RETRIES.method_value(consumer, method) as u32,
            },
            "failfast" => ClusterMode::Failfast,
            "failsafe" => ClusterMode::Failsafe,
            "available" => ClusterMode::Available,
            "failback" => {
                let retries = FAILBACK_RETRIES.value(consumer);
                let tasks = FAILBACK_TASKS.value(consumer);
                ClusterMode::Failback {
                    retries: if retries < 0 {
                        DEFAULT_FAILBACK_RETRIES
                    } else {
                        retries as u32
                    },
                    tasks: if tasks <= 0 {
                        FAILBACK_TASKS.default as u32
                    } else {
                        tasks as u32
                    },
                    period_millis: RETRY_PERIOD.value(consumer) as u64,
                }
            }
            "forking" => ClusterMode::Forking {
                forks: FORKS.value(consumer).max(0) as u32,
                timeout_millis: FORKING_TIMEOUT.method_value(consumer, method) as u64,
            },
            "broadcast" => {
                let percent = BROADCAST_FAIL_PERCENT.value(consumer);
                ClusterMode::Broadcast {
                    fail_percent: if (0..=100).contains(&percent) {
                        percent as u32
                    } else {
                        100
                    },
                }
            }
            "mergeable" => mergeable(consumer, method, Groups::EachProvider),
            other => return Err(UnsupportedClusterMode(other.to_owned())),
        };
        Ok(mode)
    }

    /// The consumer parameters that select this mode, as [`ClusterMode::from_consumer`] reads them
    /// back. Forking's deadline is not among them: it is the call's `timeout`, as in Dubbo, set on its
    /// own.
    ///
    /// ```
    /// use rudder_cluster::cluster::{ClusterMode, Groups};
    /// use rudder_common::url::DubboUrl;
    /// for mode in [
    ///     ClusterMode::Failover { retries: 4 },
    ///     ClusterMode::Failfast,
    ///     ClusterMode::Failback { retries: 1, tasks: 10, period_millis: 200 },
    ///     ClusterMode::Forking { forks: 3, timeout_millis: 1000 }, // the default `timeout`
    ///     ClusterMode::Broadcast { fail_percent: 50 },
    ///     ClusterMode::Mergeable { merger: Some("list".into()), groups: Groups::Any, retries: 1 },
    /// ] {
    ///     let mut url = DubboUrl::parse("consumer://10.0.0.9/S").unwrap();
    ///     for (key, value) in mode.parameters() {
    ///         url = url.with_parameter(key, &value);
    ///     }
    ///     assert_eq!(ClusterMode::from_consumer(&url, "get").unwrap(), mode);
    /// }
    /// ```
    pub fn parameters(&self) -> Vec<(&'static str, String)> {
        let mut parameters = vec![("cluster", self.name().to_owned())];
        match self {
            ClusterMode::Failover { retries } => parameters.push(("retries", retries.to_string())),
            ClusterMode::Failfast | ClusterMode::Failsafe | ClusterMode::Available => {}
            ClusterMode::Failback {
                retries,
                tasks,
                period_millis,
            } => parameters.extend([
                ("retries", retries.to_string()),
                ("failbacktasks", tasks.to_string()),
                ("retry.period", period_millis.to_string()),
            ]),
            ClusterMode::Forking { forks, .. } => parameters.push(("forks", forks.to_string())),
            ClusterMode::Broadcast { fail_percent } => {
                parameters.push(("broadcast.fail.percent", fail_percent.to_string()));
            }
            ClusterMode::Mergeable {
                merger,
                groups,
                retries,
            } => {
                parameters.push(("retries", retries.to_string()));
                parameters.push(("merger", merger.as_deref().unwrap_or("false").to_owned()));
                match groups {
                    Groups::Any => parameters.push(("group", "*".to_owned())),
                    Groups::Listed(list) => parameters.push(("group", list.to_string())),
                    Groups::EachProvider => {}
                }
            }
        }
        parameters
    }

    /// The mode's Dubbo name.
    pub fn name(&self) -> &'static str {
        match self {
            ClusterMode::Failover { .. } => "failover",
            ClusterMode::Failfast => "failfast",
            ClusterMode::Failsafe => "failsafe",
            ClusterMode::Available => "available",
            ClusterMode::Failback { .. } => "failback",
            ClusterMode::Forking { .. } => "forking",
            ClusterMode::Broadcast { .. } => "broadcast",
            ClusterMode::Mergeable { .. } => "mergeable",
        }
    }
}

/// `merger` values that mean "do not merge" (Dubbo's `ConfigUtils.isEmpty`).
fn no_merger(value: &str) -> bool {
    ["", "false", "0", "null", "n/a"]
        .iter()
        .any(|empty| value.trim().eq_ignore_ascii_case(empty))
}

fn mergeable(consumer: &DubboUrl, method: &str, groups: Groups) -> ClusterMode {
    let merger = consumer
        .method_parameter(method, "merger")
        .filter(|m| !no_merger(m))
        .map(|m| Arc::from(m.trim()));
    ClusterMode::Mergeable {
        merger,
        groups,
        retries: RETRIES.method_value(consumer, method) as u32,
    }
}

/// A mode by its Dubbo name (`"failfast"`), with Dubbo's default parameters.
///
/// ```
/// use rudder_cluster::cluster::ClusterMode;
/// assert_eq!("failover".parse(), Ok(ClusterMode::Failover { retries: 2 }));
/// assert!("zone-aware".parse::<ClusterMode>().is_err());
/// ```
impl std::str::FromStr for ClusterMode {
    type Err = UnsupportedClusterMode;

    fn from_str(name: &str) -> Result<ClusterMode, UnsupportedClusterMode> {
        let consumer =
            DubboUrl::new("consumer", "127.0.0.1", 0, "").with_parameter("cluster", name);
        ClusterMode::from_consumer(&consumer, "")
    }
}

impl fmt::Display for ClusterMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterMode::Failover { retries } => write!(f, "failover (retries={retries})"),
            ClusterMode::Failback {
                retries,
                tasks,
                period_millis,
            } => write!(
                f,
                "failback (retries={retries}, failbacktasks={tasks}, retry.period={period_millis})"
            ),
            ClusterMode::Forking {
                forks,
                timeout_millis,
            } => write!(f, "forking (forks={forks}, timeout={timeout_millis})"),
            ClusterMode::Broadcast { fail_percent } => {
                write!(f, "broadcast (broadcast.fail.percent={fail_percent})")
            }
            ClusterMode::Mergeable { merger, .. } => match merger {
                Some(merger) => write!(f, "mergeable (merger={merger})"),
                None => f.write_str("mergeable (first group)"),
            },
            other => f.write_str(other.name()),
        }
    }
}

/// Methods whose modes [`MethodModes`] keeps when some setting is per method.
const MODE_SLOTS: usize = 16;

/// The [`ClusterMode`] of each method of one consumer, read from its parameters once instead of on
/// every call ([`ClusterMode::from_consumer`] is a dozen parameter lookups).
///
/// A consumer's parameters do not change for the life of a reference, so a method's mode never
/// changes either. When no parameter is a per-method one that modes read (`<method>.retries`,
/// `<method>.timeout`, `<method>.merger`), every method has the same mode, read once; otherwise the
/// modes of the first 16 methods called are kept, and further methods are read on each call.
/// A name rudder does not implement reads as the default mode (failover), as calls always have.
///
/// ```
/// use rudder_cluster::cluster::{ClusterMode, MethodModes};
/// use rudder_common::url::DubboUrl;
/// let consumer = DubboUrl::parse("consumer://10.0.0.9/S?retries=4&save.retries=0").unwrap();
/// let modes = MethodModes::new(consumer);
/// assert_eq!(*modes.get("get"), ClusterMode::Failover { retries: 4 });
/// assert_eq!(*modes.get("save"), ClusterMode::Failover { retries: 0 });
/// ```
pub struct MethodModes {
    consumer: DubboUrl,
    /// The mode of every method, when no setting is per method.
    same: Option<ClusterMode>,
    /// Modes of the first methods called, filled in order and never replaced.
    slots: [std::sync::OnceLock<(Box<str>, ClusterMode)>; MODE_SLOTS],
    writer: std::sync::Mutex<()>,
}

impl MethodModes {
    /// The modes of `consumer`'s methods.
    pub fn new(consumer: DubboUrl) -> MethodModes {
        let per_method = consumer.parameters().any(|(key, _)| {
            [".retries", ".timeout", ".merger"]
                .iter()
                .any(|suffix| key.ends_with(suffix))
        });
        let same = (!per_method).then(|| read(&consumer, ""));
        MethodModes {
            consumer,
            same,
            slots: Default::default(),
            writer: std::sync::Mutex::new(()),
        }
    }

    /// The mode of `method`: borrowed from the cache, or read now past its 16 slots.
    pub fn get(&self, method: &str) -> std::borrow::Cow<'_, ClusterMode> {
        use std::borrow::Cow;
        if let Some(mode) = &self.same {
            return Cow::Borrowed(mode);
        }
        let is_method = |(m, _): &&(Box<str>, ClusterMode)| **m == *method;
        let filled = || self.slots.iter().map_while(std::sync::OnceLock::get);
        if let Some((_, mode)) = filled().find(is_method) {
            return Cow::Borrowed(mode);
        }
        let _writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Another thread may have filled it while this one waited.
        if let Some((_, mode)) = filled().find(is_method) {
            return Cow::Borrowed(mode);
        }
        let mode = read(&self.consumer, method);
        match self.slots.iter().find(|slot| slot.get().is_none()) {
            Some(slot) => Cow::Borrowed(&slot.get_or_init(|| (method.into(), mode)).1),
            None => Cow::Owned(mode),
        }
    }
}

/// A method's mode; a name rudder does not implement is the default, as [`MethodModes`] says.
fn read(consumer: &DubboUrl, method: &str) -> ClusterMode {
    ClusterMode::from_consumer(consumer, method).unwrap_or_default()
}

impl fmt::Debug for MethodModes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MethodModes")
            .field("same", &self.same)
            .finish_non_exhaustive()
    }
}
