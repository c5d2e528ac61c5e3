//! The last hop of rudder's data path: calls to Dubbo providers over `dubbo://` (hessian2), and the
//! statistics every call updates.
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//!                                                                      ^ here: DubboProtocol
//! ```
//!
//! The layers above have chosen one provider URL; this crate sends the call there and hands back the
//! answer. tri:// calls go through rudder-triple, which shares this crate's response and error types.
//!
//! ```no_run
//! use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
//! use rudder_rpc::DubboProtocol;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let url = DubboUrl::parse("dubbo://127.0.0.1:20880/com.acme.Greeter?version=1.0.0&timeout=3000")?;
//! let protocol = DubboProtocol::new();
//! let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("rust")]);
//! let answer = protocol.invoke(&url, &call).await?;
//! println!("{:?}", answer.value());
//! # Ok(())
//! # }
//! ```
//!
//! - [`DubboProtocol`] is the client: `invoke(url, invocation)` sends one call over a multiplexed
//!   connection to the URL's address and returns an [`RpcResponse`] (a value or the provider's
//!   business exception, plus attachments) or an [`RpcError`](rudder_common::error::RpcError).
//!   `invoke_counted` also counts the call in a [`ProviderStatus`](rudder_common::status::ProviderStatus).
//! - `server` (feature `server`) is a small dubbo:// provider for tests, demos
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
pub mod endpoint;
// The codec's provider half (decode requests, encode responses) serves the test server and the fuzz
// targets (features `server` and `wire`); the client alone leaves it unused.
#[cfg_attr(
    not(any(feature = "server", feature = "wire")),
    allow(dead_code, unused_imports)
)]
mod codec;
mod connection;
mod pool;
mod protocol;
mod response;
#[cfg(feature = "fuzzing")]
mod scripted_peer;
#[cfg(feature = "wire")]
pub mod wire;
// A small dubbo:// server for tests, examples and the CLI's demo (feature `server`).
#[cfg(feature = "server")]
pub mod server;
mod settings;
pub mod tls;
// The server sessions' writer (client connections write through `connection::outbox`).
#[cfg(feature = "server")]
mod write_batch;

pub use census::{connection_tasks_ended, live_connection_tasks};
pub use protocol::DubboProtocol;
pub use response::{ProviderError, ResponseStatus, RpcResponse};
