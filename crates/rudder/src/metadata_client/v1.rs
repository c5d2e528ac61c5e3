//! MetadataService (V1): `MetadataInfo getMetadataInfo(String revision)`, a Java interface call
//! with hessian2, as a Java consumer makes it (`MetadataUtils.getRemoteMetadata` with
//! `storage-type=local`), over the protocol the instance names for its MetadataService: dubbo://,
//! or tri:// in Triple's wrapper messages.
//!
//! The answer is Java's `org.apache.dubbo.metadata.MetadataInfo` as a hessian2 object: `app`,
//! `revision` and `services`, a map from the service key to a `MetadataInfo$ServiceInfo` object
//! (`name`, `group`, `version`, `protocol`, `port`, `path`, `params`). It is read leniently:
//! unknown fields are ignored, a service that lacks a name is left out, parameter values that are not
//! strings are dropped. The hessian2 reader bounds what it decodes; the registry cuts the result to
//! [`MetadataInfo::MAX_SERVICES`] and [`MetadataInfo::MAX_PARAMS`].

use std::collections::BTreeMap;

use crate::protocols::Protocols;
use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_registry::{MetadataInfo, ServiceInfo};

/// Asks the MetadataService at `url` for `revision`.
pub(super) async fn fetch(
    protocol: &Protocols,
    url: &DubboUrl,
    revision: &str,
) -> Result<MetadataInfo, String> {
    let invocation = Invocation::new(
        "getMetadataInfo",
        vec!["java.lang.String".to_owned()],
        vec![Value::from(revision)],
    );
    let response = protocol
        .invoke(url, &invocation)
        .await
        .map_err(|e| format!("getMetadataInfo on {}: {e}", url.address()))?;
    if let Some(exception) = response.exception() {
        return Err(format!("getMetadataInfo threw {exception}"));
    }
    let value = response.value().ok_or("getMetadataInfo gave no value")?;
    metadata_info(value)
}

/// The fields of an object or the entries of a map with string keys.
fn fields(value: &Value) -> Option<Vec<(&str, &Value)>> {
    match value {
        Value::Object { fields, .. } => Some(fields.iter().map(|(k, v)| (&**k, v)).collect()),
        Value::Map { entries, .. } => Some(
            entries
                .iter()
                .filter_map(|(k, v)| k.as_str().map(|k| (k, v)))
                .collect(),
        ),
        _ => None,
    }
}

fn field<'a>(fields: &[(&str, &'a Value)], name: &str) -> Option<&'a Value> {
    fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v)
}

fn text(fields: &[(&str, &Value)], name: &str) -> Option<String> {
    field(fields, name)
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// Java's `MetadataInfo` as rudder's hessian2 reader gives it.
pub(crate) fn metadata_info(value: &Value) -> Result<MetadataInfo, String> {
    let top = fields(value).ok_or("getMetadataInfo did not return an object")?;
    let mut services = Vec::new();
    if let Some(map) = field(&top, "services").and_then(fields) {
        for (_, service) in map {
            if let Some(service) = service_info(service) {
                services.push(service);
            }
        }
    }
    Ok(MetadataInfo {
        app: text(&top, "app").unwrap_or_default(),
        revision: text(&top, "revision").unwrap_or_default(),
        services,
    })
}

fn service_info(value: &Value) -> Option<ServiceInfo> {
    let f = fields(value)?;
    let name = text(&f, "name").filter(|n| !n.is_empty())?;
    let port = match field(&f, "port") {
        Some(Value::Int(p)) => *p,
        Some(Value::Long(p)) => i32::try_from(*p).unwrap_or(-1),
        _ => -1,
    };
    let mut params = BTreeMap::new();
    if let Some(entries) = field(&f, "params").and_then(fields) {
        for (key, value) in entries {
            if let Some(value) = value.as_str() {
                params.insert(key.to_owned(), value.to_owned());
            }
        }
    }
    let protocol = text(&f, "protocol").unwrap_or_else(|| "dubbo".to_owned());
    let path = text(&f, "path")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| name.clone());
    let mut service = ServiceInfo::new(&name, &protocol);
    service.group = text(&f, "group");
    service.version = text(&f, "version");
    service.port = port;
    service.path = path;
    service.params = params;
    Some(service)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn object(class: &str, fields: Vec<(&str, Value)>) -> Value {
        Value::Object {
            class: Arc::from(class),
            fields: fields.into_iter().map(|(k, v)| (Arc::from(k), v)).collect(),
        }
    }

    fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map {
            type_name: None,
            entries: entries
                .into_iter()
                .map(|(k, v)| (Value::from(k), v))
                .collect(),
        }
    }

    #[test]
    fn java_metadata_info_reads_as_dubbo_wrote_it() {
        // The shape `rudder invoke ... getMetadataInfo` printed for a Java 3.3.6 provider (spec §5.5).
        let service = object(
            "org.apache.dubbo.metadata.MetadataInfo$ServiceInfo",
            vec![
                ("name", Value::from("peer.Greeter")),
                ("group", Value::Null),
                ("version", Value::Null),
                ("protocol", Value::from("dubbo")),
                ("port", Value::Int(20996)),
                ("path", Value::from("peer.Greeter")),
                (
                    "params",
                    map(vec![
                        ("application", Value::from("appM")),
                        ("methods", Value::from("add,whoami")),
                        ("n", Value::Int(1)),
                    ]),
                ),
            ],
        );
        let info = object(
            "org.apache.dubbo.metadata.MetadataInfo",
            vec![
                ("app", Value::from("appM")),
                ("revision", Value::from("6aa5")),
                (
                    "services",
                    map(vec![
                        ("peer.Greeter:dubbo", service),
                        ("odd", Value::from("not a service")),
                    ]),
                ),
            ],
        );
        let info = metadata_info(&info).unwrap();
        assert_eq!(
            (info.app.as_str(), info.revision.as_str()),
            ("appM", "6aa5")
        );
        assert_eq!(info.services.len(), 1);
        let service = &info.services[0];
        assert_eq!(
            (service.name.as_str(), service.port),
            ("peer.Greeter", 20996)
        );
        assert_eq!(
            (service.group.clone(), service.version.clone()),
            (None, None)
        );
        assert_eq!(service.params.len(), 2, "the int parameter is dropped");
        assert!(metadata_info(&Value::from("x")).is_err());
    }
}
