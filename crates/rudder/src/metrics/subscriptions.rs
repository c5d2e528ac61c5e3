//! Registry subscriptions in the exposition (feature `zookeeper`): each field of
//! [`SubscriptionStatus`](rudder_registry::SubscriptionStatus) as one metric.

use std::fmt;

use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;

/// One registry subscription at scrape time: its labels and what its status channel last said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SubscriptionSample {
    /// A number unique among the consumer's subscriptions (two references may follow one service).
    pub(crate) id: u64,
    /// The registry's servers (`host:port,...`), never its credentials.
    pub(crate) registry: String,
    pub(crate) service: String,
    pub(crate) generation: u64,
    pub(crate) listings: u64,
    pub(crate) providers: u64,
    pub(crate) configurators: u64,
    pub(crate) malformed: u64,
    pub(crate) rejected: u64,
    pub(crate) connected: bool,
    pub(crate) sessions: u64,
    pub(crate) registered: bool,
    pub(crate) empty_protected: bool,
    pub(crate) empty_pushes_kept: u64,
}

/// One metric per field of the subscriptions' status, labelled by registry, service and id.
pub(crate) fn encode(
    samples: &[SubscriptionSample],
    encoder: &mut DescriptorEncoder<'_>,
) -> fmt::Result {
    type Field = fn(&SubscriptionSample) -> u64;
    let fields: [(&str, &str, MetricType, Field); 11] = [
        (
            "rudder_registry_generation",
            "Changes of the provider list seen.",
            MetricType::Gauge,
            |s| s.generation,
        ),
        (
            "rudder_registry_listings",
            "Complete listings of providers and configurators read.",
            MetricType::Counter,
            |s| s.listings,
        ),
        (
            "rudder_registry_providers",
            "Providers in the directory after the last update.",
            MetricType::Gauge,
            |s| s.providers,
        ),
        (
            "rudder_registry_configurators",
            "Configurator rules in effect.",
            MetricType::Gauge,
            |s| s.configurators,
        ),
        (
            "rudder_registry_malformed",
            "Registry children that could not be read.",
            MetricType::Counter,
            |s| s.malformed,
        ),
        (
            "rudder_registry_rejected",
            "Provider URLs refused since the last full listing.",
            MetricType::Gauge,
            |s| s.rejected,
        ),
        (
            "rudder_registry_connected",
            "1 while the registry connection is up.",
            MetricType::Gauge,
            |s| u64::from(s.connected),
        ),
        (
            "rudder_registry_sessions",
            "Registry sessions the subscription has been attached to (one more after each expiry).",
            MetricType::Counter,
            |s| s.sessions,
        ),
        (
            "rudder_registry_registered",
            "1 while the consumer node is registered.",
            MetricType::Gauge,
            |s| u64::from(s.registered),
        ),
        (
            "rudder_registry_empty_protected",
            "1 while empty-push protection keeps the last providers (enable-empty-protection).",
            MetricType::Gauge,
            |s| u64::from(s.empty_protected),
        ),
        (
            "rudder_registry_empty_pushes_kept",
            "Empty provider lists refused by empty-push protection.",
            MetricType::Counter,
            |s| s.empty_pushes_kept,
        ),
    ];
    for (name, help, kind, read) in fields {
        let mut family = encoder.encode_descriptor(name, help, None, kind)?;
        for sample in samples {
            let id = sample.id.to_string();
            let labels = [
                ("registry", sample.registry.as_str()),
                ("service", sample.service.as_str()),
                ("subscription", id.as_str()),
            ];
            let mut metric = family.encode_family(&labels)?;
            match kind {
                MetricType::Counter => {
                    metric.encode_counter::<NoLabelSet, _, u64>(&read(sample), None)?
                }
                _ => metric.encode_gauge(&read(sample))?,
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use prometheus_client::collector::Collector;
    use prometheus_client::registry::Registry;

    use super::*;

    #[derive(Debug)]
    struct Fixed(Vec<SubscriptionSample>);

    impl Collector for Fixed {
        fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
            encode(&self.0, &mut encoder)
        }
    }

    #[test]
    fn every_status_field_is_a_series_labelled_by_registry_service_and_subscription() {
        let sample = SubscriptionSample {
            id: 7,
            registry: "127.0.0.1:2181,127.0.0.1:2182".into(),
            service: "com.acme.Greeter".into(),
            generation: 3,
            listings: 5,
            providers: 2,
            configurators: 1,
            malformed: 4,
            rejected: 6,
            connected: true,
            sessions: 2,
            registered: false,
            empty_protected: true,
            empty_pushes_kept: 3,
        };
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Fixed(vec![sample])));
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        let labels = r#"{registry="127.0.0.1:2181,127.0.0.1:2182",service="com.acme.Greeter",subscription="7"}"#;
        for (name, value) in [
            ("rudder_registry_generation", 3),
            ("rudder_registry_listings_total", 5),
            ("rudder_registry_providers", 2),
            ("rudder_registry_configurators", 1),
            ("rudder_registry_malformed_total", 4),
            ("rudder_registry_rejected", 6),
            ("rudder_registry_connected", 1),
            ("rudder_registry_sessions_total", 2),
            ("rudder_registry_registered", 0),
            ("rudder_registry_empty_protected", 1),
            ("rudder_registry_empty_pushes_kept_total", 3),
        ] {
            let line = format!("{name}{labels} {value}\n");
            assert!(text.contains(&line), "{line} missing from:\n{text}");
        }
    }
}
