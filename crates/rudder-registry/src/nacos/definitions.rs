//! Service definitions (method names and parameter types, for `rudder list --with-class` and
//! `invoke`) from the metadata report in Nacos config, where a Java Dubbo 3.3 provider writes them
//! when the registry doubles as its metadata report (the default):
//!
//! | what | where (Dubbo 3.3) |
//! |---|---|
//! | data id | `<interface>:<version>:<group>:provider:<application>`, empty version and group left empty (`MetadataIdentifier.getUniqueKey(UNIQUE_KEY)`) |
//! | group | the registry URL's `group` when it names one (`DEFAULT_GROUP` too), else `dubbo` (`NacosMetadataReport`: `url.getParameter(GROUP_KEY, DEFAULT_ROOT)`; `registryAsMetadataCenter` copies the registry URL's parameters) |
//! | namespace | the registry's (`public` unless `namespace=` is given) |
//! | text | the `FullServiceDefinition` JSON (`ServiceConfig` → `MetadataUtils.publishServiceDefinition`) |
//!
//! The definitions of an interface are found by listing the group's configs (the data id holds
//! versions, groups and applications rudder does not know beforehand) and keeping those of the
//! interface's provider side.

use crate::backend::ServiceDefinition;
use crate::error::RegistryError;
use crate::nacos::address::NacosAddress;
use crate::nacos::client::Connection;
use crate::nacos::configs;

/// The metadata report's group when the registry names none (Dubbo's `DEFAULT_ROOT`).
const DEFAULT_METADATA_GROUP: &str = "dubbo";
/// The most configs of the group a listing reads (a bound on what a server can make rudder hold).
const MAX_LISTED: usize = 100_000;

/// The config group the metadata report of `address` writes to.
fn metadata_group(address: &NacosAddress) -> &str {
    if address.group_named {
        &address.group
    } else {
        DEFAULT_METADATA_GROUP
    }
}

/// `(version, group, application)` of a provider definition's data id of `interface`.
fn provider_key<'a>(
    data_id: &'a str,
    interface: &str,
) -> Option<(Option<&'a str>, Option<&'a str>, &'a str)> {
    let rest = data_id.strip_prefix(interface)?.strip_prefix(':')?;
    let mut parts = rest.splitn(4, ':');
    let (version, group, side, application) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let some = |s: &'a str| Some(s).filter(|s| !s.is_empty());
    (side == "provider" && !application.is_empty())
        .then(|| (some(version), some(group), application))
}

/// Every provider definition of `interface` in the metadata report, sorted by data id.
pub(crate) async fn service_definitions(
    connection: &Connection,
    interface: &str,
) -> Result<Vec<ServiceDefinition>, RegistryError> {
    let group = metadata_group(&connection.address);
    let mut found = Vec::new();
    for listed in configs::list_group(connection, group, MAX_LISTED).await? {
        let Some((version, service_group, application)) = provider_key(&listed.data_id, interface)
        else {
            continue;
        };
        let text = match listed.content.filter(|t| !t.trim().is_empty()) {
            Some(text) => text,
            // A server that lists without the texts: read the config itself.
            None => match configs::read(connection, &listed.data_id, group).await? {
                Some(text) => text,
                None => continue,
            },
        };
        found.push(ServiceDefinition {
            path: format!("{group}/{}", listed.data_id),
            version: version.map(str::to_owned),
            group: service_group.map(str::to_owned),
            application: application.to_owned(),
            text,
        });
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_provider_data_id_names_version_group_and_application() {
        let iface = "com.acme.Greeter";
        assert_eq!(
            provider_key("com.acme.Greeter:1.0.0:g1:provider:shop", iface),
            Some((Some("1.0.0"), Some("g1"), "shop"))
        );
        assert_eq!(
            provider_key("com.acme.Greeter:::provider:shop", iface),
            Some((None, None, "shop"))
        );
        // Another interface sharing the prefix, the consumer side, a rule, a short id.
        for other in [
            "com.acme.GreeterV2:::provider:shop",
            "com.acme.Greeter:::consumer:shop",
            "com.acme.Greeter.configurators",
            "com.acme.Greeter:1.0.0",
            "com.acme.Greeter:::provider:",
        ] {
            assert_eq!(provider_key(other, iface), None, "{other}");
        }
    }

    #[test]
    fn the_group_is_the_registry_group_when_named_else_dubbo() {
        let default = NacosAddress::parse("nacos://127.0.0.1:8848").unwrap();
        assert_eq!(metadata_group(&default), "dubbo");
        let named = NacosAddress::parse("nacos://127.0.0.1:8848?group=G1").unwrap();
        assert_eq!(metadata_group(&named), "G1");
        // Named, even as Nacos's default: Dubbo copies the parameter, so its report goes there.
        let explicit = NacosAddress::parse("nacos://127.0.0.1:8848?group=DEFAULT_GROUP").unwrap();
        assert_eq!(metadata_group(&explicit), "DEFAULT_GROUP");
        assert_eq!(explicit.group, default.group);
        assert_ne!(explicit, default, "two places of the metadata report");
        assert_eq!(
            explicit.to_string(),
            "nacos://127.0.0.1:8848?group=DEFAULT_GROUP"
        );
    }
}
