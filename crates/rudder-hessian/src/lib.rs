//! Hessian 2.0 serialization, as Dubbo's `hessian-lite` writes and reads it.
//!
//! The codec itself is being built; for now this crate holds the [`Value`] model every layer shares.

mod value;

pub use value::Value;
