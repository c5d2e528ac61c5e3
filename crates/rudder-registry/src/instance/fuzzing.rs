//! Entry points for the fuzz targets (feature `fuzzing`): the decoders of application-level
//! discovery, with the bounds they promise checked by the caller. Not a stable API.

use super::address::provider_url;
use super::json::{Instance, MAX_ENDPOINTS, MAX_METADATA_ENTRIES};
use super::mapping::{app_names, MAX_APPS};
use super::metadata::{metadata_service_url, MetadataInfo, MAX_PARAMS, MAX_SERVICES};
use crate::migration_rule::{ConsumerMigration, MigrationRule, MAX_ENTRIES};

/// Reads `data` as an instance node, as a MetadataInfo JSON, as a mapping and as a migration rule, builds the URLs an
/// instance and a MetadataInfo would give, and panics if any bound is broken. Returns how many URLs
/// were built.
pub fn check_app_level(data: &[u8]) -> usize {
    let instance = Instance::parse("fuzz", data).ok();
    if let Some(instance) = &instance {
        assert!(instance.metadata.len() <= MAX_METADATA_ENTRIES);
        assert!(instance.endpoints.len() <= MAX_ENDPOINTS);
        assert!(instance.metadata_service_params().len() <= MAX_METADATA_ENTRIES);
        let _ = metadata_service_url(instance);
    }
    let info = MetadataInfo::from_json(data).ok();
    if let Some(info) = &info {
        assert!(info.services.len() <= MAX_SERVICES);
        assert!(info.services.iter().all(|s| s.params.len() <= MAX_PARAMS));
    }
    if let Ok(text) = std::str::from_utf8(data) {
        assert!(app_names(text).len() <= MAX_APPS);
        // The same text as a migration rule: parsed (or rejected) without panicking, bounded, and
        // resolvable for any reference.
        if let Ok(rule) = MigrationRule::parse(text) {
            assert!(rule.interfaces.len() + rule.applications.len() <= MAX_ENTRIES);
            let apps = ["a".to_owned(), "b".to_owned()];
            let _ = rule.resolve("S:1.0.0", &apps, &ConsumerMigration::default());
        }
    }
    match (instance, info) {
        (Some(instance), Some(info)) => {
            let mut built = 0;
            for service in info
                .services
                .iter()
                .filter(|s| super::address::is_well_formed(s))
            {
                let url = provider_url(&instance, service);
                // What the catalog reads back from the node name is the same provider.
                // (One that does not read back is counted as junk by the catalog, not misread.)
                if let Ok(back) = rudder_common::url::DubboUrl::from_node_name(&url.to_node_name())
                {
                    if back.host() == instance.host {
                        assert_eq!(back.port(), url.port());
                        assert_eq!(back.parameter("interface"), Some(service.name.as_str()));
                    }
                }
                built += 1;
            }
            built
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_pass_the_checks() {
        let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/app_level");
        let mut read = 0;
        for entry in std::fs::read_dir(seeds).expect("seed directory") {
            let data = std::fs::read(entry.expect("seed").path()).expect("read seed");
            let _ = check_app_level(&data);
            read += 1;
        }
        assert!(read >= 4, "{read} seeds");
        // The migration-rule seed is a rule Dubbo's own test parses.
        let rule = std::fs::read_to_string(format!("{seeds}/migration-rule.yaml")).unwrap();
        assert_eq!(MigrationRule::parse(&rule).unwrap().interfaces.len(), 2);
    }
}
