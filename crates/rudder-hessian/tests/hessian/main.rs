//! Integration tests of rudder-hessian: Java vectors, round trips, hostile input.
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.

mod amplification;
mod compact_forms;
mod errors;
mod hostile_input;
mod java_types;
mod roundtrip;
mod serde_types;
mod vectors;
