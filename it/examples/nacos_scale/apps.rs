//! The application-level scenario (`apps`): one application, `big`, with 1,000 instances exporting
//! the same 50 interfaces, written as a Java Dubbo 3.3 provider writes them into Nacos
//! (`NacosServiceDiscovery`, `NacosMetadataReport`; where rudder reads them: `nacos/apps.rs`):
//!
//! * the instances: Nacos service `big` in `DEFAULT_GROUP`, each with `dubbo.endpoints`,
//!   `dubbo.metadata.revision` and `dubbo.metadata.storage-type` as metadata;
//! * the mapping: config `dataId=<interface>`, `group=mapping`, content `big`, one per interface;
//! * the metadata: config `dataId=big`, `group=<revision>`, the MetadataInfo JSON of the 50
//!   services. Storage type `remote` (the metadata in Nacos config), so that no MetadataService has
//!   to answer: Dubbo's default is `local`, a call to one instance per revision, which `app_scale`
//!   measures on ZooKeeper; either way it is one fetch per revision.

use std::collections::HashMap;
use std::time::Duration;

use nacos_sdk::api::config::{ConfigService, ConfigServiceBuilder};
use nacos_sdk::api::naming::{NamingService, ServiceInstance};
use nacos_sdk::api::props::ClientProps;
use rudder_it::Rnacos;

use crate::{interface, WAIT};

/// The application.
pub(crate) const APP: &str = "big";
const REVISION: &str = "0f7c9e4a2b1d3c5e";

/// An instance of `big` at `ip`, as `NacosServiceDiscovery` registers one.
pub(crate) fn instance(ip: &str) -> ServiceInstance {
    let mut metadata = HashMap::new();
    for (k, v) in [
        ("dubbo.endpoints", r#"[{"port":20880,"protocol":"dubbo"}]"#),
        ("dubbo.metadata.revision", REVISION),
        ("dubbo.metadata.storage-type", "remote"),
        ("meta-v", "1.0.0"),
        ("timestamp", "1733300000000"),
    ] {
        metadata.insert(k.to_owned(), v.to_owned());
    }
    ServiceInstance {
        ip: ip.to_owned(),
        port: 20880,
        metadata,
        ..ServiceInstance::default()
    }
}

/// The MetadataInfo of the revision: the 50 interfaces over dubbo.
fn metadata_info(interfaces: usize) -> String {
    let services: Vec<String> = (0..interfaces)
        .map(|j| {
            let s = interface(j);
            format!(
                r#""{s}:dubbo":{{"name":"{s}","protocol":"dubbo","path":"{s}","port":-1,"params":{{"side":"provider","application":"{APP}","methods":"sayHello,add,echoUser","release":"3.3.6"}}}}"#
            )
        })
        .collect();
    format!(
        r#"{{"app":"{APP}","revision":"{REVISION}","services":{{{}}}}}"#,
        services.join(",")
    )
}

/// Writes the instances (one batch), the mapping of each of `interfaces` and the metadata.
pub(crate) async fn fill(
    nacos: &Rnacos,
    writer: &NamingService,
    instances: Vec<ServiceInstance>,
    interfaces: usize,
) {
    writer
        .batch_register_instance(APP.to_owned(), None, instances)
        .await
        .expect("batch register");
    let config = config(nacos).await;
    publish(&config, APP, REVISION, &metadata_info(interfaces)).await;
    for j in 0..interfaces {
        publish(&config, &interface(j), "mapping", APP).await;
    }
}

async fn config(nacos: &Rnacos) -> ConfigService {
    let props = ClientProps::new()
        .server_addr(nacos.address())
        .env_first(false);
    ConfigServiceBuilder::new(props)
        .build()
        .await
        .expect("a Nacos config client")
}

/// Publishes a config, retried until the client's connection is up.
async fn publish(config: &ConfigService, data_id: &str, group: &str, content: &str) {
    let published = async {
        loop {
            let sent = config
                .publish_config(data_id.into(), group.into(), content.into(), None)
                .await;
            if sent.is_ok_and(|ok| ok) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(WAIT, published)
        .await
        .expect("the config is published");
}
