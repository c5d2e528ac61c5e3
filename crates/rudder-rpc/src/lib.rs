//! The last hop of rudder's data path: calls to Dubbo providers over `dubbo://` (hessian2), and the
//! statistics every call updates.
//!
//! - [`DubboProtocol`] is the client: `invoke(url, invocation)` sends one call over a multiplexed
//!   connection to the URL's address and returns an [`RpcResponse`] (a value or the provider's
//!   business exception, plus attachments) or an [`RpcError`](rudder_common::error::RpcError).
//!   `invoke_counted` also counts the call in a [`ProviderStatus`](rudder_common::status::ProviderStatus).
//! - [`server`] is a small dubbo:// provider for tests, demos and benchmarks.
//! - call statistics (Dubbo's `RpcStatus`, read by `leastactive` and `shortestresponse`) live below
//!   every layer, in [`rudder_common::status`].
//!
//! # URL parameters
//!
//! | parameter | scope | default | meaning |
//! |---|---|---|---|
//! | `timeout` | the invocation's `timeout` attachment, else `<method>.timeout`, else `timeout` | 1000 ms | per-call deadline |
//! | `payload` | provider | 8 MiB | largest frame body sent or accepted |
//! | `heartbeat` | provider | 60000 ms | idle time before a heartbeat; 3× it without input closes the connection |
//! | `connect.timeout` | provider | 3000 ms | TCP connect deadline |
//! | `connections` | provider | 1 | multiplexed connections per provider address, used round-robin |
//! | `actives` | method | 0 (no limit) | concurrent calls per method (`invoke_counted` only) |
//! | `version`, `group` | provider | `0.0.0`, none | sent as request attachments (group only when set) |
//!
//! Values that are not positive numbers fall back to the default, as Java's `getPositiveParameter`.
//!
//! # Wire format
//!
//! Dubbo 2's `ExchangeCodec`/`DubboCodec`: a 16-byte header (magic `0xdabb`, flags, status, request
//! id, body length) and a hessian2 body. Requests carry dubbo version `2.0.2`, so providers answer
//! with attachments. Heartbeats are answered and sent after `heartbeat` ms of idleness; a provider's
//! readonly (`R`) event stops new calls on that connection. Non-OK statuses map to error kinds as
//! [`ResponseStatus::error_kind`] documents.

mod backoff;
mod census;
mod codec;
mod connection;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
mod pool;
mod protocol;
mod response;
pub mod server;
mod settings;
mod write_batch;

pub use census::live_connection_tasks;
pub use protocol::DubboProtocol;
pub use response::{ProviderError, ResponseStatus, RpcResponse};
