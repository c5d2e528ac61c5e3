//! Integration tests of rudder-cluster: Dubbo's own tests ported, Java vectors, routers, directory.
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.

mod adaptive_vectors;
mod bounded_hash;
mod directory;
mod dubbo_tests;
mod errors;
mod invoker;
mod java_vectors;
mod outlier;
mod outlier_exceptions;
mod outlier_relative;
mod parameters;
mod peakewma;
mod publish;
mod router_cache;
mod router_condition;
mod router_tag;
mod router_tag_apps;
mod router_v31;
mod support;
mod throwing;
mod warmup;
mod zone_aware;
