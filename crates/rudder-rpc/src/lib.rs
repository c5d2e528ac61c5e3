//! The last hop of rudder's data path: calls to one provider, and the statistics every call updates.
//!
//! [`status`] holds Dubbo's `RpcStatus` counters, which the `leastactive` and `shortestresponse`
//! balancers read.

#[allow(dead_code)]
mod codec;
mod response;
pub mod status;

pub use response::{ProviderError, ResponseStatus, RpcResponse};
