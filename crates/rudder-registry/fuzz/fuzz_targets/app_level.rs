//! Any bytes as an application-level discovery node: Curator instance JSON, remote MetadataInfo JSON,
//! an interface-application mapping and a migration rule (`<app>.migration` YAML). Parsing never panics, and every bound holds (metadata
//! entries, endpoints, services, parameters, application names); provider URLs built from what was
//! read never panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = rudder_registry::fuzzing::check_app_level(data);
});
