//! A service's instances as Nacos 2.x sends them (a subscription's answer, a push), read into
//! nacos-sdk's `ServiceInstance`, the type the rest of the Nacos code reads.
//!
//! Nacos sends a service's whole list on every change: 10,000 instances of a Dubbo provider are 7 MB
//! of JSON, and all but one of them are what they were. So a list is kept as it came ([`HostList`]:
//! the message's bytes and where each instance's JSON is in them) and an instance is read only when
//! a reader needs it: the subscription reads only the instances whose JSON it has not seen before
//! (`nacos::names`).

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use nacos_sdk::api::naming::ServiceInstance;
use serde_json::value::RawValue;

/// `(group, service)`.
pub(crate) type Key = (String, String);

/// A service's instance list as it came: the message's JSON and where each instance's JSON is in it;
/// cheap to clone (every subscriber of a service gets the same bytes).
#[derive(Clone, Default)]
pub(crate) struct HostList {
    json: Bytes,
    hosts: Arc<[Range<usize>]>,
}

impl HostList {
    /// How many instances the list has (readable or not).
    pub(crate) fn len(&self) -> usize {
        self.hosts.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// Each instance's JSON, in the list's order.
    pub(crate) fn raw(&self) -> impl ExactSizeIterator<Item = &[u8]> {
        self.hosts.iter().map(|range| &self.json[range.clone()])
    }

    /// Every instance read, leaving out (with a warning) one that is not an instance.
    pub(crate) fn instances(&self) -> Vec<ServiceInstance> {
        self.raw().filter_map(read_instance).collect()
    }
}

#[cfg(test)]
impl HostList {
    /// A list of `hosts` (a JSON array, or its text as sent), as a push carries it.
    pub(crate) fn of(hosts: impl std::fmt::Display) -> HostList {
        let body = format!(r#"{{"serviceInfo":{{"hosts":{hosts}}}}}"#);
        let listing = Listing::read(Bytes::from(body)).expect("a listing");
        listing.list.expect("a list").1
    }
}

impl std::fmt::Debug for HostList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostList")
            .field("instances", &self.hosts.len())
            .field("bytes", &self.json.len())
            .finish()
    }
}

/// One instance's JSON read; `None` (and a warning) when it is not an instance. One unreadable
/// instance costs that instance, not the list.
pub(crate) fn read_instance(raw: &[u8]) -> Option<ServiceInstance> {
    match serde_json::from_slice::<Host>(raw) {
        Ok(host) => Some(host.into_instance()),
        Err(error) => {
            tracing::warn!(%error, "an unreadable instance in a Nacos list; leaving it out");
            None
        }
    }
}

/// A message that may carry a service's list: a push (`NotifySubscriberRequest`) or the answer to a
/// subscription or a query.
#[derive(Debug, Default)]
pub(crate) struct Listing {
    pub(crate) request_id: Option<String>,
    /// The service the list is of, and the list; `None` when the message has no `serviceInfo`.
    pub(crate) list: Option<(Key, HostList)>,
}

impl Listing {
    /// Reads `json` (a message's body) down to where each instance is, without reading the
    /// instances. The bytes are kept, not copied.
    pub(crate) fn read(json: Bytes) -> Result<Listing, serde_json::Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Message<'a> {
            #[serde(default)]
            request_id: Option<String>,
            #[serde(default)]
            service_name: Option<String>,
            #[serde(default)]
            group_name: Option<String>,
            #[serde(default, borrow)]
            service_info: Option<RawInfo<'a>>,
        }
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct RawInfo<'a> {
            #[serde(default)]
            name: Option<String>,
            #[serde(default)]
            group_name: Option<String>,
            #[serde(default, borrow)]
            hosts: Option<Vec<&'a RawValue>>,
        }
        let message: Message<'_> = serde_json::from_slice(&json)?;
        let base = json.as_ptr() as usize;
        let list = message.service_info.map(|info| {
            // Each host borrows from `json`: its place is its offset from the start.
            let hosts: Arc<[Range<usize>]> = info
                .hosts
                .unwrap_or_default()
                .iter()
                .map(|raw| {
                    let start = raw.get().as_ptr() as usize - base;
                    start..start + raw.get().len()
                })
                .collect();
            let key = key(
                info.name.as_deref(),
                info.group_name,
                message.group_name,
                message.service_name,
            );
            (key, hosts)
        });
        Ok(Listing {
            request_id: message.request_id,
            list: list.map(|(key, hosts)| (key, HostList { json, hosts })),
        })
    }
}

/// A service's `(group, service)`: the message's own, else what the list's `name` (`service` or
/// `group@@service`) and `groupName` say.
fn key(
    name: Option<&str>,
    info_group: Option<String>,
    group: Option<String>,
    service: Option<String>,
) -> Key {
    let name = name.unwrap_or("");
    let (named_group, name) = name.split_once("@@").unwrap_or(("", name));
    let group = group
        .or(info_group)
        .unwrap_or_else(|| named_group.to_owned());
    (group, service.unwrap_or_else(|| name.to_owned()))
}

/// One instance; what Nacos leaves out takes the Java client's defaults.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Host {
    instance_id: Option<String>,
    ip: Option<String>,
    port: i64,
    weight: f64,
    healthy: bool,
    enabled: bool,
    ephemeral: bool,
    cluster_name: Option<String>,
    service_name: Option<String>,
    metadata: Option<HashMap<String, String>>,
}

impl Default for Host {
    fn default() -> Host {
        Host {
            instance_id: None,
            ip: None,
            port: 0,
            weight: 1.0,
            healthy: true,
            enabled: true,
            ephemeral: true,
            cluster_name: None,
            service_name: None,
            metadata: None,
        }
    }
}

impl Host {
    fn into_instance(self) -> ServiceInstance {
        ServiceInstance {
            instance_id: self.instance_id,
            ip: self.ip.unwrap_or_default(),
            // Out of range: 0, which no provider URL takes.
            port: i32::try_from(self.port).unwrap_or(0),
            weight: self.weight,
            healthy: self.healthy,
            enabled: self.enabled,
            ephemeral: self.ephemeral,
            cluster_name: self.cluster_name,
            service_name: self.service_name,
            metadata: self.metadata.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn listing(body: serde_json::Value) -> Listing {
        Listing::read(Bytes::from(body.to_string())).unwrap()
    }

    #[test]
    fn a_push_names_its_service_and_defaults_what_it_leaves_out() {
        let push = listing(json!({
            "requestId": "7",
            "serviceInfo": {
                "name": "DEFAULT_GROUP@@providers:com.acme.Greeter::",
                "hosts": [
                    {"ip": "10.0.0.1", "port": 20880, "metadata": {"protocol": "dubbo"}},
                    {"ip": "10.0.0.2", "port": 99999999999_i64, "enabled": false, "metadata": null},
                ],
            },
        }));
        assert_eq!(push.request_id.as_deref(), Some("7"));
        let (key, hosts) = push.list.unwrap();
        assert_eq!(
            key,
            (
                "DEFAULT_GROUP".to_owned(),
                "providers:com.acme.Greeter::".to_owned()
            )
        );
        let instances = hosts.instances();
        assert!(instances[0].enabled && instances[0].healthy);
        assert_eq!(instances[0].metadata["protocol"], "dubbo");
        assert_eq!(instances[1].port, 0);
        assert!(!instances[1].enabled);
    }

    #[test]
    fn each_instance_is_its_own_json_and_a_bad_one_costs_only_itself() {
        let push = listing(json!({
            "groupName": "g",
            "serviceName": "s",
            "serviceInfo": {
                "name": "other@@t",
                "hosts": [
                    {"ip": "10.0.0.1", "port": 1, "metadata": {"k": "a \"quoted\" \u{e9}"}},
                    {"ip": 7, "port": "not a port"},
                    {"ip": "10.0.0.3", "port": 3},
                ],
            },
        }));
        let (key, hosts) = push.list.unwrap();
        // The message's own group and service come first.
        assert_eq!(key, ("g".to_owned(), "s".to_owned()));
        assert_eq!(hosts.len(), 3);
        let raw: Vec<&[u8]> = hosts.raw().collect();
        let first: serde_json::Value = serde_json::from_slice(raw[0]).unwrap();
        assert_eq!(first["metadata"]["k"], "a \"quoted\" é");
        assert!(raw[1].starts_with(b"{") && raw[1].ends_with(b"}"));
        let ips: Vec<String> = hosts.instances().into_iter().map(|i| i.ip).collect();
        assert_eq!(ips, ["10.0.0.1", "10.0.0.3"]);
    }

    #[test]
    fn a_message_without_a_list_has_none_and_a_null_list_is_empty() {
        let ack = listing(json!({"requestId": "1", "resultCode": 200}));
        assert!(ack.list.is_none());
        let empty = listing(json!({"serviceInfo": {"name": "g@@s", "hosts": null}}));
        let (key, hosts) = empty.list.unwrap();
        assert_eq!(key, ("g".to_owned(), "s".to_owned()));
        assert!(hosts.is_empty());
        assert!(Listing::read(Bytes::from_static(b"{\"serviceInfo\": [")).is_err());
    }
}
