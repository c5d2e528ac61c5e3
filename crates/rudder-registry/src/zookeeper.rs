//! ZooKeeper as a [`Registry`]: [`ZookeeperRegistry`] behind the trait, and its factory for
//! `zookeeper://` URLs.
//!
//! What only ZooKeeper has stays here and in [`RegistryAddress`]: the `/dubbo` root (`group`), the
//! chroot, digest credentials, and the session timeout, which a registry URL may set with
//! `session=<milliseconds>` (as Dubbo's registry URL does) over the caller's
//! [`RegistryOptions::with_session_timeout`].

use std::any::Any;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;

use rudder_common::discovery::{ProviderSink, RuleKey, RuleSink};
use rudder_common::url::DubboUrl;

use crate::address::{query_parameter, RegistryAddress};
use crate::backend::{
    ConfigCenter, Registry, RegistryFactory, RegistryFuture, RegistryLocation, ServiceDefinition,
};
use crate::config_center::RuleWatch;
use crate::consumer::ConsumerSpec;
use crate::error::RegistryError;
use crate::instance::metadata::MetadataFetcher;
use crate::options::RegistryOptions;
use crate::registry::ZookeeperRegistry;
use crate::split::ViewSplit;
use crate::subscription::Subscription;

/// Opens [`ZookeeperRegistry`]s for `zookeeper://` URLs (and bare `host:port`s).
#[derive(Debug, Clone, Copy, Default)]
pub struct ZookeeperFactory;

impl ZookeeperFactory {
    /// The URL's `session` parameter (milliseconds), if it has one.
    fn session(url: &str) -> Result<Option<Duration>, RegistryError> {
        let Some(value) = query_parameter(url, "session").map(str::trim) else {
            return Ok(None);
        };
        match value.parse::<u64>() {
            Ok(millis) if millis > 0 => Ok(Some(Duration::from_millis(millis))),
            _ => Err(RegistryError::BadRegistryUrl {
                reason: format!(
                    "registry session={value:?} is not a positive number of milliseconds"
                ),
            }),
        }
    }
}

impl RegistryFactory for ZookeeperFactory {
    fn schemes(&self) -> &'static [&'static str] {
        &["zookeeper"]
    }

    fn locate(&self, url: &str) -> Result<RegistryLocation, RegistryError> {
        let address = RegistryAddress::parse(url)?;
        ZookeeperFactory::session(url)?;
        let mut hosts: Vec<&str> = address.hosts().iter().map(String::as_str).collect();
        hosts.sort_unstable();
        // The credentials are part of the identity (two users are two sessions), but only as a
        // hash under a key drawn once per process: an identity may end up in a `Debug` print.
        // SASL and TLS settings too: a plaintext and a TLS session to one ensemble are two sessions.
        let credentials = address.session_secrets().map_or(0, |secrets| {
            static KEY: OnceLock<RandomState> = OnceLock::new();
            KEY.get_or_init(RandomState::new).hash_one(secrets)
        });
        Ok(RegistryLocation::new(
            format!(
                "zookeeper|{}|{}|{credentials:016x}",
                hosts.join(","),
                address.root()
            ),
            address.to_string(),
            address.hosts().join(","),
        ))
    }

    fn open(
        &self,
        url: &str,
        options: RegistryOptions,
        metadata: Option<Arc<dyn MetadataFetcher>>,
    ) -> Result<Arc<dyn Registry>, RegistryError> {
        let options = match ZookeeperFactory::session(url)? {
            Some(session) => options.with_session_timeout(session),
            None => options,
        };
        let registry = ZookeeperRegistry::open(url, options)?;
        Ok(Arc::new(match metadata {
            Some(fetcher) => registry.with_metadata_fetcher(fetcher),
            None => registry,
        }))
    }
}

impl Registry for ZookeeperRegistry {
    fn address(&self) -> String {
        ZookeeperRegistry::address(self).to_string()
    }

    fn servers(&self) -> String {
        ZookeeperRegistry::address(self).hosts().join(",")
    }

    fn is_connected(&self) -> bool {
        ZookeeperRegistry::is_connected(self)
    }

    fn is_closed(&self) -> bool {
        ZookeeperRegistry::is_closed(self)
    }

    fn wait_connected(&self, wait: Duration) -> RegistryFuture<'_, Result<(), RegistryError>> {
        Box::pin(ZookeeperRegistry::wait_connected(self, wait))
    }

    fn unreachable_error(&self, waited: Duration) -> RegistryError {
        ZookeeperRegistry::unreachable_error(self, waited)
    }

    fn subscribe(
        &self,
        spec: ConsumerSpec,
        sink: Arc<dyn ProviderSink>,
        split: Option<ViewSplit>,
    ) -> RegistryFuture<'_, Result<Subscription, RegistryError>> {
        Box::pin(self.subscribe_shared(spec, sink, split))
    }

    fn watch_rules(
        &self,
        keys: Vec<RuleKey>,
        sink: Arc<dyn RuleSink>,
    ) -> RegistryFuture<'_, Result<RuleWatch, RegistryError>> {
        Box::pin(self.watch_shared(keys, sink))
    }

    fn config_center(&self) -> Arc<dyn ConfigCenter> {
        self.own_rules()
    }

    fn with_config_center(&self, config_center: Arc<dyn ConfigCenter>) -> Arc<dyn Registry> {
        Arc::new(self.reading_rules_from(config_center))
    }

    fn services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>> {
        Box::pin(ZookeeperRegistry::services(self))
    }

    fn mapped_services(&self) -> RegistryFuture<'_, Result<Vec<String>, RegistryError>> {
        Box::pin(ZookeeperRegistry::mapped_services(self))
    }

    fn provider_urls<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<DubboUrl>, RegistryError>> {
        Box::pin(ZookeeperRegistry::provider_urls(self, interface))
    }

    fn service_definitions<'a>(
        &'a self,
        interface: &'a str,
    ) -> RegistryFuture<'a, Result<Vec<ServiceDefinition>, RegistryError>> {
        Box::pin(ZookeeperRegistry::service_definitions(self, interface))
    }

    fn register_provider<'a>(
        &'a self,
        url: &'a DubboUrl,
    ) -> RegistryFuture<'a, Result<(), RegistryError>> {
        Box::pin(ZookeeperRegistry::register_provider(self, url))
    }

    fn close(&self) -> RegistryFuture<'_, ()> {
        Box::pin(ZookeeperRegistry::close(self))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_ensemble_is_one_identity_whatever_the_order_or_parameters() {
        let a = ZookeeperFactory
            .locate("zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181&timeout=3000")
            .unwrap();
        let b = ZookeeperFactory
            .locate("zookeeper://10.0.0.2:2181?backup=10.0.0.1:2181")
            .unwrap();
        assert_eq!(a.identity(), b.identity());
        assert_eq!(a.address(), "zookeeper://10.0.0.1:2181,10.0.0.2:2181/dubbo");
        assert_eq!(a.servers(), "10.0.0.1:2181,10.0.0.2:2181");
        let other_root = ZookeeperFactory
            .locate("zookeeper://10.0.0.1:2181?backup=10.0.0.2:2181&group=g")
            .unwrap();
        assert_ne!(a.identity(), other_root.identity());
    }

    #[test]
    fn credentials_part_the_identity_and_never_reach_the_address() {
        let alice = ZookeeperFactory
            .locate("zookeeper://alice:s3cret@10.0.0.1:2181")
            .unwrap();
        let bob = ZookeeperFactory
            .locate("zookeeper://bob:s3cret@10.0.0.1:2181")
            .unwrap();
        assert_ne!(alice.identity(), bob.identity());
        let again = ZookeeperFactory
            .locate("zookeeper://alice:s3cret@10.0.0.1:2181?backup=")
            .unwrap();
        assert_eq!(alice.identity(), again.identity());
        assert!(!format!("{alice:?}").contains("s3cret"), "{alice:?}");
        assert!(!alice.address().contains("s3cret"), "{}", alice.address());
        assert!(!alice.servers().contains("alice"), "{}", alice.servers());
    }

    #[test]
    fn sasl_and_tls_settings_part_the_identity() {
        let identity = |url: &str| ZookeeperFactory.locate(url).unwrap().identity().to_owned();
        let plain = identity("zookeeper://app:pw@10.0.0.1:2181");
        let sasl = identity("zookeeper://app:pw@10.0.0.1:2181?sasl=digest-md5");
        let other_sasl = identity("zookeeper://bob:pw@10.0.0.1:2181?sasl=digest-md5");
        let tls = identity("zookeeper://app:pw@10.0.0.1:2181?tls.ca=/ca.pem");
        let anonymous_tls = identity("zookeeper://10.0.0.1:2181?tls=true");
        let anonymous = identity("zookeeper://10.0.0.1:2181");
        let all = [&plain, &sasl, &other_sasl, &tls, &anonymous_tls, &anonymous];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(!sasl.contains("pw") && !sasl.contains("app"), "{sasl}");
    }

    #[test]
    fn the_session_parameter_is_zookeeper_s_and_checked_when_located() {
        assert_eq!(
            ZookeeperFactory::session("zookeeper://10.0.0.1:2181?session=60000").unwrap(),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            ZookeeperFactory::session("zookeeper://a:b?c@10.0.0.1:2181").unwrap(),
            None
        );
        let error = ZookeeperFactory
            .locate("zookeeper://10.0.0.1:2181?session=soon")
            .unwrap_err();
        assert!(error.to_string().contains("session=\"soon\""), "{error}");
    }

    #[test]
    fn a_registry_opened_through_the_factory_is_a_zookeeper_registry() {
        let registry = ZookeeperFactory
            .open(
                "zookeeper://10.0.0.1:2181?session=60000",
                RegistryOptions::default(),
                None,
            )
            .unwrap();
        assert!(!registry.is_connected(), "nothing is opened before use");
        assert_eq!(registry.servers(), "10.0.0.1:2181");
        let center = ZookeeperFactory
            .open(
                "zookeeper://10.0.0.5:2181?group=governance",
                RegistryOptions::default(),
                None,
            )
            .unwrap();
        let governed = registry.with_config_center(center.config_center());
        let governed = governed
            .as_any()
            .downcast_ref::<ZookeeperRegistry>()
            .unwrap();
        assert_eq!(governed.rule_path(), "/governance/config/dubbo");
    }

    /// A config centre of another kind, holding one text per key, that says which group was read.
    #[derive(Debug, Default)]
    struct Fixed {
        groups: std::sync::Mutex<Vec<String>>,
    }

    impl ConfigCenter for Fixed {
        fn address(&self) -> String {
            "fixed://rules".to_owned()
        }

        fn follow(
            &self,
            group: &str,
            keys: Vec<RuleKey>,
            sink: Arc<dyn RuleSink>,
        ) -> RegistryFuture<'_, (RuleWatch, Option<RegistryError>)> {
            self.groups.lock().unwrap().push(group.to_owned());
            for key in &keys {
                sink.rule(key, Some(&format!("text of {key}")));
            }
            let (stop, stopped) = tokio::sync::oneshot::channel();
            let task = tokio::spawn(async move {
                let _ = stopped.await;
            });
            Box::pin(async move { (RuleWatch::new(stop, task), None) })
        }

        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    #[derive(Debug, Default)]
    struct Heard(std::sync::Mutex<Vec<(String, Option<String>)>>);

    impl RuleSink for Heard {
        fn rule(&self, key: &RuleKey, text: Option<&str>) {
            self.0
                .lock()
                .unwrap()
                .push((key.to_string(), text.map(str::to_owned)));
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn router_rules_come_from_a_config_centre_of_another_kind() {
        let registry = ZookeeperFactory
            .open(
                "zookeeper://10.0.0.1:2181",
                RegistryOptions::default(),
                None,
            )
            .unwrap();
        let fixed = Arc::new(Fixed::default());
        let governed = registry.with_config_center(Arc::clone(&fixed) as Arc<dyn ConfigCenter>);
        let heard = Arc::new(Heard::default());
        let key = RuleKey::tag_router("shop");
        let watch = governed
            .watch_rules(vec![key.clone()], Arc::clone(&heard) as Arc<dyn RuleSink>)
            .await
            .unwrap();
        assert_eq!(*fixed.groups.lock().unwrap(), ["dubbo"]);
        assert_eq!(
            *heard.0.lock().unwrap(),
            [(key.to_string(), Some(format!("text of {key}")))]
        );
        let zookeeper = governed
            .as_any()
            .downcast_ref::<ZookeeperRegistry>()
            .unwrap();
        assert_eq!(zookeeper.rule_path(), "fixed://rules");
        watch.close().await;
        registry.close().await;
    }
}
