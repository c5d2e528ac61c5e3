//! Application-level service discovery (Dubbo 3's instance registration), as on ZooKeeper (Nacos:
//! the same with its own names, see `crate::nacos::apps`).
//!
//! A Dubbo 3 provider with `register-mode=instance` (or `all`, the default, which also writes the
//! interface-level nodes) registers the application, not each interface:
//!
//! ```text
//! /services/<app>/<host:port>          Curator instance JSON: address, port, metadata (json.rs)
//! /dubbo/mapping/<interface>           "app1,app2": which applications export the interface (mapping.rs)
//! /dubbo/metadata/<app>/<revision>     MetadataInfo JSON, only with storage-type=remote (metadata.rs)
//! ```
//!
//! The instance's `dubbo.metadata.revision` names its MetadataInfo: the services it exports, with
//! their parameters. A consumer finds the applications of its interface (its `provided-by` setting,
//! else the mapping), follows each application's instances (one watch per application and registry,
//! however many references: app_watch.rs), gets each revision's MetadataInfo once (from the metadata
//! report, or from the instance's own MetadataService through a [`MetadataFetcher`] the layer above
//! provides), and builds provider URLs from instance and service (address.rs) as Dubbo does. Those
//! URLs go through the same catalog as interface-level providers (matching by interface, group,
//! version and protocol, consumer parameters, configurators), and the migration step decides which
//! of the two views feeds the directory (`crate::migration`).

pub(crate) mod address;
pub(crate) mod app_watch;
pub(crate) mod feed;
#[cfg(feature = "fuzzing")]
pub(crate) mod fuzzing;
pub(crate) mod join;
pub(crate) mod json;
pub(crate) mod mapping;
pub(crate) mod metadata;
pub(crate) mod source;
pub(crate) mod view;
