//! One usable provider, parsed once when it enters a directory snapshot.

use std::fmt;
use std::sync::Arc;

use rudder_common::status::{ProviderStatus, StatusRegistry};
use rudder_common::url::{DubboUrl, UrlError};

/// Dubbo's default provider weight.
pub const DEFAULT_WEIGHT: i32 = 100;
/// Dubbo's default warmup period: 10 minutes.
pub const DEFAULT_WARMUP_MILLIS: i64 = 600_000;

/// A provider as the balancers see it: its URL plus everything a pick needs, parsed ahead of time.
///
/// Numeric parameters that balancers read (`weight`, every `<method>.weight`, `warmup`, `timestamp`) are
/// validated here, so a provider with a malformed number is rejected once, with an error naming the key,
/// instead of failing every call.
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
}

impl Provider {
    /// Parses the balancer-relevant parameters of `url` and attaches its statistics from `statuses`.
    ///
    /// # Errors
    /// [`UrlError::BadNumber`] when `weight`, a `<method>.weight`, `warmup` or `timestamp` is not a number.
    pub fn new(url: DubboUrl, statuses: &StatusRegistry) -> Result<Provider, UrlError> {
        for (key, value) in url.parameters() {
            let numeric = key == "weight" || key.ends_with(".weight") || key == "warmup";
            if numeric && !value.trim().is_empty() && value.trim().parse::<i32>().is_err() {
                return Err(UrlError::BadNumber {
                    key: key.to_owned(),
                    value: value.to_owned(),
                });
            }
        }
        let timestamp = url.parameter_number::<i64>("timestamp")?.unwrap_or(0);
        let warmup = url
            .parameter_number::<i32>("warmup")?
            .map_or(DEFAULT_WARMUP_MILLIS, i64::from);
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
        })
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
        // Validated in `new`, so a parse failure cannot happen here.
        self.url
            .method_parameter_number::<i32>(method, "weight")
            .ok()
            .flatten()
            .unwrap_or(DEFAULT_WEIGHT)
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
