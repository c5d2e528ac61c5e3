//! Names and URLs as Dubbo 3.3's `NacosRegistry` writes and reads them.
//!
//! A provider registers one Nacos instance per exported URL in the service
//! `providers:<interface>:<version>:<group>` (empty segments kept), in the registry's Nacos group; the
//! instance's metadata is the URL's parameters plus `protocol` and `path`, its ip and port the URL's.
//! A consumer rebuilds `<protocol>://<ip>:<port>/<path>?<metadata>` (`NacosRegistry.buildURL`), keeps
//! the `enabled` instances (`filterEnabledInstances`: not the `healthy` flag) and matches them against
//! itself. The instance's Nacos `weight` is not read: Dubbo takes `weight` from the metadata only.

use std::collections::HashMap;

use nacos_sdk::api::naming::ServiceInstance;
use rudder_common::url::DubboUrl;

/// The Nacos service name of `category` (`providers`, `consumers`) for one interface, version, group.
pub(crate) fn service_name(
    category: &str,
    interface: &str,
    version: Option<&str>,
    group: Option<&str>,
) -> String {
    format!(
        "{category}:{interface}:{}:{}",
        version.map(str::trim).unwrap_or(""),
        group.map(str::trim).unwrap_or("")
    )
}

/// The interface of a Dubbo provider service name (`providers:<interface>:<version>:<group>`), if it
/// is one.
pub(crate) fn provided_interface(service: &str) -> Option<&str> {
    let mut parts = service.split(':');
    let (category, interface) = (parts.next()?, parts.next()?);
    (category == "providers" && !interface.is_empty() && parts.count() == 2).then_some(interface)
}

/// The provider URL an instance stands for, as Dubbo's `buildURL` makes it; `None` without a
/// protocol in its metadata or with a port outside 1..=65535.
pub(crate) fn instance_url(instance: &ServiceInstance) -> Option<DubboUrl> {
    let metadata = &instance.metadata;
    let protocol = metadata.get("protocol").filter(|p| !p.is_empty())?;
    let port = u16::try_from(instance.port).ok().filter(|p| *p != 0)?;
    let path = metadata.get("path").map_or("", String::as_str);
    let mut keys: Vec<&String> = metadata.keys().collect();
    keys.sort_unstable();
    let mut url = DubboUrl::new(protocol, &instance.ip, port, path);
    for key in keys {
        url = url.with_parameter(key, &metadata[key]);
    }
    Some(url)
}

/// The child name (encoded provider URL) of an `enabled` instance, what the shared catalog reads;
/// `None` for one that is not a provider.
pub(crate) fn provider_name(instance: &ServiceInstance) -> Option<String> {
    instance
        .enabled
        .then(|| instance_url(instance))
        .flatten()
        .map(|url| url.to_node_name())
}

/// The instance Dubbo's `createInstance` registers for `url` (metadata: its parameters, `category`
/// defaulted, `protocol` and `path` added).
pub(crate) fn url_instance(url: &DubboUrl, category: &str) -> ServiceInstance {
    let mut metadata: HashMap<String, String> = url
        .parameters()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    metadata
        .entry("category".to_owned())
        .or_insert_with(|| category.to_owned());
    metadata.insert("protocol".to_owned(), url.protocol().to_owned());
    metadata.insert("path".to_owned(), url.path().to_owned());
    ServiceInstance {
        ip: url.host().to_owned(),
        port: i32::from(url.port()),
        metadata,
        ..ServiceInstance::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dubbo_s() {
        assert_eq!(
            service_name("providers", "com.acme.Greeter", Some("1.0.0"), None),
            "providers:com.acme.Greeter:1.0.0:"
        );
        assert_eq!(
            provided_interface("providers:com.acme.Greeter::g1"),
            Some("com.acme.Greeter")
        );
        assert_eq!(provided_interface("consumers:com.acme.Greeter::"), None);
        assert_eq!(provided_interface("shop-provider"), None);
    }

    #[test]
    fn an_instance_round_trips_through_its_url() {
        let url = DubboUrl::parse(
            "tri://10.0.0.1:50051/com.acme.Greeter?interface=com.acme.Greeter&version=1.0.0&weight=200",
        )
        .unwrap();
        let instance = url_instance(&url, "providers");
        assert_eq!(instance.metadata["protocol"], "tri");
        assert_eq!(instance.metadata["category"], "providers");
        let back = instance_url(&instance).unwrap();
        assert_eq!(back.protocol(), "tri");
        assert_eq!(back.address(), "10.0.0.1:50051");
        assert_eq!(back.path(), "com.acme.Greeter");
        assert_eq!(back.parameter("weight"), Some("200"));
    }

    #[test]
    fn disabled_or_unreadable_instances_are_not_providers() {
        let url = DubboUrl::parse("dubbo://10.0.0.1:20880/S?interface=S").unwrap();
        let mut disabled = url_instance(&url, "providers");
        disabled.enabled = false;
        let mut no_protocol = url_instance(&url, "providers");
        no_protocol.metadata.remove("protocol");
        let mut bad_port = url_instance(&url, "providers");
        bad_port.port = 70000;
        let mut unhealthy = url_instance(&url, "providers");
        unhealthy.healthy = false;
        let names: Vec<String> = [disabled, no_protocol, bad_port, unhealthy]
            .iter()
            .filter_map(provider_name)
            .collect();
        assert_eq!(
            names.len(),
            1,
            "only the unhealthy one, as Dubbo: {names:?}"
        );
    }
}
