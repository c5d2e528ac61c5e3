//! MetadataInfo: which services an instance revision exports, and how the consumer gets it.
//!
//! Instances group by `dubbo.metadata.revision`; all instances of one revision export the same
//! services, so the consumer asks once per revision, not once per instance (Dubbo's
//! `ServiceInstancesChangedListener`). Where it asks depends on `dubbo.metadata.storage-type`:
//!
//! * `remote`: the metadata report, node `<root>/metadata/<app>/<revision>`, JSON (read here);
//! * `local` (the default): the instance's own MetadataService, a Dubbo service
//!   (`org.apache.dubbo.metadata.MetadataService`, group = the application, version `1.0.0`,
//!   `getMetadataInfo(String revision)`), or, for an instance that says `meta-v=2.0.0`, its
//!   `MetadataServiceV2` (protobuf over tri://). This crate does not call services: it builds the
//!   MetadataService URL ([`metadata_service_url`]), passes the instance's `meta-v` along, and hands
//!   both to a [`MetadataFetcher`], which the layer above implements with its RPC clients.
//!
//! A MetadataInfo is cut to [`MAX_SERVICES`] services and [`MAX_PARAMS`] parameters per service
//! whatever its source said.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use rudder_common::url::DubboUrl;
use serde::Deserialize;

use super::json::Instance;

/// The most services kept of one MetadataInfo.
pub(crate) const MAX_SERVICES: usize = 1024;
/// The most parameters kept of one service.
pub(crate) const MAX_PARAMS: usize = 512;
/// The longest remote MetadataInfo node read.
pub(crate) const MAX_REMOTE_BYTES: usize = 1024 * 1024;

/// The MetadataService interface every Dubbo 3 provider exports.
pub const METADATA_SERVICE: &str = "org.apache.dubbo.metadata.MetadataService";

/// The instance metadata key of the MetadataService version the provider serves (Dubbo's
/// `ServiceInstanceMetadataUtils.METADATA_SERVICE_VERSION_NAME`).
pub(crate) const METADATA_VERSION_KEY: &str = "meta-v";

/// What one revision of an application exports (Dubbo's `MetadataInfo`).
///
/// ```
/// use rudder_registry::{MetadataInfo, ServiceInfo};
///
/// let info = MetadataInfo {
///     app: "shop".into(),
///     revision: "abc".into(),
///     services: vec![ServiceInfo::new("com.acme.Greeter", "dubbo")],
/// };
/// assert_eq!(info.services[0].port, -1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataInfo {
    /// The application.
    pub app: String,
    /// The revision this describes.
    pub revision: String,
    /// The exported services (Dubbo keys them by `[group/]interface[:version]:protocol`).
    pub services: Vec<ServiceInfo>,
}

/// One exported service of a [`MetadataInfo`] (Dubbo's `MetadataInfo.ServiceInfo`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct ServiceInfo {
    /// The interface.
    pub name: String,
    /// The group, if any.
    pub group: Option<String>,
    /// The version, if any.
    pub version: Option<String>,
    /// The protocol (`dubbo`, `tri`).
    pub protocol: String,
    /// The port, or -1: then the instance's endpoint of the protocol, else its port, is used.
    pub port: i32,
    /// The path (usually the interface).
    pub path: String,
    /// The exported URL's parameters (Dubbo leaves out `pid`, `timestamp` and a few more).
    pub params: BTreeMap<String, String>,
}

impl ServiceInfo {
    /// A service `name` over `protocol`, no group or version, port -1, path = name.
    pub fn new(name: &str, protocol: &str) -> ServiceInfo {
        ServiceInfo {
            name: name.to_owned(),
            protocol: protocol.to_owned(),
            port: -1,
            path: name.to_owned(),
            ..ServiceInfo::default()
        }
    }
}

impl MetadataInfo {
    /// The most services kept of one MetadataInfo, whatever its source: a [`MetadataFetcher`] stops
    /// collecting there too.
    pub const MAX_SERVICES: usize = MAX_SERVICES;
    /// The most parameters kept of one service.
    pub const MAX_PARAMS: usize = MAX_PARAMS;

    /// The same, cut to the bounds ([`MAX_SERVICES`], [`MAX_PARAMS`]); empty `path`s become the name.
    pub(crate) fn bounded(mut self) -> MetadataInfo {
        self.services.truncate(MAX_SERVICES);
        for service in &mut self.services {
            if service.params.len() > MAX_PARAMS {
                let keep: Vec<String> = service.params.keys().take(MAX_PARAMS).cloned().collect();
                service.params.retain(|k, _| keep.binary_search(k).is_ok());
            }
            if service.path.is_empty() {
                service.path = service.name.clone();
            }
        }
        self
    }

    /// Reads the JSON a provider writes to `<root>/metadata/<app>/<revision>` (remote storage):
    /// `{"app":..,"revision":..,"services":{"<key>":{"name":..,"protocol":..,"params":{..}}}}`;
    /// unknown fields are ignored.
    pub(crate) fn from_json(data: &[u8]) -> Result<MetadataInfo, String> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            app: String,
            #[serde(default)]
            revision: String,
            #[serde(default)]
            services: BTreeMap<String, serde_json::Value>,
        }
        if data.len() > MAX_REMOTE_BYTES {
            return Err(format!(
                "{} bytes, more than {MAX_REMOTE_BYTES}",
                data.len()
            ));
        }
        let raw: Raw = serde_json::from_slice(data).map_err(|e| e.to_string())?;
        let services = raw
            .services
            .into_values()
            .take(MAX_SERVICES)
            .filter_map(|v| {
                let mut v = v;
                // Params values that are not strings are dropped rather than failing the service.
                if let Some(params) = v.get_mut("params").and_then(|p| p.as_object_mut()) {
                    params.retain(|_, value| value.is_string());
                }
                serde_json::from_value::<ServiceInfo>(v).ok()
            })
            .filter(|s| !s.name.is_empty())
            .collect();
        Ok(MetadataInfo {
            app: raw.app,
            revision: raw.revision,
            services,
        }
        .bounded())
    }
}

/// What a [`MetadataFetcher`] is asked: the MetadataService URL of one instance and the revision.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRequest {
    /// `dubbo://<host>:<port>/org.apache.dubbo.metadata.MetadataService?group=<app>&version=1.0.0&...`
    pub url: DubboUrl,
    /// The revision to ask for (`getMetadataInfo(revision)`).
    pub revision: String,
    /// The instance's `meta-v`: the MetadataService version it serves, `1.0.0`, or `2.0.0` when it
    /// also exports `org.apache.dubbo.metadata.MetadataServiceV2` (protobuf, over tri://), which a
    /// Java 3.3 consumer then calls instead. `None` when the instance does not say.
    pub metadata_version: Option<String>,
}

/// The boxed future a [`MetadataFetcher`] returns.
pub type MetadataFuture = Pin<Box<dyn Future<Output = Result<MetadataInfo, String>> + Send>>;

/// Calls an instance's MetadataService: implemented by the layer that has an RPC client (the `rudder`
/// crate, over dubbo:// and hessian2). The registry asks once per revision and caches the answer.
///
/// ```
/// use rudder_registry::{MetadataFetcher, MetadataFuture, MetadataInfo, MetadataRequest};
///
/// #[derive(Debug)]
/// struct Fixed;
/// impl MetadataFetcher for Fixed {
///     fn fetch(&self, request: MetadataRequest) -> MetadataFuture {
///         Box::pin(async move {
///             Ok(MetadataInfo { app: "shop".into(), revision: request.revision, services: vec![] })
///         })
///     }
/// }
/// ```
pub trait MetadataFetcher: std::fmt::Debug + Send + Sync + 'static {
    /// The MetadataInfo of `request.revision`, or why not (the message is logged).
    fn fetch(&self, request: MetadataRequest) -> MetadataFuture;
}

/// The MetadataService URL of `instance`, as Dubbo's `MetadataUtils.buildMetadataUrl` builds it:
/// protocol and port from `dubbo.metadata-service.url-params` (else `dubbo` and the instance port),
/// group = the application, version from the parameters (else `1.0.0`), 5 s timeout, no retries.
pub(crate) fn metadata_service_url(instance: &Instance) -> DubboUrl {
    let params = instance.metadata_service_params();
    let protocol = params.get("protocol").map_or("dubbo", String::as_str);
    let port = params
        .get("port")
        .and_then(|p| p.trim().parse::<u16>().ok())
        .filter(|&p| p > 0)
        .unwrap_or(instance.port);
    let mut url = DubboUrl::new(protocol, &instance.host, port, METADATA_SERVICE);
    for (key, value) in &params {
        if !matches!(key.as_str(), "protocol" | "port" | "side" | "group") {
            url = url.with_parameter(key, value);
        }
    }
    let version = params.get("version").map_or("1.0.0", String::as_str);
    url.with_parameter("interface", METADATA_SERVICE)
        .with_parameter("group", &instance.app)
        .with_parameter("version", version)
        .with_parameter("side", "consumer")
        .with_parameter("timeout", "5000")
        .with_parameter("retries", "0")
        .with_parameter("connections", "1")
        .with_parameter("check", "false")
}

#[cfg(test)]
mod tests {
    use super::*;

    const JAVA_336: &str = include_str!("testdata/java-3.3.6-instance.json");

    #[test]
    fn the_metadata_service_url_is_the_one_dubbo_builds() {
        let instance = Instance::parse("x", JAVA_336.as_bytes()).unwrap();
        let url = metadata_service_url(&instance);
        assert_eq!(url.protocol(), "dubbo");
        assert_eq!(url.address(), "127.0.0.1:41491");
        assert_eq!(url.path(), METADATA_SERVICE);
        assert_eq!(url.parameter("group"), Some("rudder-it-java-provider"));
        assert_eq!(url.parameter("version"), Some("1.0.0"));
        assert_eq!(url.parameter("side"), Some("consumer"));
        assert_eq!(url.parameter("serialization"), Some("hessian2"));
    }

    #[test]
    fn without_url_params_the_instance_port_and_dubbo_are_used() {
        let json = br#"{"name":"a","address":"10.0.0.1","port":20880,"payload":{"metadata":{}}}"#;
        let url = metadata_service_url(&Instance::parse("a", json).unwrap());
        assert_eq!(
            (url.protocol(), url.port(), url.parameter("version")),
            ("dubbo", 20880, Some("1.0.0"))
        );
    }

    #[test]
    fn remote_metadata_json_is_read_leniently() {
        // The shape of dubbo-website's 3.0-era example, with an extra field and a numeric param.
        let json = br#"{"app":"demo-provider","revision":"da3b","extra":1,"services":{
            "org.apache.dubbo.demo.DemoService:dubbo":{"name":"org.apache.dubbo.demo.DemoService",
              "protocol":"dubbo","path":"org.apache.dubbo.demo.DemoService","port":20880,
              "params":{"side":"provider","methods":"sayHello,sayHelloAsync","n":3},"odd":[1]},
            "bad":{"name":7}}}"#;
        let info = MetadataInfo::from_json(json).unwrap();
        assert_eq!(
            (info.app.as_str(), info.revision.as_str()),
            ("demo-provider", "da3b")
        );
        assert_eq!(info.services.len(), 1, "the unreadable service is left out");
        let service = &info.services[0];
        assert_eq!(service.port, 20880);
        assert_eq!(service.params.len(), 2);
        assert_eq!(service.group, None);
        assert!(MetadataInfo::from_json(b"[").is_err());
    }

    #[test]
    fn metadata_is_cut_at_its_bounds() {
        let mut big = ServiceInfo::new("S", "dubbo");
        big.path.clear();
        for i in 0..MAX_PARAMS + 10 {
            big.params.insert(format!("k{i:05}"), "v".into());
        }
        let mut services = vec![big];
        services.extend(vec![ServiceInfo::new("T", "dubbo"); MAX_SERVICES]);
        let info = MetadataInfo {
            services,
            ..MetadataInfo::default()
        }
        .bounded();
        assert_eq!(info.services.len(), MAX_SERVICES);
        assert_eq!(info.services[0].params.len(), MAX_PARAMS);
        assert_eq!(info.services[0].path, "S");
    }
}
