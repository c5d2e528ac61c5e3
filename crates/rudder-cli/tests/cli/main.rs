//! Integration tests of the `rudder` command line (the built binary, `CARGO_BIN_EXE_rudder`).
//!
//! Layout rule: each integration test file is a module of this one binary (`tests/<crate>/main.rs`),
//! so the crate links one test binary, not one per file. A new test file goes next to this one and
//! gets a `mod` line here. Only a test that measures process-wide state (a global allocator, a
//! process-wide counter) gets a binary of its own, and says why.

mod bench;
mod demo;
mod docs_commands;
mod exit_codes;
mod flag_bounds;
mod invoke;
mod invoke_calls;
mod invoke_proto;
mod metrics_addr;
mod simulate;
