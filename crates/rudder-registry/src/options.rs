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
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            connect_timeout: Duration::from_secs(10),
            session_timeout: Duration::from_secs(30),
            retry_initial: Duration::from_millis(200),
            retry_max: Duration::from_secs(10),
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
