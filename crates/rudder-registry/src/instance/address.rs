//! Provider URLs from instances and their MetadataInfo, built as Dubbo builds its instance address
//! URLs (`ServiceInstancesChangedListener.getServiceUrlsCache`, `InstanceAddressURL`).
//!
//! For each exported service of a revision and each instance of that revision:
//!
//! * address: the instance host with the service's `port` when it is positive; else the instance's
//!   `dubbo.endpoints` entry of the service's protocol; else the instance port;
//! * protocol and path: the service's;
//! * parameters: the instance metadata (`timestamp` among them, which warmup reads), overlaid by the
//!   service's parameters (Dubbo's `getServiceParameters`: service parameters win), with `interface`,
//!   `group`, `version` and `remote.application` from the service and instance.
//!
//! The URLs then go through the same catalog as interface-level providers: matching by interface,
//! group, version and protocol, the consumer's parameters, configurators.

use std::sync::Arc;

use rudder_common::url::DubboUrl;

use super::json::Instance;
use super::metadata::{MetadataInfo, ServiceInfo};

/// Instance metadata keys that only describe the instance's registration, left out of provider
/// URLs so they stay short (Dubbo keeps them, but nothing on the call path reads them).
const REGISTRATION_ONLY: [&str; 3] = [
    "dubbo.endpoints",
    "dubbo.metadata-service.url-params",
    "dubbo.metadata.storage-type",
];

/// Whether a service's name, path and protocol read back the same from a provider URL: none holds a
/// URL delimiter (the path may hold `/`). A service that fails this is left out.
pub(crate) fn is_well_formed(service: &ServiceInfo) -> bool {
    let plain = |text: &str, extra: &[char]| {
        !text.is_empty() && !text.contains(['?', '&', '=', '#', ' ', ':']) && !text.contains(extra)
    };
    plain(&service.name, &['/'])
        && plain(&service.protocol, &['/', '.'])
        && (service.path.is_empty() || plain(&service.path, &[]))
}

/// The provider URL of `service` on `instance`.
pub(crate) fn provider_url(instance: &Instance, service: &ServiceInfo) -> DubboUrl {
    let port = if service.port > 0 {
        u16::try_from(service.port).unwrap_or(instance.port)
    } else {
        instance
            .endpoint(&service.protocol)
            .map_or(instance.port, |e| e.port)
    };
    let path = if service.path.is_empty() {
        &service.name
    } else {
        &service.path
    };
    let mut url = DubboUrl::new(&service.protocol, &instance.host, port, path);
    for (key, value) in &instance.metadata {
        if !REGISTRATION_ONLY.contains(&key.as_str()) {
            url = url.with_parameter(key, value);
        }
    }
    for (key, value) in &service.params {
        url = url.with_parameter(key, value);
    }
    url = url
        .with_parameter("interface", &service.name)
        .with_parameter("remote.application", &instance.app);
    if url.parameter("application").is_none() {
        url = url.with_parameter("application", &instance.app);
    }
    url = match service
        .group
        .as_deref()
        .map(str::trim)
        .filter(|g| !g.is_empty())
    {
        Some(group) => url.with_parameter("group", group),
        None => url.without_parameter("group"),
    };
    match service
        .version
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
    {
        Some(version) => url.with_parameter("version", version),
        None => url.without_parameter("version"),
    }
}

/// One provider URL built from an instance and one of its services.
#[derive(Debug)]
pub(crate) struct BuiltUrl {
    /// The service's interface name and path (a subscription matches either).
    pub(crate) name: String,
    pub(crate) path: String,
    /// [`name_key`] of `name` and `path`: each of the 50 subscriptions of an application's 50
    /// interfaces looks for its own among every instance's 50 URLs, and most of those 2,500
    /// comparisons per instance are then one integer compare, not a string one.
    pub(crate) name_key: u64,
    pub(crate) path_key: u64,
    /// The URL as a registry node name, which the catalog reads.
    pub(crate) node_name: String,
}

impl BuiltUrl {
    /// Whether this URL is a provider of `interface`, whose [`name_key`] is `key`.
    pub(crate) fn serves(&self, interface: &str, key: u64) -> bool {
        (self.name_key == key && self.name == interface)
            || (self.path_key == key && self.path == interface)
    }
}

/// A hash of a service name, the same for the same name within a process.
pub(crate) fn name_key(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    name.hash(&mut hasher);
    hasher.finish()
}

/// The URLs of one node, with the instance and MetadataInfo they were built from.
pub(crate) type Built = (Arc<Instance>, Arc<MetadataInfo>, Arc<[BuiltUrl]>);

/// The URLs of `instance` for every well-formed service of `info`.
pub(crate) fn build_urls(instance: &Instance, info: &MetadataInfo) -> Arc<[BuiltUrl]> {
    info.services
        .iter()
        .filter(|s| is_well_formed(s))
        .map(|service| {
            let path = if service.path.is_empty() {
                service.name.clone()
            } else {
                service.path.clone()
            };
            BuiltUrl {
                name_key: name_key(&service.name),
                path_key: name_key(&path),
                name: service.name.clone(),
                path,
                node_name: provider_url(instance, service).to_node_name(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAVA_336: &str = include_str!("testdata/java-3.3.6-instance.json");

    fn greeter() -> ServiceInfo {
        let mut service = ServiceInfo::new("org.rudder.it.GreetingService", "dubbo");
        service.port = 41491;
        service
            .params
            .insert("application".into(), "rudder-it-java-provider".into());
        service
            .params
            .insert("methods".into(), "sayHello,whoAmI".into());
        service.params.insert("side".into(), "provider".into());
        service
    }

    #[test]
    fn the_java_instance_gives_the_url_dubbo_builds() {
        let instance = Instance::parse("x", JAVA_336.as_bytes()).unwrap();
        let url = provider_url(&instance, &greeter());
        assert_eq!(url.protocol(), "dubbo");
        assert_eq!(url.address(), "127.0.0.1:41491");
        assert_eq!(url.path(), "org.rudder.it.GreetingService");
        assert_eq!(
            url.parameter("interface"),
            Some("org.rudder.it.GreetingService")
        );
        assert_eq!(
            url.parameter("timestamp"),
            Some("1796168159691"),
            "warmup needs it"
        );
        assert_eq!(url.parameter("methods"), Some("sayHello,whoAmI"));
        assert_eq!(
            url.parameter("remote.application"),
            Some("rudder-it-java-provider")
        );
        assert_eq!(url.parameter("version"), None);
        assert_eq!(url.parameter("dubbo.endpoints"), None);
    }

    #[test]
    fn services_that_would_not_read_back_are_refused() {
        assert!(is_well_formed(&ServiceInfo::new("com.acme.S", "dubbo")));
        let mut context = ServiceInfo::new("com.acme.S", "dubbo");
        context.path = "ctx/com.acme.S".into();
        assert!(is_well_formed(&context));
        assert!(!is_well_formed(&ServiceInfo::new("S?weight=9", "dubbo")));
        assert!(!is_well_formed(&ServiceInfo::new("S", "dubbo://x")));
        assert!(!is_well_formed(&ServiceInfo::new("", "dubbo")));
    }

    #[test]
    fn the_port_comes_from_the_service_then_the_endpoints_then_the_instance() {
        let json = br#"{"name":"a","address":"10.0.0.1","port":20880,"payload":{"metadata":{
            "dubbo.endpoints":"[{\"port\":50051,\"protocol\":\"tri\"}]","weight":"7"}}}"#;
        let instance = Instance::parse("a", json).unwrap();
        let mut service = ServiceInfo::new("S", "tri");
        assert_eq!(provider_url(&instance, &service).port(), 50051);
        service.port = 7001;
        assert_eq!(provider_url(&instance, &service).port(), 7001);
        let mut dubbo = ServiceInfo::new("S", "dubbo");
        dubbo.version = Some("1.0.0".into());
        dubbo.group = Some("g".into());
        dubbo.params.insert("weight".into(), "300".into());
        let url = provider_url(&instance, &dubbo);
        assert_eq!(url.port(), 20880);
        assert_eq!(
            url.parameter("weight"),
            Some("300"),
            "service parameters win"
        );
        assert_eq!(
            (url.parameter("version"), url.parameter("group")),
            (Some("1.0.0"), Some("g"))
        );
    }
}
