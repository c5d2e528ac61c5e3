//! Consumer settings merged into provider URLs, resolved as Dubbo 3.3 resolves them.
//!
//! A Dubbo consumer reads most settings of a call from the provider's URL *as seen by that consumer*: its
//! own `<dubbo:reference>` and `<dubbo:method>` settings first, the provider's after. Dubbo 3.3's
//! `ServiceAddressURL` answers `getMethodParameter(m, k)` in this order
//! (reference/dubbo-java-spec.md §1.5):
//!
//! 1. configurator override `m.k`, 2. consumer `m.k`, 3. provider `m.k`,
//! 4. configurator override `k`, 5. consumer `k`, 6. provider `k`.
//!
//! rudder builds that view once, when a provider enters a snapshot, as one flat URL: the provider's
//! parameters, then the consumer's on top ([`ConsumerParams::merge`]), then the configurators' on top of
//! that (the registry applies them to the merged URL). A lookup of `m.k` then `k` on the flat URL visits
//! exactly Dubbo's six layers in Dubbo's order, and a pick never merges anything.
//!
//! Some keys are never the consumer's:
//!
//! * `timestamp`, `release`, `dubbo`, `methods`, `dubbo.tag` (Dubbo's `ProviderFirstParams`), and the
//!   service identity `group`, `version`, `interface`, `application` (and `remote.application`, set to the
//!   provider's application), `side`, `category`: always the provider's;
//! * provider-only settings (`threads`, `threadpool`, `corethreads`, `queues`, `alive`, `threadname`,
//!   `transporter`, with their `default.` forms): dropped, they mean nothing to a consumer;
//! * cluster-level settings (`cluster`, `retries`, `forks`, `broadcast.fail.percent`, ...) are read by
//!   the cluster layer from the consumer's own URL, never from provider URLs, as Dubbo 3 does.
//!
//! `default.<key>` is an alias of `<key>` on either side: an explicit `<key>` on the same side beats it.
//!
//! ```
//! use rudder_common::url::{merge::ConsumerParams, DubboUrl};
//!
//! let provider = DubboUrl::parse(
//!     "dubbo://10.0.0.1:20880/com.acme.Greeter?loadbalance=random&timeout=500&sayHello.timeout=800&threads=200&timestamp=1",
//! )?;
//! let consumer = DubboUrl::parse("consumer://10.0.0.9/com.acme.Greeter?loadbalance=roundrobin&timeout=3000&timestamp=9")?;
//! let merged = ConsumerParams::new(&consumer).merge(&provider);
//! assert_eq!(merged.parameter("loadbalance"), Some("roundrobin"));              // consumer k beats provider k
//! assert_eq!(merged.method_parameter("sayHello", "timeout"), Some("800"));      // provider m.k beats consumer k
//! assert_eq!(merged.method_parameter("other", "timeout"), Some("3000"));
//! assert_eq!(merged.parameter("timestamp"), Some("1"));                          // always the provider's
//! assert_eq!(merged.parameter("threads"), None);                                 // provider-only
//! # Ok::<(), rudder_common::url::UrlError>(())
//! ```

use super::{DubboUrl, Params};

/// Keys whose value is always the provider's (Dubbo's `ProviderFirstParams` and the service identity).
pub const PROVIDER_FIRST: &[&str] = &[
    "timestamp",
    "release",
    "dubbo",
    "methods",
    "dubbo.tag",
    "group",
    "version",
    "interface",
    "application",
    "remote.application",
    "side",
    "category",
    "path",
];

/// Provider-side settings that a consumer drops (`DefaultProviderURLMergeProcessor`).
pub const PROVIDER_ONLY: &[&str] = &[
    "threadname",
    "threadpool",
    "corethreads",
    "threads",
    "queues",
    "alive",
    "transporter",
];

/// Cluster-level settings: read from the consumer's own URL by the cluster layer, never from providers.
pub const CONSUMER_ONLY: &[&str] = &[
    "cluster",
    "retries",
    "forks",
    "broadcast.fail.percent",
    "failbacktasks",
    "retry.period",
    "merger",
    "cluster.availablecheck",
    "cluster.sticky",
];

/// A consumer's parameters, prepared once, to merge into each of its providers' URLs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerParams {
    /// Plain keys with `default.` aliases resolved, provider-first keys removed.
    params: Params,
}

impl ConsumerParams {
    /// Takes the parameters of `consumer` (a `consumer://` URL, or any URL carrying consumer settings).
    pub fn new(consumer: &DubboUrl) -> ConsumerParams {
        let mut params = resolve_default_aliases(&consumer.params);
        for key in PROVIDER_FIRST {
            params.remove(key);
        }
        ConsumerParams { params }
    }

    /// Whether there is nothing to merge.
    pub fn is_empty(&self) -> bool {
        self.params.len() == 0
    }

    /// The consumer parameters that will be merged, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        self.params.iter()
    }

    /// `provider` as this consumer sees it: provider parameters, consumer parameters on top, with the
    /// exceptions listed in the [module docs](self).
    pub fn merge(&self, provider: &DubboUrl) -> DubboUrl {
        let mut params = resolve_default_aliases(&provider.params);
        for key in PROVIDER_ONLY {
            params.remove(key);
        }
        for (key, value) in self.params.iter() {
            params.set(key, value);
        }
        if let Some(application) = provider.parameter("application") {
            params.set("remote.application", application);
        }
        DubboUrl {
            params,
            ..provider.clone()
        }
    }
}

/// `default.k=v` becomes `k=v` unless `k` is set; the `default.` form itself is dropped, so a merge on
/// top cannot leave a stale alias behind a newer plain value.
fn resolve_default_aliases(params: &Params) -> Params {
    let mut out = Params::default();
    for (key, value) in params.iter() {
        if let Some(plain) = key.strip_prefix("default.") {
            if params.get(plain).is_none() {
                out.set(plain, value);
            }
        } else {
            out.set(key, value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> DubboUrl {
        DubboUrl::parse(s).unwrap()
    }

    /// Dubbo's six lookup layers, each set to a value naming it, in every combination of presence.
    #[test]
    fn method_lookup_visits_dubbo_layers_in_order() {
        // Bit i set: layer i present. Layers: 0 consumer m.k, 1 provider m.k, 2 consumer k, 3 provider k.
        for mask in 0u8..16 {
            let mut provider = url("dubbo://10.0.0.1:20880/S");
            let mut consumer = url("consumer://10.0.0.9/S");
            if mask & 1 != 0 {
                consumer = consumer.with_parameter("m.timeout", "consumer-m");
            }
            if mask & 2 != 0 {
                provider = provider.with_parameter("m.timeout", "provider-m");
            }
            if mask & 4 != 0 {
                consumer = consumer.with_parameter("timeout", "consumer");
            }
            if mask & 8 != 0 {
                provider = provider.with_parameter("timeout", "provider");
            }
            let expected = ["consumer-m", "provider-m", "consumer", "provider"]
                .iter()
                .enumerate()
                .find(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, v)| *v);
            let merged = ConsumerParams::new(&consumer).merge(&provider);
            assert_eq!(
                merged.method_parameter("m", "timeout"),
                expected,
                "mask {mask:04b}"
            );
        }
    }

    #[test]
    fn provider_first_keys_stay_the_providers() {
        let provider = url(
            "dubbo://10.0.0.1:20880/S?timestamp=1&release=3.3.6&dubbo=2.0.2&methods=a,b&dubbo.tag=gray&group=g&version=1&application=p",
        );
        let consumer = url(
            "consumer://10.0.0.9/S?timestamp=9&release=x&dubbo=x&methods=z&dubbo.tag=blue&group=other&version=2&application=c",
        );
        let merged = ConsumerParams::new(&consumer).merge(&provider);
        for (key, value) in [
            ("timestamp", "1"),
            ("release", "3.3.6"),
            ("dubbo", "2.0.2"),
            ("methods", "a,b"),
            ("dubbo.tag", "gray"),
            ("group", "g"),
            ("version", "1"),
            ("application", "p"),
            ("remote.application", "p"),
        ] {
            assert_eq!(merged.parameter(key), Some(value), "{key}");
        }
        assert_eq!(merged.address(), "10.0.0.1:20880");
        assert_eq!(merged.identity(), provider.identity());
    }

    #[test]
    fn provider_only_keys_are_dropped_with_their_default_forms() {
        let provider =
            url("dubbo://10.0.0.1:20880/S?threads=200&default.queues=5&threadpool=fixed&weight=7");
        let merged = ConsumerParams::default().merge(&provider);
        assert_eq!(merged.parameter("threads"), None);
        assert_eq!(merged.parameter("queues"), None);
        assert_eq!(merged.parameter("threadpool"), None);
        assert_eq!(merged.parameter("weight"), Some("7"));
    }

    #[test]
    fn default_alias_is_the_plain_key_on_each_side() {
        // A consumer `default.timeout` beats the provider's `timeout` (it is the consumer's `timeout`) ...
        let provider = url("dubbo://10.0.0.1:20880/S?timeout=500");
        let consumer = url("consumer://10.0.0.9/S?default.timeout=3000");
        let merged = ConsumerParams::new(&consumer).merge(&provider);
        assert_eq!(merged.parameter("timeout"), Some("3000"));
        // ... and an explicit key beats the alias on the same side.
        let consumer = url("consumer://10.0.0.9/S?default.timeout=3000&timeout=100");
        let merged = ConsumerParams::new(&consumer).merge(&provider);
        assert_eq!(merged.parameter("timeout"), Some("100"));
        let provider = url("dubbo://10.0.0.1:20880/S?default.weight=5");
        assert_eq!(
            ConsumerParams::default()
                .merge(&provider)
                .parameter("weight"),
            Some("5")
        );
    }

    #[test]
    fn an_empty_consumer_changes_nothing_but_aliases() {
        let provider = url("dubbo://10.0.0.1:20880/S?weight=3&sayHello.weight=9");
        let merged = ConsumerParams::new(&url("consumer://10.0.0.9/S")).merge(&provider);
        assert_eq!(merged.to_full_string(), provider.to_full_string());
    }
}
