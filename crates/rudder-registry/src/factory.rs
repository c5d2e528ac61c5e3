//! Choosing a [`Registry`] implementation by the registry URL's scheme.

use std::sync::Arc;

use crate::backend::{Registry, RegistryFactory, RegistryLocation};
use crate::error::RegistryError;
use crate::instance::metadata::MetadataFetcher;
use crate::nacos::NacosFactory;
use crate::options::RegistryOptions;
use crate::zookeeper::ZookeeperFactory;

/// The factories rudder has, in the order schemes are looked up.
static FACTORIES: &[&dyn RegistryFactory] = &[&ZookeeperFactory, &NacosFactory];

/// Schemes known to Dubbo that rudder does not speak yet, each refused by name.
const NOT_YET: &[&str] = &["etcd3", "consul", "polaris"];

/// The factory for `url`'s scheme (no scheme: ZooKeeper, as Dubbo reads a bare `host:port`).
///
/// # Errors
/// [`RegistryError::BadRegistryUrl`] naming the scheme when rudder does not speak it.
pub fn factory(url: &str) -> Result<&'static dyn RegistryFactory, RegistryError> {
    let scheme = scheme(url);
    let wanted = if scheme.is_empty() {
        "zookeeper"
    } else {
        scheme
    };
    if let Some(factory) = FACTORIES
        .iter()
        .find(|f| f.schemes().iter().any(|s| s.eq_ignore_ascii_case(wanted)))
    {
        return Ok(*factory);
    }
    let speaks: Vec<String> = FACTORIES
        .iter()
        .flat_map(|f| f.schemes())
        .map(|s| format!("{s}://"))
        .collect();
    let speaks = speaks.join(", ");
    let reason = if NOT_YET.iter().any(|s| s.eq_ignore_ascii_case(wanted)) {
        format!(
            "{}:// registries are not supported yet (rudder speaks {speaks})",
            wanted.to_ascii_lowercase()
        )
    } else {
        format!("only {speaks} registry URLs are supported")
    };
    Err(RegistryError::BadRegistryUrl { reason })
}

/// Reads `url` with the factory of its scheme ([`RegistryFactory::locate`]).
///
/// # Errors
/// [`RegistryError::BadRegistryUrl`].
pub fn locate(url: &str) -> Result<RegistryLocation, RegistryError> {
    factory(url)?.locate(url)
}

/// Opens a registry for `url` with the factory of its scheme ([`RegistryFactory::open`]); returns at
/// once.
///
/// # Errors
/// [`RegistryError::BadRegistryUrl`].
pub fn open(
    url: &str,
    options: RegistryOptions,
    metadata: Option<Arc<dyn MetadataFetcher>>,
) -> Result<Arc<dyn Registry>, RegistryError> {
    factory(url)?.open(url, options, metadata)
}

/// Opens a registry for `url` and waits at most `options`' connect timeout for its connection.
///
/// # Errors
/// As [`open`], and [`Registry::wait_connected`]'s (the registry is closed then).
pub async fn connect(
    url: &str,
    options: RegistryOptions,
    metadata: Option<Arc<dyn MetadataFetcher>>,
) -> Result<Arc<dyn Registry>, RegistryError> {
    let registry = open(url, options, metadata)?;
    match registry.wait_connected(options.connect_timeout()).await {
        Ok(()) => Ok(registry),
        Err(error) => {
            registry.close().await;
            Err(error)
        }
    }
}

/// The URL's scheme (before `://`, when that is made of scheme characters), or `""`.
fn scheme(url: &str) -> &str {
    let url = url.trim();
    match url.find("://") {
        Some(i)
            if url[..i]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')) =>
        {
            &url[..i]
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_choose_the_factory() {
        for url in [
            "zookeeper://10.0.0.1:2181",
            "ZooKeeper://10.0.0.1:2181",
            "10.0.0.1:2181",
            " zookeeper://app:p://w@10.0.0.1:2181 ",
        ] {
            assert_eq!(factory(url).unwrap().schemes(), &["zookeeper"], "{url}");
        }
    }

    #[test]
    fn nacos_has_its_factory_and_other_dubbo_schemes_are_refused_by_name() {
        assert_eq!(
            factory("nacos://10.0.0.1:8848?namespace=dev")
                .unwrap()
                .schemes(),
            &["nacos"]
        );
        let text = factory("consul://10.0.0.1:8500").unwrap_err().to_string();
        assert_eq!(
            text,
            "bad registry URL: consul:// registries are not supported yet (rudder speaks zookeeper://, nacos://)"
        );
    }

    #[test]
    fn an_unknown_scheme_is_refused_without_echoing_the_url() {
        let error = open(
            "etcd://user:s3cret@10.0.0.1:2379",
            RegistryOptions::default(),
            None,
        )
        .unwrap_err();
        assert!(matches!(error, RegistryError::BadRegistryUrl { .. }));
        assert!(!error.to_string().contains("s3cret"), "{error}");
        assert!(
            error.to_string().contains("zookeeper://, nacos://"),
            "{error}"
        );
    }
}
