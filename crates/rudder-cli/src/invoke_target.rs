//! Where `rudder invoke` (and `rudder bench`) send their calls: a direct `--url`, with `--interface`, `--version` and
//! `--group` applied to it as Dubbo applies a reference's to a direct URL, or the providers of
//! `--registry`; and the checks that answer a wrong call before any is made (unknown method, arguments
//! that fit no overload, a version or group nobody provides).

use anyhow::{bail, Context, Result};
use rudder::{Consumer, Reference};
use rudder_common::error::{RpcError, RpcErrorKind};
use rudder_common::url::DubboUrl;
use serde_json::Value as Json;

use crate::params::ConsumerArgs;
use crate::registry_args::RegistryArgs;
use crate::service_info::{self, Overload};

/// The protocols `--url` may name.
const SPOKEN: [&str; 2] = ["dubbo", "tri"];

/// The provider URL `--url` names, with the flags applied: the interface as its path when it has
/// none, and `version` / `group` as parameters (what the request carries). A flag that contradicts
/// the URL is an error naming both.
pub(crate) fn direct_url(
    text: &str,
    interface: Option<&str>,
    version: Option<&str>,
    group: Option<&str>,
) -> Result<DubboUrl> {
    let url = DubboUrl::parse_any(text).with_context(|| format!("--url {text}"))?;
    match url.protocol() {
        p if SPOKEN.contains(&p) => {}
        "" => bail!("--url {text} has no scheme: write dubbo://HOST:PORT/INTERFACE"),
        "triple" | "grpc" => bail!(
            "--url {text}: {}:// is not a Dubbo URL scheme; Triple providers are tri://HOST:PORT/INTERFACE",
            url.protocol()
        ),
        other => {
            bail!("--url {text}: {other}:// is not supported; rudder calls providers over dubbo:// and tri://")
        }
    }
    let in_url = url.service_interface().to_owned();
    let interface = match (
        interface.map(str::trim).filter(|i| !i.is_empty()),
        in_url.is_empty(),
    ) {
        (Some(flag), false) if flag != in_url => {
            bail!("--interface {flag} conflicts with the service {in_url} in --url {text}")
        }
        (Some(flag), _) => flag.to_owned(),
        (None, false) => in_url,
        (None, true) => bail!(
            "--url {text} names no service: give --interface, or write dubbo://HOST:PORT/INTERFACE"
        ),
    };
    let mut applied = if url.path().is_empty() {
        let mut rebuilt = DubboUrl::new(url.protocol(), url.host(), url.port(), &interface);
        for (key, value) in url.parameters() {
            rebuilt = rebuilt.with_parameter(key, value);
        }
        rebuilt
    } else {
        url
    };
    for (key, flag) in [("version", version), ("group", group)] {
        let Some(flag) = flag.map(str::trim).filter(|v| !v.is_empty()) else {
            continue;
        };
        match applied
            .parameter(key)
            .map(str::trim)
            .filter(|v| !v.is_empty())
        {
            Some(in_url) if in_url != flag => {
                bail!("--{key} {flag} conflicts with {key}={in_url} in --url {text}")
            }
            _ => applied = applied.with_parameter(key, flag),
        }
    }
    Ok(applied)
}

/// Where a command's calls go, as `invoke` and `bench` both take it from their flags.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallTarget<'a> {
    pub(crate) url: Option<&'a str>,
    pub(crate) interface: Option<&'a str>,
    pub(crate) version: Option<&'a str>,
    pub(crate) group: Option<&'a str>,
    pub(crate) registry: &'a RegistryArgs,
    pub(crate) consumer: &'a ConsumerArgs,
    /// Per-call timeout, ms.
    pub(crate) timeout: Option<u64>,
}

impl CallTarget<'_> {
    /// The interface the calls are for: `--url`'s (with `--interface` applied), else `--interface`.
    pub(crate) fn interface(&self) -> Result<String> {
        match (self.url, self.interface) {
            (Some(url), _) => Ok(direct_url(url, self.interface, None, None)?
                .service_interface()
                .to_owned()),
            (None, Some(interface)) => Ok(interface.to_owned()),
            (None, None) => bail!("--interface is required with --registry"),
        }
    }

    /// Builds the reference the calls go through, to `interface`.
    pub(crate) async fn reference(
        &self,
        consumer: &Consumer,
        interface: &str,
    ) -> Result<Reference> {
        let mut builder = consumer.reference(interface);
        if let Some(url) = self.url {
            let url = direct_url(url, Some(interface), self.version, self.group)?;
            builder = builder.provider(&url.to_full_string());
        } else {
            self.registry.check_reachable().await?;
        }
        for target in &self.registry.registry {
            builder = builder.registry(target);
        }
        if let Some(v) = self.version {
            builder = builder.version(v);
        }
        if let Some(g) = self.group {
            builder = builder.group(g);
        }
        let pairs = self.consumer.pairs()?;
        if let Some(url) = self.url {
            // One address: failover would send a retry to it again, and list it once per try. Not
            // retried unless the URL or --param asks for retries.
            let asked = pairs
                .iter()
                .any(|(k, _)| k == "retries" || k.ends_with(".retries"))
                || DubboUrl::parse_any(url).is_ok_and(|u| u.parameter("retries").is_some());
            if !asked {
                builder = builder.parameter("retries", "0");
            }
        }
        for (key, value) in pairs {
            builder = builder.parameter(&key, &value);
        }
        if let Some(t) = self.timeout {
            builder = builder.timeout(std::time::Duration::from_millis(t));
        }
        Ok(builder.build().await?)
    }
}

/// Every provider URL the reference sees now, in every registry.
pub(crate) fn provider_urls(reference: &Reference) -> Vec<DubboUrl> {
    reference
        .snapshots()
        .into_iter()
        .flat_map(|snapshot| {
            snapshot
                .providers()
                .iter()
                .map(|p| p.url().clone())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What the first registry knows of `interface` beyond the reference's own providers: every provider
/// URL of any version or group, and the metadata report's overloads. Empty without a registry.
pub(crate) struct RegistryKnowledge {
    pub(crate) all_providers: Vec<DubboUrl>,
    pub(crate) overloads: Vec<Overload>,
    /// The field types of the classes the metadata report describes.
    pub(crate) field_types: crate::field_types::FieldTypes,
}

/// Reads [`RegistryKnowledge`] through a short session of its own (the reference's sessions are
/// internal to the consumer).
pub(crate) async fn registry_knowledge(
    registry_args: &RegistryArgs,
    interface: &str,
) -> Result<RegistryKnowledge> {
    let mut knowledge = RegistryKnowledge {
        all_providers: Vec::new(),
        overloads: Vec::new(),
        field_types: Default::default(),
    };
    let mut texts = Vec::new();
    for target in registry_args.targets()? {
        let registry = registry_args.connect(target.session_url()).await?;
        let read = async {
            let providers = registry.provider_urls(interface).await?;
            let definitions = registry.service_definitions(interface).await?;
            Ok::<_, rudder_registry::RegistryError>((providers, definitions))
        }
        .await;
        registry.close().await;
        let (providers, definitions) = read.context("reading the registry")?;
        knowledge.all_providers.extend(providers);
        knowledge
            .overloads
            .extend(service_info::overloads(&definitions));
        texts.extend(definitions.into_iter().map(|d| d.text));
    }
    knowledge.field_types =
        crate::field_types::FieldTypes::from_definitions(texts.iter().map(String::as_str));
    knowledge.overloads.sort();
    knowledge.overloads.dedup();
    Ok(knowledge)
}

/// The error for a reference without providers: which versions or groups exist, when that is why.
pub(crate) fn no_provider(
    interface: &str,
    target: &CallTarget<'_>,
    knowledge: &RegistryKnowledge,
) -> RpcError {
    let reason = service_info::missing_version_or_group(
        interface,
        target.version,
        target.group,
        &knowledge.all_providers,
    )
    .unwrap_or_else(|| {
        let protocols: std::collections::BTreeSet<&str> = knowledge
            .all_providers
            .iter()
            .map(DubboUrl::protocol)
            .collect();
        format!(
            "no usable provider of {interface}: {} listed (protocols {}), none that a dubbo:// \
             consumer of this version and group can use, or all disabled by a rule (see `rudder providers`)",
            knowledge.all_providers.len(),
            protocols.into_iter().collect::<Vec<_>>().join(", ")
        )
    });
    RpcError::new(RpcErrorKind::NoProvider, reason)
}

/// The parameter types to send for `method`: `types` (`--types`), checked against the metadata's
/// overloads when it has some, else the one overload the arguments fit, else inferred from the JSON.
pub(crate) fn parameter_types(
    method: &str,
    types: Option<&str>,
    items: &[Json],
    overloads: &[Overload],
) -> Result<Vec<String>> {
    let given: Option<Vec<String>> = types.map(|t| {
        t.split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect()
    });
    // Generic calls name the same Java types ($invoke looks the method up by them). Arguments that
    // fit no overload are a mistake on the command line, as arguments that do not convert to the
    // types are: exit code 2 for both (the method exists; nothing was called).
    if let Some(types) = service_info::choose_types(method, overloads, given.as_deref(), items)? {
        return Ok(types);
    }
    Ok(given.unwrap_or_else(|| {
        items
            .iter()
            .map(|j| crate::java_types::infer(j).to_owned())
            .collect()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_apply_to_a_direct_url_and_conflicts_name_both() {
        let url = direct_url(
            "dubbo://127.0.0.1:20880",
            Some("peer.Greeter"),
            Some("1.0.0"),
            None,
        )
        .unwrap();
        assert_eq!(
            url.to_full_string(),
            "dubbo://127.0.0.1:20880/peer.Greeter?version=1.0.0"
        );
        let url = direct_url(
            "dubbo://h:1/peer.Greeter?version=1.0.0",
            None,
            Some("1.0.0"),
            Some("g"),
        )
        .unwrap();
        assert_eq!(url.parameter("group"), Some("g"));
        let err = direct_url(
            "dubbo://h:1/peer.Greeter?version=1.0.0",
            None,
            Some("9.9"),
            None,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "--version 9.9 conflicts with version=1.0.0 in --url dubbo://h:1/peer.Greeter?version=1.0.0"
        );
        let err =
            direct_url("dubbo://h:1/peer.Greeter", Some("peer.Other"), None, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--interface peer.Other conflicts with the service peer.Greeter in --url dubbo://h:1/peer.Greeter"
        );
        assert!(direct_url("dubbo://h:1", None, None, None)
            .unwrap_err()
            .to_string()
            .contains("names no service"));
    }

    #[test]
    fn schemes_other_than_dubbo_and_tri_are_refused() {
        assert_eq!(
            direct_url("tri://h:1/S", None, None, None)
                .unwrap()
                .protocol(),
            "tri"
        );
        for (url, says) in [
            (
                "triple://h:1/S",
                "Triple providers are tri://HOST:PORT/INTERFACE",
            ),
            ("http://h:1/S", "http:// is not supported"),
            ("h:1/S", "--url"),
        ] {
            let err = direct_url(url, None, None, None).unwrap_err();
            assert!(format!("{err:#}").contains(says), "{url}: {err:#}");
        }
    }
}
