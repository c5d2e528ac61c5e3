//! A service's instances as Nacos 2.x sends them (a subscription's answer, a push), read into
//! nacos-sdk's `ServiceInstance`, the type the rest of the Nacos code reads.

use std::collections::HashMap;

use nacos_sdk::api::naming::ServiceInstance;

/// `(group, service)`.
pub(crate) type Key = (String, String);

/// A service's instances as Nacos sends them.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct ServiceInfo {
    /// `service`, or `group@@service`.
    name: Option<String>,
    group_name: Option<String>,
    hosts: Vec<Host>,
}

impl ServiceInfo {
    pub(crate) fn key(&self, group: Option<String>, service: Option<String>) -> Key {
        let name = self.name.as_deref().unwrap_or("");
        let (named_group, name) = name.split_once("@@").unwrap_or(("", name));
        let group = group
            .or_else(|| self.group_name.clone())
            .unwrap_or_else(|| named_group.to_owned());
        (group, service.unwrap_or_else(|| name.to_owned()))
    }

    pub(crate) fn instances(self) -> Vec<ServiceInstance> {
        self.hosts.into_iter().map(Host::into_instance).collect()
    }
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

    #[test]
    fn a_push_names_its_service_and_defaults_what_it_leaves_out() {
        let info: ServiceInfo = serde_json::from_value(json!({
            "name": "DEFAULT_GROUP@@providers:com.acme.Greeter::",
            "hosts": [
                {"ip": "10.0.0.1", "port": 20880, "metadata": {"protocol": "dubbo"}},
                {"ip": "10.0.0.2", "port": 99999999999_i64, "enabled": false, "metadata": null},
            ],
        }))
        .unwrap();
        assert_eq!(
            info.key(None, None),
            (
                "DEFAULT_GROUP".to_owned(),
                "providers:com.acme.Greeter::".to_owned()
            )
        );
        let instances = info.instances();
        assert!(instances[0].enabled && instances[0].healthy);
        assert_eq!(instances[0].metadata["protocol"], "dubbo");
        assert_eq!(instances[1].port, 0);
        assert!(!instances[1].enabled);
    }
}
