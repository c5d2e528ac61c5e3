//! The last hop of rudder's data path: calls to Dubbo providers over `dubbo://` (hessian2), and the
//! statistics every call updates.
//!
//! - [`DubboProtocol`] is the client: `invoke(url, invocation)` sends one call over a multiplexed
//!   connection to the URL's address and returns an [`RpcResponse`] (a value or the provider's
//!   business exception, plus attachments) or an [`RpcError`](rudder_common::error::RpcError).
//!   `invoke_counted` also counts the call in a [`ProviderStatus`](rudder_common::status::ProviderStatus).
//! - `server` (feature `internals`, not a stable API) is a small dubbo:// provider for tests, demos
//!   and benchmarks.
//! - call statistics (Dubbo's `RpcStatus`, read by `leastactive` and `shortestresponse`) live below
//!   every layer, in [`rudder_common::status`].
//!
//! # URL parameters
//!
//! | parameter | scope | default | valid range | meaning |
//! |---|---|---|---|---|
//! | `timeout` | the invocation's `timeout` attachment, else `<method>.timeout`, else `timeout` | 1000 ms | 1 ms ..= 1 h | per-call deadline; connecting counts inside it |
//! | `connect.timeout` | provider | 3000 ms | 1 ms ..= 60 s | TCP connect deadline (a call still ends at its own deadline) |
//! | `heartbeat` | provider | 60000 ms | 100 ms ..= 1 h | idle time before a heartbeat; 3× it without input closes the connection; a write making no progress for min(heartbeat, 15 s) closes it too |
//! | `payload` | provider | 8 MiB | 256 B ..= 64 MiB | largest frame body sent or accepted; a larger response fails its call only |
//! | `connections` | provider | 1 | 1 ..= 64 | multiplexed connections per provider address, used round-robin |
//! | `actives` | method | 0 (no limit) | ≤ 0 = no limit, 1 ..= 2³¹−1 | concurrent calls per method (`invoke_counted` only) |
//! | `version`, `group` | provider | `0.0.0`, none | | sent as request attachments (group only when set) |
//!
//! A value that is not a positive number takes the default, as Java's `getPositiveParameter`; a
//! number outside its range is clamped to it. Either way one warning is logged per (parameter,
//! value), however many calls read it. The `payload` ceiling exists because a frame is buffered
//! whole before it is decoded: 64 MiB (8× Dubbo's default) bounds what one connection can make us
//! hold. The transport settings (`timeout` to `connections`) are declared once, in
//! `rudder_common::url::transport`, and tri:// reads the same ones.
//!
//! # Failures and lifecycle
//!
//! A slot whose connect failed, or whose connection closed before any answer, refuses calls fast
//! until its backoff expires (100 ms doubling to 10 s, drawn in the upper half of that with
//! jitter). Connections close with their last user: see [`DubboProtocol`]'s lifecycle section,
//! [`DubboProtocol::retain_addresses`] and [`DubboProtocol::shutdown`].
//!
//! # Wire format
//!
//! Dubbo 2's `ExchangeCodec`/`DubboCodec`: a 16-byte header (magic `0xdabb`, flags, status, request
//! id, body length) and a hessian2 body. Requests carry dubbo version `2.0.2`, so providers answer
//! with attachments. Heartbeats are answered and sent after `heartbeat` ms of idleness; a provider's
//! readonly (`R`) event stops new calls on that connection. Non-OK statuses map to error kinds as
//! [`ResponseStatus::error_kind`] documents.

pub mod backoff;
mod census;
// The codec's provider half (decode requests, encode responses) serves the test server and the fuzz
// targets, both behind `internals`; the client alone leaves it unused.
#[cfg_attr(not(feature = "internals"), allow(dead_code, unused_imports))]
mod codec;
mod connection;
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod internals;
mod pool;
mod protocol;
mod response;
#[cfg(feature = "fuzzing")]
mod scripted_peer;
// A small dubbo:// server for tests, examples and the CLI's demo (feature `internals`).
#[cfg(feature = "internals")]
#[doc(hidden)]
pub mod server;
mod settings;
mod write_batch;

pub use census::{connection_tasks_ended, live_connection_tasks};
pub use protocol::DubboProtocol;
pub use response::{ProviderError, ResponseStatus, RpcResponse};
