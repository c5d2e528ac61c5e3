//! A registry URL as a reference reads it, and the reference's `check`.
//!
//! A registry URL may also say how a reference with several registries chooses among them
//! (`zookeeper://h:p?zone=hz&weight=300&preferred=true`, see [`rudder_cluster::zone_aware`]). Those
//! parameters are read here and stripped before the URL opens a registry, so they never make two
//! connections to one registry. Everything else in the URL is the registry implementation's to read
//! ([`rudder_registry::locate`]), but `timeout`, which Dubbo gives every registry: the connect
//! timeout, and the build's deadline.

use std::time::Duration;

use rudder_cluster::zone_aware::{RegistryChoice, REGISTRY_CHOICE_KEYS};
use rudder_common::url::DubboUrl;

use crate::error::BuildError;

/// One registry URL as a reference reads it: the URL its registry is opened with, and how the
/// registry is chosen among several (`preferred`, `zone`, `weight`, stripped from the URL): for tools
/// that read registry URLs as references do (`rudder::tools`; the CLI does).
///
/// ```
/// use rudder::tools::RegistryTarget;
/// let target = RegistryTarget::parse("zookeeper://127.0.0.1:2181?zone=hz&weight=300")?;
/// assert_eq!(target.session_url(), "zookeeper://127.0.0.1:2181");
/// assert_eq!(target.choice().label(), "zookeeper://127.0.0.1:2181/dubbo");
/// # Ok::<(), rudder::BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct RegistryTarget {
    /// The registry URL without the choice parameters.
    pub(crate) session_url: String,
    /// `preferred`, `zone` and `weight`, labelled with the address (no password).
    pub(crate) choice: RegistryChoice,
    /// What identifies the registry: two targets with one identity are the same registry, and share
    /// one connection. Never printed (it may hold credentials).
    pub(crate) identity: String,
    /// The registry's servers (`host:port,...`), a metric label.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) servers: String,
    /// The URL's `timeout` (connect, and the build's deadline; milliseconds, as Dubbo's registry URL
    /// takes it), over the consumer's registry options.
    pub(crate) timeout: Option<Duration>,
}

impl RegistryTarget {
    /// Reads a registry URL as [`ReferenceBuilder::registry`](crate::ReferenceBuilder::registry) takes it.
    ///
    /// # Errors
    /// [`BuildError::Registry`] (`BadRegistryUrl`) for a URL no registry implementation reads,
    /// [`BuildError::BadParameter`] for a `preferred`, `weight` or `timeout` of the wrong form.
    pub fn parse(url: &str) -> Result<RegistryTarget, BuildError> {
        let url = url.trim();
        let (head, query) = split_query(url);
        let mut kept: Vec<&str> = Vec::new();
        let mut choice_parameters: Vec<(&str, &str)> = Vec::new();
        for part in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            if REGISTRY_CHOICE_KEYS.contains(&key.trim()) {
                choice_parameters.push((key.trim(), value));
            } else {
                kept.push(part);
            }
        }
        let session_url = if kept.is_empty() {
            head.to_owned()
        } else {
            format!("{head}?{}", kept.join("&"))
        };
        let location = rudder_registry::locate(&session_url)?;
        let choice = RegistryChoice::from_parameters(location.address(), choice_parameters)
            .map_err(|e| BuildError::BadParameter(e.to_string()))?;
        Ok(RegistryTarget {
            identity: location.identity().to_owned(),
            servers: location.servers().to_owned(),
            timeout: registry_millis(query, "timeout")?,
            session_url,
            choice,
        })
    }

    /// The registry URL without the choice parameters: what opens the registry.
    pub fn session_url(&self) -> &str {
        &self.session_url
    }

    /// How this registry is chosen among several, labelled with its address (never its password).
    pub fn choice(&self) -> &RegistryChoice {
        &self.choice
    }
}

/// Whether a build fails when a registry gives no connection and first listing within its deadline
/// (Dubbo's reference `check`, default `true`); `check=false` builds without them, and the providers
/// arrive when the registry answers.
pub(crate) fn check(consumer_url: &DubboUrl) -> Result<bool, BuildError> {
    match consumer_url.parameter("check").map(str::trim) {
        None | Some("") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("true") => Ok(true),
        Some(value) if value.eq_ignore_ascii_case("false") => Ok(false),
        Some(value) => Err(BuildError::BadParameter(format!(
            "check={value:?} is not true or false"
        ))),
    }
}

/// The registry URL parameter `key` (Dubbo's `timeout`), in milliseconds.
fn registry_millis(query: &str, key: &str) -> Result<Option<Duration>, BuildError> {
    let Some(value) = query
        .split('&')
        .filter_map(|part| part.split_once('='))
        .find(|(k, _)| k.trim() == key)
        .map(|(_, v)| v.trim())
    else {
        return Ok(None);
    };
    match value.parse::<u64>() {
        Ok(millis) if millis > 0 => Ok(Some(Duration::from_millis(millis))),
        _ => Err(BuildError::BadParameter(format!(
            "registry {key}={value:?} is not a positive number of milliseconds"
        ))),
    }
}

/// `(everything before the query, the query)`. The query starts at the first `?` after the credentials,
/// which run to the last `@` before the query's first `=` (the rule registry URLs are read by, so a
/// password holding `?` is not taken for a query).
fn split_query(url: &str) -> (&str, &str) {
    let first_key_end = url
        .find('?')
        .and_then(|q| url[q..].find('=').map(|e| q + e))
        .unwrap_or(url.len());
    let host_start = url[..first_key_end].rfind('@').map_or(0, |at| at + 1);
    match url[host_start..].find('?') {
        Some(q) => (&url[..host_start + q], &url[host_start + q + 1..]),
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choice_parameters_are_read_and_kept_out_of_the_session_url() {
        let target = RegistryTarget::parse(
            "zookeeper://10.0.0.1:2181?zone=hz&backup=10.0.0.2:2181&weight=300&preferred=true",
        )
        .unwrap();
        assert_eq!(
            target.session_url,
            "zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181"
        );
        assert_eq!(
            target.choice,
            RegistryChoice::new("zookeeper://10.0.0.1:2181,10.0.0.2:2181/dubbo")
                .zone("hz")
                .weight(300)
                .preferred(true)
        );
        let plain =
            RegistryTarget::parse("zookeeper://10.0.0.2:2181?backup=10.0.0.1:2181").unwrap();
        assert_eq!(plain.identity, target.identity, "one ensemble, one session");
        assert_eq!(
            RegistryTarget::parse("zookeeper://10.0.0.1:2181?zone=sh")
                .unwrap()
                .session_url,
            "zookeeper://10.0.0.1:2181"
        );
    }

    #[test]
    fn a_password_with_a_question_mark_is_not_a_query() {
        let target = RegistryTarget::parse("zookeeper://app:a?b@10.0.0.1:2181?zone=hz").unwrap();
        assert_eq!(target.session_url, "zookeeper://app:a?b@10.0.0.1:2181");
        assert_eq!(target.choice.zone_name(), Some("hz"));
        assert!(
            !target.choice.label().contains("a?b"),
            "no password in the label"
        );
        assert_eq!(target.servers, "10.0.0.1:2181");
    }

    #[test]
    fn bad_choice_parameters_are_refused_by_name() {
        let error = RegistryTarget::parse("zookeeper://10.0.0.1:2181?weight=heavy").unwrap_err();
        assert!(error.to_string().contains("weight=\"heavy\""), "{error}");
        let error = RegistryTarget::parse("zookeeper://10.0.0.1:2181?timeout=-1").unwrap_err();
        assert!(error.to_string().contains("timeout=\"-1\""), "{error}");
    }

    /// The error and its causes, one per line (whichever of them says what).
    fn chain(error: &dyn std::error::Error) -> String {
        let mut text = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            text.push('\n');
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    #[test]
    fn a_registry_rudder_does_not_speak_is_refused_by_its_scheme() {
        let error = RegistryTarget::parse("consul://10.0.0.1:8500?zone=hz").unwrap_err();
        let text = chain(&error);
        assert!(
            text.contains("consul:// registries are not supported yet"),
            "{text}"
        );
    }
}
