//! Integration tests against real servers: ZooKeeper in testcontainers, the Java Dubbo provider,
//! sofa-rpc-node, Python grpcio (see it/README.md).
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.

mod app_discovery;
mod app_discovery_tri;
mod availability_kill;
mod bench_peakewma;
mod cli_docs_shapes;
mod cli_dubbo_user;
mod cli_exit;
mod cli_multi_registry;
mod cli_proto;
mod cli_read_only;
mod cli_registry;
mod cli_secrets;
mod common;
mod config_center;
mod consumer_host;
mod consumer_scale;
mod demo_tls;
mod empty_push;
mod interop_discovery;
mod interop_peers;
mod java_values;
mod migration_parity;
mod migration_proportion;
mod migration_rule;
mod multi_registry;
mod nacos_auth;
mod nacos_cluster;
mod nacos_discovery;
mod nacos_faults;
mod nacos_migration_parity;
mod nacos_routing_parity;
mod nacos_rules;
mod nacos_watch;
mod outlier_java;
mod peers_loopback;
mod provider_faults;
mod registry_discovery;
mod registry_faults;
mod registry_partitions;
mod registry_verdicts;
mod registry_waits;
mod routing_parity;
mod routing_rules;
mod tag_rule_apps;
mod tls_java;
mod triple_pojo;
mod triple_proto;
mod triple_python_dubbo;
mod unlisted_method;
mod zookeeper_security;
mod zookeeper_smoke;
mod zookeeper_tls;
