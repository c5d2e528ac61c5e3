//! Integration tests of the rudder facade against in-process dubbo:// providers.
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.

mod api;
mod call_future;
mod cluster_modes;
mod consumer;
mod docs_tables;
mod lifecycle;
#[cfg(feature = "metrics")]
mod metrics;
mod plugged;
mod reference;
