//! Browsing a Nacos registry for tools (`rudder list`), and registering a provider run by rudder
//! itself: one-shot reads and writes beside the subscriptions.

use rudder_common::url::DubboUrl;

use super::{nacos_error, naming, NacosRegistry, MAX_SERVICES, PAGE};
use crate::error::RegistryError;

impl NacosRegistry {
    /// Every Nacos service name of the registry's group, paged, bounded.
    pub(super) async fn service_names(&self) -> Result<Vec<String>, RegistryError> {
        let clients = self
            .connection
            .clients_within(self.connection.options.connect_timeout())
            .await?;
        let group = self.connection.address.group.clone();
        let mut names = Vec::new();
        for page in 1.. {
            let (listed, total) = clients
                .naming
                .get_service_list(page, PAGE, Some(group.clone()))
                .await
                .map_err(|e| nacos_error("list services of", group.clone(), e))?;
            let done = listed.is_empty();
            names.extend(listed);
            let total = usize::try_from(total).unwrap_or(0).min(MAX_SERVICES);
            if done || names.len() >= total {
                break;
            }
        }
        names.truncate(MAX_SERVICES);
        Ok(names)
    }

    pub(super) async fn services(&self) -> Result<Vec<String>, RegistryError> {
        let mut interfaces: Vec<String> = self
            .service_names()
            .await?
            .iter()
            .filter_map(|name| naming::provided_interface(name))
            .map(str::to_owned)
            .collect();
        interfaces.sort_unstable();
        interfaces.dedup();
        Ok(interfaces)
    }

    pub(super) async fn provider_urls(
        &self,
        interface: &str,
    ) -> Result<Vec<DubboUrl>, RegistryError> {
        self.connection
            .clients_within(self.connection.options.connect_timeout())
            .await?;
        let group = self.connection.address.group.clone();
        let mut urls = Vec::new();
        for name in self.service_names().await? {
            if naming::provided_interface(&name) != Some(interface) {
                continue;
            }
            // Through rudder's stream: nacos-sdk refuses a service over 4 MiB (`stream`).
            let instances = self
                .connection
                .stream
                .list(&name, &group)
                .await
                .map_err(|e| {
                    nacos_error(
                        "list",
                        name.clone(),
                        nacos_sdk::api::error::Error::ErrResult(e),
                    )
                })?;
            urls.extend(instances.iter().filter_map(naming::instance_url));
        }
        Ok(urls)
    }

    pub(super) async fn register_provider(&self, url: &DubboUrl) -> Result<(), RegistryError> {
        let clients = self
            .connection
            .clients_within(self.connection.options.connect_timeout())
            .await?;
        let service = naming::service_name(
            "providers",
            url.service_interface(),
            url.parameter("version"),
            url.parameter("group"),
        );
        clients
            .naming
            .register_instance(
                service.clone(),
                Some(self.connection.address.group.clone()),
                naming::url_instance(url, "providers"),
            )
            .await
            .map_err(|e| nacos_error("register", service, e))
    }
}
