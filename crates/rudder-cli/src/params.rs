//! `--param KEY=VALUE` and `--loadbalance NAME`: consumer-side parameters, merged into every provider
//! URL as Dubbo 3.3 resolves them (consumer `m.k`, provider `m.k`, consumer `k`, provider `k`; see
//! `rudder_common::url::merge`). `METHOD.KEY=VALUE` sets one for a single method.

use anyhow::{bail, Result};
use clap::Args;
use rudder_cluster::loadbalance::LoadBalanceRegistry;
use rudder_common::url::merge::ConsumerParams;
use rudder_common::url::DubboUrl;

/// More consumer parameters than this on one command line is a mistake.
const MAX_PARAMS: usize = 256;

/// Consumer-side parameters of `simulate`, `providers` and `invoke`.
#[derive(Debug, Clone, Default, Args)]
pub(crate) struct ConsumerArgs {
    /// A consumer-side parameter, KEY=VALUE or METHOD.KEY=VALUE (repeatable, at most 256): `timeout`,
    /// `retries`, `cluster`, `sayHello.loadbalance`, ... Consumer values beat the provider's, except
    /// that a provider's METHOD.KEY beats a consumer's plain KEY, as in Dubbo.
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = key_value)]
    params: Vec<(String, String)>,
    /// The load balancer: shorthand for --param loadbalance=NAME.
    #[arg(long, value_name = "NAME")]
    loadbalance: Option<String>,
}

fn key_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() && !key.contains(['&', '?']) => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(format!(
            "expected KEY=VALUE (a non-empty key without '&' or '?'), got {text:?}"
        )),
    }
}

impl ConsumerArgs {
    /// Every parameter, `--loadbalance` last so that it wins over a `--param loadbalance=`.
    pub(crate) fn pairs(&self) -> Result<Vec<(String, String)>> {
        if self.params.len() > MAX_PARAMS {
            bail!(
                "at most {MAX_PARAMS} --param values, got {}",
                self.params.len()
            );
        }
        let mut pairs = self.params.clone();
        if let Some(name) = &self.loadbalance {
            pairs.push(("loadbalance".to_owned(), name.clone()));
        }
        Ok(pairs)
    }

    /// The consumer URL of `interface` with these parameters, every `loadbalance` name checked. Its
    /// host is the address a consumer on this machine registers and routes by
    /// (`DUBBO_IP_TO_REGISTRY`, else the first non-loopback address), so `host = ...` rules decide
    /// here as they would for that consumer.
    pub(crate) fn consumer_url(&self, interface: &str) -> Result<DubboUrl> {
        let policies = LoadBalanceRegistry::with_builtins();
        let host = rudder_common::net::consumer_host()?;
        let mut url = DubboUrl::new("consumer", &host, 0, interface);
        for (key, value) in self.pairs()? {
            if key == "loadbalance" || key.ends_with(".loadbalance") {
                policies.get(&value)?;
            }
            url = url.with_parameter(&key, &value);
        }
        Ok(url)
    }

    /// [`ConsumerArgs::consumer_url`] asking for `version` and `group` too: what rules are keyed by.
    pub(crate) fn service_consumer_url(
        &self,
        interface: &str,
        version: Option<&str>,
        group: Option<&str>,
    ) -> Result<DubboUrl> {
        let mut url = self.consumer_url(interface)?;
        for (key, value) in [("version", version), ("group", group)] {
            if let Some(value) = value {
                url = url.with_parameter(key, value);
            }
        }
        Ok(url)
    }

    /// The parameters ready to merge into provider URLs.
    pub(crate) fn merge(&self, interface: &str) -> Result<ConsumerParams> {
        Ok(ConsumerParams::new(&self.consumer_url(interface)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_need_a_key_and_loadbalance_is_shorthand() {
        assert_eq!(
            key_value("a.timeout=5").unwrap(),
            ("a.timeout".into(), "5".into())
        );
        assert_eq!(key_value("tag=").unwrap(), ("tag".into(), String::new()));
        assert!(key_value("=5").is_err());
        assert!(key_value("novalue").is_err());
        assert!(key_value("a&b=1").is_err());
        let args = ConsumerArgs {
            params: vec![("loadbalance".into(), "random".into())],
            loadbalance: Some("roundrobin".into()),
        };
        let url = args.consumer_url("S").unwrap();
        assert_eq!(url.parameter("loadbalance"), Some("roundrobin"));
        let unknown = ConsumerArgs {
            params: vec![("m.loadbalance".into(), "nosuchlb".into())],
            loadbalance: None,
        };
        assert!(unknown
            .consumer_url("S")
            .unwrap_err()
            .to_string()
            .contains("nosuchlb"));
    }
}
