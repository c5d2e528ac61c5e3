//! The last hop of rudder's data path: calls to one provider, and the statistics every call updates.
//!
//! [`status`] holds Dubbo's `RpcStatus` counters, which the `leastactive` and `shortestresponse`
//! balancers read.

pub mod status;
