//! Calls to Dubbo 3 providers over Triple (`tri://`), the second protocol under rudder's cluster beside
//! dubbo:// (`rudder-rpc`).
//!
//! ```text
//! registry ──▶ directory ──▶ routers ──▶ cluster ──▶ load balance ──▶ rpc
//!                                                                      ^ here: TripleProtocol
//! ```
//!
//! [`TripleProtocol`] calls Java interface (POJO) services, the common case of a Java shop moving a
//! service to `protocol=tri`: HTTP/2 through tonic's client machinery (gRPC framing, one connection per
//! provider address, keepalive pings as the heartbeat), Dubbo's wrapper messages
//! (`TripleRequestWrapper` / `TripleResponseWrapper`) with hessian2 inside, and the answer as the same
//! [`RpcResponse`](rudder_rpc::RpcResponse) a dubbo:// call gives: a value, or the provider's business
//! exception. Failures carry the error kinds dubbo:// uses (`grpc-status` mapped as `status` documents).
//!
//! A failed connect makes later calls to that address fail fast for a jittered, doubling wait (100 ms
//! up to 10 s), as over dubbo://.
//!
//! Protobuf (IDL) services go through the same connections as gRPC requests built by a
//! tonic-generated client ([`grpc`]): [`TripleProtocol::grpc_unary`] for a request of one message
//! (buffered, so it can be sent again), [`TripleProtocol::grpc_stream`] for a streaming one.
//!
//! # URL parameters
//!
//! `timeout` (the invocation's `timeout` attachment, else `<method>.timeout`, else `timeout`; 1000 ms),
//! `connect.timeout` (3000 ms), `heartbeat` (keepalive ping interval, 60 s), `payload` (largest
//! message each way, 8 MiB, at most 64 MiB), `connections` (HTTP/2 connections per address, used
//! round-robin, 1; at most 64), `version` and `group` (sent as `tri-service-version` and
//! `tri-service-group`). Ranges and bad values are handled as for dubbo://.
//!
//! # Examples
//!
//! ```no_run
//! use rudder_common::{invocation::Invocation, url::DubboUrl, Value};
//! use rudder_triple::TripleProtocol;
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let url = DubboUrl::parse("tri://127.0.0.1:50051/org.rudder.it.GreetingService?version=1.0.0")?;
//! let protocol = TripleProtocol::new(Some("my-app".into()));
//! let call = Invocation::new("sayHello", vec!["java.lang.String".into()], vec![Value::from("rust")]);
//! let answer = protocol.invoke(&url, &call).await?;
//! println!("{:?}", answer.value());
//! protocol.shutdown();
//! # Ok(())
//! # }
//! ```

mod body;
mod codec;
mod endpoint;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod grpc;
mod protocol;
mod secure;
mod settings;
mod status;
mod wrapper;

pub use grpc::{GrpcReply, GrpcRequest};
pub use protocol::TripleProtocol;
pub use status::error_kind;
