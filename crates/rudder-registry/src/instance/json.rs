//! Curator's instance JSON (`/services/<app>/<host:port>`), read leniently and within bounds.
//!
//! A Dubbo 3 provider registers itself through Curator's `ServiceDiscovery`, which stores a
//! `ServiceInstance<ZookeeperInstance>` as JSON. What a Java Dubbo 3.3.6 provider wrote in our it/
//! setup (`testdata/java-3.3.6-instance.json`):
//!
//! ```text
//! {"name":"rudder-it-java-provider","id":"127.0.0.1:41491","address":"127.0.0.1","port":41491,
//!  "sslPort":null,"payload":{"@class":"org.apache.dubbo.registry.zookeeper.ZookeeperInstance",
//!  "id":"127.0.0.1:41491","name":"rudder-it-java-provider","metadata":{
//!    "dubbo.endpoints":"[{\"port\":41491,\"protocol\":\"dubbo\"}]",
//!    "dubbo.metadata-service.url-params":"{\"version\":\"1.0.0\",\"port\":\"41491\",\"protocol\":\"dubbo\",...}",
//!    "dubbo.metadata.revision":"760f3cbc7da120a9120aa991f1579422",
//!    "dubbo.metadata.storage-type":"local","meta-v":"1.0.0","timestamp":"1796168159691"}},
//!  "registrationTimeUTC":1796168159979,"serviceType":"DYNAMIC","uriSpec":null}
//! ```
//!
//! Only `name`, `address`, `port` and `payload.metadata` matter to a consumer (Dubbo's
//! `CuratorFrameworkUtils.build`); every other field is ignored, and so is a metadata value that is
//! not a string. The node is refused before parsing when longer than [`MAX_NODE_BYTES`], and the
//! metadata and endpoint lists are cut at [`MAX_METADATA_ENTRIES`] and [`MAX_ENDPOINTS`], so what one
//! node can make us hold is bounded whatever it says.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The longest instance node read (Dubbo's own nodes are about 1 KiB).
pub(crate) const MAX_NODE_BYTES: usize = 64 * 1024;
/// The most metadata entries kept of one instance (Dubbo writes about ten).
pub(crate) const MAX_METADATA_ENTRIES: usize = 256;
/// The most `dubbo.endpoints` entries kept of one instance (one per exported protocol).
pub(crate) const MAX_ENDPOINTS: usize = 16;

/// `dubbo.metadata.revision`: the instance's MetadataInfo revision; `0` or missing means no services.
pub(crate) const REVISION_KEY: &str = "dubbo.metadata.revision";
/// The revision of an instance that exports nothing (Dubbo's `EMPTY_REVISION`).
pub(crate) const EMPTY_REVISION: &str = "0";
/// `dubbo.metadata.storage-type`: `local` (ask the instance) or `remote` (read the metadata report).
pub(crate) const STORAGE_TYPE_KEY: &str = "dubbo.metadata.storage-type";
/// `dubbo.endpoints`: a JSON list of `{"port":p,"protocol":"x"}`.
pub(crate) const ENDPOINTS_KEY: &str = "dubbo.endpoints";
/// `dubbo.metadata-service.url-params`: a JSON object of the MetadataService URL's parameters.
pub(crate) const METADATA_SERVICE_PARAMS_KEY: &str = "dubbo.metadata-service.url-params";

/// One provider instance of an application, as a consumer uses it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Instance {
    /// The application (`name`).
    pub(crate) app: String,
    /// `address`.
    pub(crate) host: String,
    /// `port`.
    pub(crate) port: u16,
    /// `payload.metadata`, string values only, sorted by key.
    pub(crate) metadata: BTreeMap<String, String>,
    /// `dubbo.endpoints`, parsed.
    pub(crate) endpoints: Vec<Endpoint>,
}

/// One exported protocol's port (`dubbo.endpoints`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Endpoint {
    /// The port.
    pub(crate) port: u16,
    /// The protocol (`dubbo`, `tri`).
    pub(crate) protocol: String,
}

/// Why a node is not an instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InstanceError {
    /// Longer than [`MAX_NODE_BYTES`].
    TooLong(usize),
    /// Not JSON of the expected shape.
    Json(String),
    /// No `address` (or one holding URL delimiters), or no `port` in 1..=65535.
    NoAddress,
}

impl std::fmt::Display for InstanceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InstanceError::TooLong(n) => {
                write!(f, "{n} bytes, more than the {MAX_NODE_BYTES} read")
            }
            InstanceError::Json(e) => write!(f, "not Curator instance JSON: {e}"),
            InstanceError::NoAddress => f.write_str("no address or port"),
        }
    }
}

#[derive(Deserialize)]
struct Curator {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    address: Option<String>,
    #[serde(default)]
    port: Option<i64>,
    #[serde(default)]
    payload: Option<Payload>,
}

#[derive(Deserialize)]
struct Payload {
    #[serde(default)]
    metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Instance {
    /// Reads one instance node's data; `app` names the application when the JSON has no `name`.
    pub(crate) fn parse(app: &str, data: &[u8]) -> Result<Instance, InstanceError> {
        if data.len() > MAX_NODE_BYTES {
            return Err(InstanceError::TooLong(data.len()));
        }
        let raw: Curator =
            serde_json::from_slice(data).map_err(|e| InstanceError::Json(e.to_string()))?;
        let metadata = raw
            .payload
            .and_then(|p| p.metadata)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k, s)),
                _ => None,
            });
        let app = raw
            .name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| app.to_owned());
        Instance::from_parts(
            &app,
            raw.address.as_deref().unwrap_or(""),
            raw.port.unwrap_or(0),
            metadata,
        )
    }

    /// An instance as a registry lists it in parts (Nacos: ip, port, metadata), with the bounds
    /// and checks of a node: a host that is no host or a port outside 1..=65535 is refused, the
    /// metadata cut at [`MAX_METADATA_ENTRIES`].
    pub(crate) fn from_parts(
        app: &str,
        host: &str,
        port: i64,
        metadata: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Instance, InstanceError> {
        // A host that could change how the provider URL reads (`h/x?weight=9`) is no host.
        let host = Some(host.trim())
            .filter(|a| {
                !a.is_empty()
                    && a.chars()
                        .all(|c| c.is_ascii_alphanumeric() || ".-_:[]".contains(c))
            })
            .ok_or(InstanceError::NoAddress)?
            .to_owned();
        let port = u16::try_from(port)
            .ok()
            .filter(|&p| p > 0)
            .ok_or(InstanceError::NoAddress)?;
        let metadata: BTreeMap<String, String> =
            metadata.into_iter().take(MAX_METADATA_ENTRIES).collect();
        let endpoints = metadata
            .get(ENDPOINTS_KEY)
            .map(|text| parse_endpoints(text))
            .unwrap_or_default();
        Ok(Instance {
            app: app.to_owned(),
            host,
            port,
            metadata,
            endpoints,
        })
    }

    /// `host:port`.
    pub(crate) fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The MetadataInfo revision, unless missing or [`EMPTY_REVISION`] (Dubbo skips such instances).
    pub(crate) fn revision(&self) -> Option<&str> {
        self.metadata
            .get(REVISION_KEY)
            .map(|r| r.trim())
            .filter(|r| !r.is_empty() && *r != EMPTY_REVISION)
    }

    /// Whether the MetadataInfo is in the metadata report (`remote`) rather than served by the
    /// instance itself (`local`, the default).
    pub(crate) fn remote_metadata(&self) -> bool {
        self.metadata
            .get(STORAGE_TYPE_KEY)
            .is_some_and(|t| t.trim().eq_ignore_ascii_case("remote"))
    }

    /// The endpoint of `protocol`, if the instance lists one.
    pub(crate) fn endpoint(&self, protocol: &str) -> Option<&Endpoint> {
        self.endpoints.iter().find(|e| e.protocol == protocol)
    }

    /// `dubbo.metadata-service.url-params`, string values only (numbers written as text), bounded
    /// like the metadata.
    pub(crate) fn metadata_service_params(&self) -> BTreeMap<String, String> {
        let Some(text) = self.metadata.get(METADATA_SERVICE_PARAMS_KEY) else {
            return BTreeMap::new();
        };
        let Ok(map) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(text)
        else {
            return BTreeMap::new();
        };
        map.into_iter()
            .filter_map(|(k, v)| match v {
                serde_json::Value::String(s) => Some((k, s)),
                serde_json::Value::Number(n) => Some((k, n.to_string())),
                _ => None,
            })
            .take(MAX_METADATA_ENTRIES)
            .collect()
    }
}

/// `dubbo.endpoints`; entries that do not read as `{port, protocol}` are left out, and the list is cut
/// at [`MAX_ENDPOINTS`].
fn parse_endpoints(text: &str) -> Vec<Endpoint> {
    let Ok(items) = serde_json::from_str::<Vec<serde_json::Value>>(text) else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|item| serde_json::from_value::<Endpoint>(item).ok())
        .filter(|e| e.port > 0)
        .take(MAX_ENDPOINTS)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a Java Dubbo 3.3.6 provider with `register-mode=instance` wrote (it/ probe).
    const JAVA_336: &str = include_str!("testdata/java-3.3.6-instance.json");

    #[test]
    fn the_java_providers_node_reads_as_dubbo_reads_it() {
        let instance = Instance::parse("ignored", JAVA_336.as_bytes()).unwrap();
        assert_eq!(instance.app, "rudder-it-java-provider");
        assert_eq!(instance.address(), "127.0.0.1:41491");
        assert_eq!(
            instance.revision(),
            Some("760f3cbc7da120a9120aa991f1579422")
        );
        assert!(!instance.remote_metadata());
        assert_eq!(
            instance.endpoints,
            vec![Endpoint {
                port: 41491,
                protocol: "dubbo".into()
            }]
        );
        assert_eq!(instance.metadata["timestamp"], "1796168159691");
        assert_eq!(instance.metadata["meta-v"], "1.0.0");
        let params = instance.metadata_service_params();
        assert_eq!(params["version"], "1.0.0");
        assert_eq!(params["port"], "41491");
        assert_eq!(params["protocol"], "dubbo");
    }

    #[test]
    fn unknown_fields_and_odd_values_are_ignored() {
        let json = r#"{"address":"10.0.0.1","port":20880,"extra":[1,2],
            "payload":{"metadata":{"a":"1","n":7,"dubbo.metadata.revision":"0",
            "dubbo.endpoints":"[{\"port\":1,\"protocol\":\"tri\"},{\"port\":\"x\"},5]"}}}"#;
        let instance = Instance::parse("app", json.as_bytes()).unwrap();
        assert_eq!(instance.app, "app");
        assert_eq!(instance.metadata.len(), 3, "the number is left out");
        assert_eq!(instance.revision(), None, "revision 0 exports nothing");
        assert_eq!(instance.endpoints.len(), 1);
        assert_eq!(instance.endpoint("tri").map(|e| e.port), Some(1));
        assert!(instance.metadata_service_params().is_empty());
    }

    #[test]
    fn bad_nodes_are_refused_with_a_reason() {
        assert!(matches!(
            Instance::parse("a", b"{\"address\":\"h\"}"),
            Err(InstanceError::NoAddress)
        ));
        assert!(matches!(
            Instance::parse("a", b"{\"address\":\"h\",\"port\":70000}"),
            Err(InstanceError::NoAddress)
        ));
        assert!(matches!(
            Instance::parse("a", b"{\"address\":\"h/x?weight=9\",\"port\":1}"),
            Err(InstanceError::NoAddress)
        ));
        assert!(matches!(
            Instance::parse("a", b"not json"),
            Err(InstanceError::Json(_))
        ));
        let long = vec![b' '; MAX_NODE_BYTES + 1];
        assert!(matches!(
            Instance::parse("a", &long),
            Err(InstanceError::TooLong(_))
        ));
    }

    #[test]
    fn lists_are_cut_at_their_bounds() {
        let entries: Vec<String> = (0..1000).map(|i| format!("\"k{i}\":\"v\"")).collect();
        let endpoints: Vec<String> = (1..=100)
            .map(|p| format!("{{\\\"port\\\":{p},\\\"protocol\\\":\\\"p{p}\\\"}}"))
            .collect();
        let json = format!(
            r#"{{"address":"h","port":1,"payload":{{"metadata":{{"dubbo.endpoints":"[{}]",{}}}}}}}"#,
            endpoints.join(","),
            entries.join(",")
        );
        let instance = Instance::parse("a", json.as_bytes()).unwrap();
        assert_eq!(instance.metadata.len(), MAX_METADATA_ENTRIES);
        // `dubbo.endpoints` sorts before `k…` and so is kept.
        assert_eq!(instance.endpoints.len(), MAX_ENDPOINTS);
    }
}
