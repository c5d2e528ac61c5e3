//! One usable provider, parsed once when it enters a directory snapshot.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, OnceLock};

use rudder_common::status::availability::Availability;
use rudder_common::status::record::RecordProviders;
use rudder_common::status::{ProviderStatus, StatusRegistry};
use rudder_common::url::ranges::IntRange;
use rudder_common::url::{DubboUrl, UrlError};

/// Dubbo's default provider weight.
pub const DEFAULT_WEIGHT: i32 = 100;
/// Dubbo's default warmup period: 10 minutes.
pub const DEFAULT_WARMUP_MILLIS: i64 = 600_000;

/// `weight` and `<method>.weight`: 0 ..= 2^31-1 (Dubbo's `int`; a negative weight is 0, as Dubbo's
/// `max(weight, 0)` makes it).
pub const WEIGHT: IntRange = IntRange {
    key: "weight",
    default: DEFAULT_WEIGHT as i64,
    min: 0,
    max: i32::MAX as i64,
};

/// `warmup`, ms: 0 (no warmup) ..= 2^31-1 (Dubbo's `int`).
pub const WARMUP: IntRange = IntRange {
    key: "warmup",
    default: DEFAULT_WARMUP_MILLIS,
    min: 0,
    max: i32::MAX as i64,
};

/// `timestamp`, the provider's start in epoch ms: 0 (unknown: no warmup) ..= 2^63-1.
pub const TIMESTAMP: IntRange = IntRange {
    key: "timestamp",
    default: 0,
    min: 0,
    max: i64::MAX,
};

/// A provider as the balancers see it: its URL plus everything a pick needs, parsed ahead of time.
///
/// Numeric parameters that balancers read (`weight`, every `<method>.weight`, `warmup`, `timestamp`) are
/// read within their ranges ([`WEIGHT`], [`WARMUP`], [`TIMESTAMP`]): a value that is not a number is
/// ignored with one warning (a bad `<method>.weight` falls back to `weight`, so it disables only itself),
/// one outside the range is clamped. A provider is never dropped for a parameter.
///
/// ```
/// use rudder_cluster::provider::Provider;
/// use rudder_common::url::DubboUrl;
/// use rudder_common::status::StatusRegistry;
///
/// let url = DubboUrl::parse("dubbo://10.0.0.1:20880/com.acme.Greeter?weight=200&timestamp=1700000000000")?;
/// let provider = Provider::new(url, &StatusRegistry::default())?;
/// assert_eq!(provider.address(), "10.0.0.1:20880");
/// assert_eq!(provider.timestamp(), 1_700_000_000_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Provider {
    url: DubboUrl,
    identity: Arc<str>,
    /// `toFullString`: what the directory compares and orders providers by.
    full_url: Box<str>,
    address: Arc<str>,
    timestamp: i64,
    warmup: i64,
    status: Arc<ProviderStatus>,
    /// What the caller made for this provider on first use (its endpoint): see [`Provider::cached`].
    cached: OnceLock<Box<dyn Any + Send + Sync>>,
    /// Whether its connection is up, as the transport says: see [`Provider::watch_availability`].
    availability: OnceLock<Availability>,
}

impl Provider {
    /// Reads the balancer-relevant parameters of `url` and attaches its statistics from `statuses`.
    ///
    /// # Errors
    /// None today: kept fallible for parameters that cannot be defaulted.
    pub fn new(url: DubboUrl, statuses: &StatusRegistry) -> Result<Provider, UrlError> {
        let timestamp = TIMESTAMP.value(&url);
        let warmup = WARMUP.value(&url);
        let identity: Arc<str> = url.identity().into();
        let status = statuses.provider(&identity);
        let full_url = url.to_full_string().into();
        Ok(Provider {
            full_url,
            address: url.address().into(),
            identity,
            timestamp,
            warmup,
            status,
            url,
            cached: OnceLock::new(),
            availability: OnceLock::new(),
        })
    }

    /// The value of type `T` kept with this provider, made by `make` on first use and kept for the
    /// provider's life: how a caller keeps each provider's endpoint (its connections resolved once,
    /// not per call) without the cluster knowing what an endpoint is. One value per provider: `None`
    /// when one of another type was kept first.
    ///
    /// ```
    /// # use rudder_cluster::provider::Provider;
    /// # use rudder_common::{status::StatusRegistry, url::DubboUrl};
    /// let url = DubboUrl::parse("dubbo://10.0.0.1:20880/com.acme.Greeter")?;
    /// let provider = Provider::new(url, &StatusRegistry::default())?;
    /// assert_eq!(provider.cached(|| 7u32), Some(&7));
    /// assert_eq!(provider.cached(|| 8u32), Some(&7)); // made once
    /// assert_eq!(provider.cached(|| "other type"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn cached<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Option<&T> {
        self.cached
            .get_or_init(|| Box::new(make()))
            .downcast_ref::<T>()
    }

    /// Reads the provider's availability from `availability` (its endpoint's, set by the transport)
    /// from now on: the balancer leaves it out of picks while it is down (`cluster.availablecheck`).
    /// The first one given stays. Until one is given the provider counts as available.
    ///
    /// ```
    /// # use rudder_cluster::provider::Provider;
    /// # use rudder_common::{status::StatusRegistry, url::DubboUrl};
    /// use rudder_common::status::{availability::Availability, record::RecordAvailability};
    /// let url = DubboUrl::parse("dubbo://10.0.0.1:20880/com.acme.Greeter")?;
    /// let provider = Provider::new(url, &StatusRegistry::default())?;
    /// let connection = Availability::default();
    /// provider.watch_availability(connection.clone());
    /// connection.mark_down_until(std::time::Instant::now() + std::time::Duration::from_secs(9));
    /// assert!(!provider.is_available());
    /// connection.mark_up();
    /// assert!(provider.is_available());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn watch_availability(&self, availability: Availability) {
        let _ = self.availability.set(availability);
    }

    /// Whether a call may go to the provider now (Dubbo's `invoker.isAvailable()`): its connection is
    /// up, not yet tried, or due for its next reconnect attempt.
    #[inline]
    pub fn is_available(&self) -> bool {
        self.availability
            .get()
            .is_none_or(Availability::is_available)
    }

    /// The provider URL as the registry (plus configurators) describes it.
    pub fn url(&self) -> &DubboUrl {
        &self.url
    }

    /// `protocol://host:port/path`: the key its statistics and round-robin state live under.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// [`Provider::identity`], shared.
    pub(crate) fn shared_identity(&self) -> &Arc<str> {
        &self.identity
    }

    /// The full URL as Dubbo's `toFullString` writes it: the provider's key in the directory.
    pub fn full_url(&self) -> &str {
        &self.full_url
    }

    /// `host:port`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The configured weight for `method` (`<method>.weight`, then `weight`, default 100), before warmup.
    pub fn configured_weight(&self, method: &str) -> i32 {
        WEIGHT.method_value(&self.url, method) as i32
    }

    /// The provider's start time (`timestamp`, epoch ms); 0 when unknown, which disables warmup.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }

    /// The warmup period in ms (`warmup`, default 600000).
    pub fn warmup(&self) -> i64 {
        self.warmup
    }

    /// The provider's call statistics.
    pub fn status(&self) -> &Arc<ProviderStatus> {
        &self.status
    }
}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Provider")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}
