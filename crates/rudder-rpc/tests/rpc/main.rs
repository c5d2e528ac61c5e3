//! Integration tests of rudder-rpc against in-process dubbo:// providers.
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.
//! `no_tasks_left` is one: it counts connection tasks process-wide (`live_connection_tasks`).

mod failures;
mod hostile_response;
mod lifecycle;
mod provider_faults;
mod round_trip;
mod support;
