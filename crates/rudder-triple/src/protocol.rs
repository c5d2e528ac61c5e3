//! [`TripleProtocol`]: calls to Java interface services over `tri://`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use dashmap::DashMap;
use http::header::{HeaderValue, CONTENT_TYPE};
use http::uri::PathAndQuery;
use rudder_common::error::{causes_text, RpcError, RpcErrorKind};
use rudder_common::invocation::Invocation;
use rudder_common::status::availability::Availability;
use rudder_common::status::record::RecordAvailability;
use rudder_common::url::DubboUrl;
use rudder_hessian::DecodeLimits;
use rudder_rpc::backoff::Backoff;
use rudder_rpc::RpcResponse;
use tokio::sync::OnceCell;
use tonic::metadata::{AsciiMetadataValue, Binary, BinaryMetadataValue, MetadataKey, MetadataMap};
use tonic::transport::{Channel, Endpoint};
use tower::util::MapRequest;

use crate::codec::WrapperCodec;
use crate::settings;
use crate::status::status_error;
use crate::wrapper::{self, TripleRequestWrapper, TripleResponseWrapper};

/// The content type Dubbo's Java client sends (tonic's own default is plain `application/grpc`).
const GRPC_PROTO: HeaderValue = HeaderValue::from_static("application/grpc+proto");
/// Set by a Java provider when the answer is a serialized `Throwable` (`TripleHeaderEnum`).
const EXCEPTION_CODE: &str = "tri-exception-code";
/// The largest header list accepted from a provider (Java's default is 8 KiB).
const MAX_HEADER_LIST: u32 = 64 << 10;
/// How long a keepalive ping may go unanswered before the connection is closed.
const KEEPALIVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);
/// Headers rudder sets itself, or that HTTP/2 and gRPC reserve: never taken from attachments.
const RESERVED: [&str; 8] = [
    "te",
    "content-type",
    "grpc-timeout",
    "tri-service-version",
    "tri-service-group",
    "tri-consumer-appname",
    "user-agent",
    "timeout",
];

/// A channel whose requests say `application/grpc+proto`.
type ProtoChannel =
    MapRequest<Channel, fn(http::Request<tonic::body::Body>) -> http::Request<tonic::body::Body>>;

fn proto_content_type(
    mut request: http::Request<tonic::body::Body>,
) -> http::Request<tonic::body::Body> {
    request.headers_mut().insert(CONTENT_TYPE, GRPC_PROTO);
    request
}

/// The tri:// client: one HTTP/2 connection per provider address (tonic's [`Channel`]; more with the
/// URL parameter `connections`, used round-robin), opened on
/// first use inside the call's deadline, pinged with HTTP/2 keepalives (`heartbeat`), and reopened by
/// tonic after a failure. After a failed connect, calls to that address fail fast for a jittered
/// wait doubling from 100 ms to 10 s.
///
/// A call to a Java interface method sends Dubbo's `TripleRequestWrapper` (each argument a hessian2
/// stream) as `application/grpc+proto` to `/{interface}/{method}`, with the provider URL's version and
/// group as `tri-service-version` / `tri-service-group`, the deadline as `grpc-timeout` and the
/// invocation's attachments as lower-case headers. Messages are bounded by the URL's `payload` both
/// ways, and the answer's hessian2 by the decode budget.
///
/// # Lifecycle
///
/// A connection is owned by this protocol and by the calls running on it:
/// [`retain_addresses`](TripleProtocol::retain_addresses) drops the connections of providers that left
/// (each closes when its calls in flight end), [`shutdown`](TripleProtocol::shutdown) drops them all
/// and refuses later calls, and dropping the last clone does the same.
#[derive(Debug, Clone, Default)]
pub struct TripleProtocol {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    connections: DashMap<String, Arc<Slot>>,
    backoff: Backoff,
    application: Option<String>,
    shut_down: AtomicBool,
    /// TLS to every provider, when configured ([`TripleProtocol::with_tls`]).
    tls: Option<rudder_rpc::tls::TlsClient>,
}

/// One provider address's connections (`connections`, 1 by default), each made by the first call
/// that needs it, used round-robin.
#[derive(Debug)]
struct Slot {
    addr: String,
    channels: Vec<OnceCell<Channel>>,
    /// Per channel: consecutive failed connects, and until when the next one waits.
    failures: Vec<Mutex<(u32, Option<tokio::time::Instant>)>>,
    next: AtomicUsize,
    /// Down while connects fail (until the next is due) and after a call finds no connection.
    availability: Availability,
}

impl TripleProtocol {
    /// A client with no connections, sending `application` as `tri-consumer-appname`.
    pub fn new(application: Option<String>) -> TripleProtocol {
        TripleProtocol {
            inner: Arc::new(Inner {
                application: application.filter(|a| !a.is_empty()),
                ..Inner::default()
            }),
        }
    }

    /// [`TripleProtocol::new`] opening every connection with TLS (ALPN `h2`), as a Java consumer with
    /// an `SslConfig` does; see [`rudder_rpc::tls`].
    pub fn with_tls(
        application: Option<String>,
        tls: Option<rudder_rpc::tls::TlsClient>,
    ) -> TripleProtocol {
        TripleProtocol {
            inner: Arc::new(Inner {
                application: application.filter(|a| !a.is_empty()),
                tls,
                ..Inner::default()
            }),
        }
    }

    /// The TLS this client uses, if any.
    pub fn tls(&self) -> Option<&rudder_rpc::tls::TlsClient> {
        self.inner.tls.as_ref()
    }

    /// Calls `invocation` on the provider at `url` (a `tri://` URL) and waits for its answer.
    ///
    /// A business exception thrown by the provider is an `Ok` [`RpcResponse`] holding a
    /// [`JavaException`](rudder_common::value::JavaException), as over dubbo://.
    ///
    /// # Errors
    /// `ShutDown` after [`shutdown`](TripleProtocol::shutdown); `Network` when no connection could be
    /// made in time or it failed (`UNAVAILABLE`); `Timeout` at the deadline (`DEADLINE_EXCEEDED`);
    /// `MethodNotFound` for `UNIMPLEMENTED` / `NOT_FOUND` (no such service or method at the group and
    /// version asked for); `Serialization` when the answer does not decode; the other statuses as
    /// `status::error_kind` documents.
    pub async fn invoke(
        &self,
        url: &DubboUrl,
        invocation: &Invocation,
    ) -> Result<RpcResponse, RpcError> {
        if self.is_shut_down() {
            return Err(RpcError::new(
                RpcErrorKind::ShutDown,
                "triple protocol is shut down",
            ));
        }
        let timeout = settings::call_timeout(url, invocation);
        let deadline = tokio::time::Instant::now() + timeout;
        let address = url.address();
        let timed_out = || {
            RpcError::new(
                RpcErrorKind::Timeout,
                format!(
                    "tri://{address} {}.{}: no answer within {} ms",
                    url.service_interface(),
                    invocation.method_name(),
                    timeout.as_millis()
                ),
            )
        };
        let channel = self.connected(url, timeout, deadline).await?;
        let call = self.call(channel, url, invocation, timeout);
        match tokio::time::timeout_at(deadline, call).await {
            Ok(Ok(response)) => Ok(response),
            // tonic enforces `grpc-timeout` itself too, as a `CANCELLED` "Timeout expired": whichever
            // clock fires first, a call past its deadline is a timeout (not retried as a network fault
            // would be).
            Ok(Err(error)) if tokio::time::Instant::now() >= deadline => {
                Err(timed_out().with_source(error))
            }
            Ok(Err(error)) => Err(error),
            Err(_) => Err(timed_out()),
        }
    }

    async fn call(
        &self,
        channel: Channel,
        url: &DubboUrl,
        invocation: &Invocation,
        timeout: std::time::Duration,
    ) -> Result<RpcResponse, RpcError> {
        let address = url.address();
        let service = url.service_interface();
        let method = invocation.wire_method_name();
        let target = target_description(url);
        let fail = |status: tonic::Status| match crate::secure::call_failure(
            &status,
            &address,
            self.tls(),
        ) {
            Some(tls) => tls,
            None => status_error(status, &address, service, method, &target),
        };
        let path = PathAndQuery::try_from(format!("/{service}/{method}")).map_err(|e| {
            RpcError::new(
                RpcErrorKind::Unknown,
                format!("/{service}/{method} is not a valid request path: {e}"),
            )
        })?;
        let payload = settings::payload(url);
        let wrapper = wrapper::request_wrapper(invocation);
        // Refused before anything is sent: over the limit, tonic would reset the stream mid-body and
        // report only "transport error".
        let len = prost::Message::encoded_len(&wrapper);
        if len > payload {
            return Err(RpcError::new(
                RpcErrorKind::Serialization,
                format!(
                    "tri://{address} {service}.{method}: the request is {len} bytes, over payload={payload}"
                ),
            ));
        }
        let mut request = tonic::Request::new(wrapper);
        request.set_timeout(timeout);
        self.headers(url, invocation, request.metadata_mut());

        let proto: ProtoChannel = MapRequest::new(channel, proto_content_type as fn(_) -> _);
        let mut grpc = tonic::client::Grpc::new(proto)
            .max_decoding_message_size(payload)
            .max_encoding_message_size(payload);
        grpc.ready().await.map_err(|e| {
            RpcError::new(
                RpcErrorKind::Network,
                format!("tri://{address} is not ready: {e}"),
            )
        })?;
        // A server-streaming call of one request: its response gives the headers (where Java puts
        // `tri-exception-code`) and the message before the trailers' status, which for a business
        // exception is not OK although the message is the answer.
        let codec = WrapperCodec::<TripleRequestWrapper, TripleResponseWrapper>::default();
        let response = grpc
            .server_streaming(request, path, codec)
            .await
            .map_err(fail)?;
        let is_exception = response
            .metadata()
            .get(EXCEPTION_CODE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<i32>().ok())
            .is_some_and(|code| code != 0);
        let mut stream = response.into_inner();
        let message = stream.message().await;
        let limits = DecodeLimits::for_payload(payload);
        let undecodable = |e: wrapper::WrapperError| {
            RpcError::new(
                RpcErrorKind::Serialization,
                format!("tri://{address} {service}.{method}: {e}"),
            )
        };
        match message {
            Ok(Some(answer)) if is_exception => {
                let exception =
                    wrapper::response_exception(&answer, limits).map_err(undecodable)?;
                Ok(RpcResponse::from_exception(exception))
            }
            Ok(Some(answer)) => {
                // The status in the trailers decides: a value followed by an error status is an error.
                stream.trailers().await.map_err(fail)?;
                let value = wrapper::response_value(&answer, limits).map_err(undecodable)?;
                Ok(RpcResponse::from_value(value))
            }
            Ok(None) => Err(fail(tonic::Status::internal(
                "the provider ended the call without an answer",
            ))),
            Err(status) => Err(fail(status)),
        }
    }

    /// The connection to `url`'s address, made before `deadline` (the call's, `timeout` from now).
    pub(crate) async fn connected(
        &self,
        url: &DubboUrl,
        timeout: std::time::Duration,
        deadline: tokio::time::Instant,
    ) -> Result<Channel, RpcError> {
        if self.is_shut_down() {
            return Err(RpcError::new(
                RpcErrorKind::ShutDown,
                "triple protocol is shut down",
            ));
        }
        match tokio::time::timeout_at(deadline, self.channel(url)).await {
            Ok(channel) => channel,
            Err(_) => Err(RpcError::new(
                RpcErrorKind::Network,
                format!(
                    "no connection to tri://{} within the call's {} ms timeout (still connecting)",
                    url.address(),
                    timeout.as_millis()
                ),
            )),
        }
    }

    /// The consumer application sent as `tri-consumer-appname`.
    pub(crate) fn application(&self) -> Option<&str> {
        self.inner.application.as_deref()
    }

    /// `tri-service-version`, `tri-service-group` (from the provider URL, only when set), the consumer
    /// application and the attachments.
    fn headers(&self, url: &DubboUrl, invocation: &Invocation, metadata: &mut MetadataMap) {
        fn put(metadata: &mut MetadataMap, key: &str, value: &str) {
            let (Ok(key), Ok(value)) = (
                MetadataKey::from_bytes(key.to_ascii_lowercase().as_bytes()),
                AsciiMetadataValue::try_from(value),
            ) else {
                tracing::debug!(
                    key,
                    "attachment is not a valid HTTP/2 header; not sent over tri://"
                );
                return;
            };
            metadata.insert(key, value);
        }
        for (key, value) in invocation.attachments() {
            let lower = key.to_ascii_lowercase();
            if RESERVED.contains(&lower.as_str())
                || lower.starts_with("grpc-")
                || lower.starts_with(':')
            {
                continue;
            }
            // gRPC's text metadata is printable ASCII. (HTTP/2 would pass other bytes as "obs-text",
            // and Java's Netty reads them back as ISO-8859-1: "Zoë" would arrive as "ZoÃ«".)
            if value.bytes().all(|b| (0x20..0x7f).contains(&b)) {
                put(metadata, &lower, value);
                continue;
            }
            // Other text goes as gRPC binary metadata, `<key>-bin` in base64, the form Dubbo's Triple
            // uses for binary attachments: a Java provider reads it back as the UTF-8 bytes under `key`.
            match MetadataKey::<Binary>::from_bytes(format!("{lower}-bin").as_bytes()) {
                Ok(binary) => {
                    metadata.insert_bin(binary, BinaryMetadataValue::from_bytes(value.as_bytes()));
                }
                Err(_) => tracing::warn!(
                    key = key.as_str(),
                    "attachment name is not a valid HTTP/2 header name; not sent over tri://"
                ),
            }
        }
        if let Some(version) = nonempty(url.parameter("version")) {
            put(metadata, "tri-service-version", version);
        }
        if let Some(group) = nonempty(url.parameter("group")) {
            put(metadata, "tri-service-group", group);
        }
        if let Some(application) = &self.inner.application {
            put(metadata, "tri-consumer-appname", application);
        }
    }

    /// Whether the provider at `url` can take a call, as its endpoint reports it to the cluster.
    pub(crate) fn availability(&self, url: &DubboUrl) -> Availability {
        self.slot(url).availability.clone()
    }

    /// The connections of `url`'s address.
    fn slot(&self, url: &DubboUrl) -> Arc<Slot> {
        let addr = url.address();
        let size = settings::connections(url);
        // Different `connections` settings for one address get separate sets, as over dubbo://.
        let key = if size == 1 {
            addr.clone()
        } else {
            format!("{addr}#{size}")
        };
        match self.inner.connections.get(&key) {
            Some(slot) => Arc::clone(&slot),
            None => Arc::clone(&self.inner.connections.entry(key).or_insert_with(|| {
                Arc::new(Slot {
                    addr: addr.clone(),
                    channels: (0..size).map(|_| OnceCell::new()).collect(),
                    failures: (0..size).map(|_| Mutex::new((0, None))).collect(),
                    next: AtomicUsize::new(0),
                    availability: Availability::default(),
                })
            })),
        }
    }

    /// The connection to `url`'s address, made within `connect.timeout` if there is none yet.
    async fn channel(&self, url: &DubboUrl) -> Result<Channel, RpcError> {
        let slot = self.slot(url);
        let addr = &slot.addr;
        let turn = slot.next.fetch_add(1, Ordering::Relaxed) % slot.channels.len();
        let cell = &slot.channels[turn];
        if let Some(channel) = cell.get() {
            return Ok(channel.clone());
        }
        let failures = &slot.failures[turn];
        let backing_off = {
            let state = failures.lock().unwrap_or_else(PoisonError::into_inner);
            state
                .1
                .filter(|until| tokio::time::Instant::now() < *until)
                .map(|until| (state.0, until))
        };
        if let Some((count, until)) = backing_off {
            let left = until.saturating_duration_since(tokio::time::Instant::now());
            return Err(RpcError::new(
                RpcErrorKind::Network,
                format!(
                    "tri://{addr}: {count} connect(s) failed in a row; the next is in {} ms",
                    left.as_millis()
                ),
            ));
        }
        if self.inner.tls.is_none() && rudder_rpc::tls::provider_announces_tls(url) {
            return Err(rudder_rpc::tls::tls_error(
                &format!("tri://{addr}"),
                rudder_common::error::TlsError::new(
                    rudder_common::error::TlsFailure::ProviderRequiresTls,
                ),
            ));
        }
        let scheme = if self.inner.tls.is_some() {
            "https"
        } else {
            "http"
        };
        let connected = cell
            .get_or_try_init(|| async {
                let endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))
                    .map_err(|e| {
                        RpcError::new(
                            RpcErrorKind::Network,
                            format!("tri://{addr} is not an address: {e}"),
                        )
                    })?
                    .tcp_nodelay(true)
                    .http2_keep_alive_interval(settings::heartbeat(url))
                    .keep_alive_timeout(KEEPALIVE_TIMEOUT)
                    .keep_alive_while_idle(true)
                    .http2_max_header_list_size(MAX_HEADER_LIST);
                if let Some(tls) = &self.inner.tls {
                    let timeout = settings::connect_timeout(url);
                    return crate::secure::connect(endpoint, addr, tls, timeout).await;
                }
                let endpoint = endpoint.connect_timeout(settings::connect_timeout(url));
                endpoint.connect().await.map_err(|e| {
                    RpcError::new(
                        RpcErrorKind::Network,
                        format!("cannot connect to tri://{addr}: {}", causes_text(&e)),
                    )
                })
            })
            .await;
        let mut state = failures.lock().unwrap_or_else(PoisonError::into_inner);
        match connected {
            Ok(channel) => {
                *state = (0, None);
                slot.availability.mark_up();
                Ok(channel.clone())
            }
            Err(error) => {
                state.0 = state.0.saturating_add(1);
                let wait = self.inner.backoff.delay(state.0);
                let until = tokio::time::Instant::now() + wait;
                state.1 = Some(until);
                slot.availability.mark_down_until(until.into_std());
                Err(error)
            }
        }
    }

    /// Whether [`shutdown`](TripleProtocol::shutdown) has been called (on any clone).
    pub fn is_shut_down(&self) -> bool {
        self.inner.shut_down.load(Ordering::Relaxed)
    }

    /// Drops every connection and refuses later calls with `ShutDown`. Calls in flight keep their
    /// connection until they end (at the latest at their deadline); then it closes.
    pub fn shutdown(&self) {
        self.inner.shut_down.store(true, Ordering::SeqCst);
        self.inner.connections.clear();
    }

    /// Drops the connections of every provider address (`host:port`) for which `keep` answers
    /// `false`, e.g. providers that left every directory; each closes once its calls in flight end.
    /// Returns how many were dropped.
    pub fn retain_addresses(&self, keep: impl Fn(&str) -> bool) -> usize {
        let mut dropped = 0;
        self.inner.connections.retain(|_, slot| {
            let kept = keep(&slot.addr);
            dropped += usize::from(!kept);
            kept
        });
        dropped
    }

    /// Connections this protocol holds now (connected at least once; tonic reconnects them).
    pub fn open_connections(&self) -> usize {
        self.inner
            .connections
            .iter()
            .map(|slot| slot.channels.iter().filter(|c| c.initialized()).count())
            .sum()
    }
}

fn nonempty(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

/// "group g, version 1.0.0" (or "no group, no version"), for errors.
pub(crate) fn target_description(url: &DubboUrl) -> String {
    let group =
        nonempty(url.parameter("group")).map_or("no group".to_owned(), |g| format!("group {g}"));
    let version = nonempty(url.parameter("version"))
        .map_or("no version".to_owned(), |v| format!("version {v}"));
    format!("{group}, {version}")
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_tests;
