//! Timeouts and retry pacing of the registry connection.

use std::time::Duration;

/// How long to wait for ZooKeeper, and how fast to retry when it is gone.
///
/// ```
/// use std::time::Duration;
/// use rudder_registry::RegistryOptions;
///
/// let options = RegistryOptions::default().with_connect_timeout(Duration::from_secs(3));
/// assert_eq!(options.connect_timeout(), Duration::from_secs(3));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistryOptions {
    connect_timeout: Duration,
    session_timeout: Duration,
    retry_initial: Duration,
    retry_max: Duration,
    read_only: bool,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            connect_timeout: Duration::from_secs(10),
            session_timeout: Duration::from_secs(30),
            retry_initial: Duration::from_millis(200),
            retry_max: Duration::from_secs(10),
            read_only: false,
        }
    }
}

impl RegistryOptions {
    /// How long [`ZookeeperRegistry::connect`](crate::ZookeeperRegistry::connect) waits for a first
    /// session before failing with [`RegistryError::Unreachable`](crate::RegistryError::Unreachable)
    /// (default 10 s). Also bounds each later reconnection attempt.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The session timeout asked of ZooKeeper (default 30 s; the server clamps it to its own bounds). A
    /// connection lost for longer expires the session: rudder then opens a new one, registers the consumer
    /// again and re-lists.
    pub fn with_session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// First and longest pause between retries after a failure (default 200 ms doubling to 10 s).
    pub fn with_retry(mut self, initial: Duration, max: Duration) -> Self {
        self.retry_initial = initial.max(Duration::from_millis(1));
        self.retry_max = max.max(self.retry_initial);
        self
    }

    /// Whether discovery writes nothing but a consumer node (default `false`, as Dubbo's consumer).
    ///
    /// A Dubbo consumer creates the persistent category nodes it subscribes to
    /// (`<root>/<interface>/{providers,configurators,consumers}`) when they are missing, so a
    /// mistyped interface leaves a service behind that every tool then lists. Read-only, a missing
    /// category is watched for its creation instead (no provider until someone creates it), and the
    /// consumer node (when the subscription registers one) is written only under a service node that
    /// exists, creating at most its `consumers` node. [`Registry::register_provider`](crate::Registry)
    /// is an explicit write and is not affected. `rudder list`, `providers` and `simulate` read this
    /// way.
    ///
    /// ```
    /// use rudder_registry::RegistryOptions;
    ///
    /// assert!(RegistryOptions::default().with_read_only(true).read_only());
    /// ```
    pub fn with_read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// See [`RegistryOptions::with_read_only`].
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// See [`RegistryOptions::with_connect_timeout`].
    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// See [`RegistryOptions::with_session_timeout`].
    pub fn session_timeout(&self) -> Duration {
        self.session_timeout
    }

    /// The pause after the `attempt`-th consecutive failure (0-based): doubling, capped.
    pub(crate) fn retry_delay(&self, attempt: u32) -> Duration {
        self.retry_initial
            .saturating_mul(2u32.saturating_pow(attempt.min(16)))
            .min(self.retry_max)
    }
}
