//! Nacos 2.x's gRPC wire, as far as rudder's naming stream needs it: the `Payload` message (a type
//! name, headers and a JSON body), one unary request (`/Request/request`) and the bidirectional
//! stream (`/BiRequestStream/requestBiStream`) on which the server pushes.
//!
//! Written here rather than used through nacos-sdk because nacos-sdk 0.8.3 builds its tonic client
//! with tonic's default 4 MiB limit on a message received, and offers no setting: one service of
//! 10,000 instances with a Dubbo provider's metadata is a 7 MB answer (and a 7 MB push on every
//! change), which it refuses. rudder's limit is [`MAX_MESSAGE`].

use std::collections::HashMap;
use std::time::Duration;

use rudder_common::error::causes_text;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};
use tonic_prost::ProstCodec;

/// The largest message rudder accepts from a Nacos server: 64 MiB, about 90,000 instances of one
/// service at a Dubbo provider's ~700 bytes each. Bounded so that a bad or hostile server cannot
/// make rudder allocate what it likes (tonic refuses a longer frame before reading it). The Java
/// Nacos client's own inbound limit (`nacos.remote.client.grpc.maxinbound.message.size`) defaults to
/// 10 MiB and is raised the same way for services this large.
pub(crate) const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// `google.protobuf.Any` as Nacos uses it: the body's JSON in `value`.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Any {
    #[prost(string, tag = "1")]
    pub(crate) type_url: String,
    #[prost(bytes = "bytes", tag = "2")]
    pub(crate) value: bytes::Bytes,
}

/// The type name of a payload's body and its headers (`accessToken` when logged in).
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Metadata {
    #[prost(string, tag = "3")]
    pub(crate) r#type: String,
    #[prost(string, tag = "8")]
    pub(crate) client_ip: String,
    #[prost(map = "string, string", tag = "7")]
    pub(crate) headers: HashMap<String, String>,
}

/// Every Nacos 2.x request, response and push.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct Payload {
    #[prost(message, optional, tag = "2")]
    pub(crate) metadata: Option<Metadata>,
    #[prost(message, optional, tag = "3")]
    pub(crate) body: Option<Any>,
}

impl Payload {
    /// A payload of type `kind` with `body` serialised as JSON.
    pub(crate) fn new(
        kind: &str,
        body: &serde_json::Value,
        headers: HashMap<String, String>,
    ) -> Payload {
        Payload {
            metadata: Some(Metadata {
                r#type: kind.to_owned(),
                client_ip: String::new(),
                headers,
            }),
            body: Some(Any {
                type_url: String::new(),
                value: body.to_string().into_bytes().into(),
            }),
        }
    }

    /// The body's type name (`NotifySubscriberRequest`, `ErrorResponse`, ...).
    pub(crate) fn kind(&self) -> &str {
        self.metadata.as_ref().map_or("", |m| m.r#type.as_str())
    }

    /// The body's bytes (empty without one), sharing the message's.
    pub(crate) fn body_bytes(&self) -> bytes::Bytes {
        self.body
            .as_ref()
            .map(|b| b.value.clone())
            .unwrap_or_default()
    }

    /// The body read as `T`.
    pub(crate) fn body<T: DeserializeOwned>(&self) -> Result<T, String> {
        let bytes = self.body.as_ref().map_or(&[][..], |b| &b.value[..]);
        serde_json::from_slice(bytes).map_err(|e| format!("unreadable {}: {e}", self.kind()))
    }
}

/// What every Nacos response carries.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Outcome {
    pub(crate) result_code: i64,
    pub(crate) error_code: i64,
    pub(crate) message: Option<String>,
}

/// A server's answer was an error (`ErrorResponse`, or a result code other than 200).
#[derive(Debug, Clone)]
pub(crate) struct Refused {
    pub(crate) code: i64,
    pub(crate) message: String,
}

/// Whether a payload is a successful response of type `expected`, or the server's refusal.
pub(crate) fn outcome(payload: &Payload, expected: &str) -> Result<(), Refused> {
    let refused = |code, message: String| Refused { code, message };
    let outcome: Outcome = payload.body().map_err(|e| refused(0, e))?;
    if payload.kind() != expected || outcome.result_code != 200 {
        let code = if outcome.error_code != 0 {
            outcome.error_code
        } else {
            outcome.result_code
        };
        return Err(refused(
            code,
            outcome
                .message
                .unwrap_or_else(|| format!("{} instead of {expected}", payload.kind())),
        ));
    }
    Ok(())
}

/// One gRPC connection (one HTTP/2 connection: the server ties the unary requests to the stream by
/// it).
#[derive(Clone)]
pub(crate) struct Wire {
    grpc: tonic::client::Grpc<Channel>,
    timeout: Duration,
}

impl Wire {
    /// Connects to `host:port` (the gRPC port, HTTP port + 1000) within `timeout`. HTTP/2 pings every
    /// 10 s find a connection that died silently.
    pub(crate) async fn connect(server: &str, timeout: Duration) -> Result<Wire, String> {
        let endpoint = Endpoint::from_shared(format!("http://{server}"))
            .map_err(|e| format!("bad address {server}: {e}"))?
            .connect_timeout(timeout)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(5))
            .keep_alive_while_idle(true)
            .tcp_nodelay(true);
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("connecting to {server}: {}", causes_text(&e)))?;
        let grpc = tonic::client::Grpc::new(channel)
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
        Ok(Wire { grpc, timeout })
    }

    /// One request and its answer, within the timeout.
    pub(crate) async fn request(&self, payload: Payload) -> Result<Payload, String> {
        let mut grpc = self.grpc.clone();
        let call = async {
            grpc.ready()
                .await
                .map_err(|e| format!("not ready: {}", causes_text(&e)))?;
            let mut request = tonic::Request::new(payload);
            request.set_timeout(self.timeout);
            grpc.unary(
                request,
                PathAndQuery::from_static("/Request/request"),
                ProstCodec::<Payload, Payload>::default(),
            )
            .await
            .map(tonic::Response::into_inner)
            .map_err(|status| format!("{:?}: {}", status.code(), status.message()))
        };
        tokio::time::timeout(self.timeout, call)
            .await
            .map_err(|_| format!("no answer within {} ms", self.timeout.as_millis()))?
    }

    /// Opens the bidirectional stream: what is sent on the returned sender goes to the server, the
    /// server's pushes come on the returned stream.
    pub(crate) async fn bi_stream(
        &self,
    ) -> Result<(mpsc::Sender<Payload>, tonic::Streaming<Payload>), String> {
        let (tx, rx) = mpsc::channel(64);
        let mut grpc = self.grpc.clone();
        let open = async {
            grpc.ready()
                .await
                .map_err(|e| format!("not ready: {}", causes_text(&e)))?;
            grpc.streaming(
                tonic::Request::new(tokio_stream::wrappers::ReceiverStream::new(rx)),
                PathAndQuery::from_static("/BiRequestStream/requestBiStream"),
                ProstCodec::<Payload, Payload>::default(),
            )
            .await
            .map(tonic::Response::into_inner)
            .map_err(|status| format!("{:?}: {}", status.code(), status.message()))
        };
        let stream = tokio::time::timeout(self.timeout, open)
            .await
            .map_err(|_| format!("no stream within {} ms", self.timeout.as_millis()))??;
        Ok((tx, stream))
    }
}

/// `host:port+1000`.
pub(crate) fn grpc_address(server: &str) -> Result<String, String> {
    let (host, port) = server
        .rsplit_once(':')
        .ok_or_else(|| format!("no port in {server}"))?;
    let port: u16 = port
        .parse::<u16>()
        .ok()
        .and_then(|p| p.checked_add(1000))
        .ok_or_else(|| format!("no gRPC port for {server}"))?;
    Ok(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn a_payload_round_trips_and_reads_its_answer() {
        let body = serde_json::json!({"resultCode": 200, "errorCode": 0, "connectionId": "c1"});
        let payload = Payload::new("ServerCheckResponse", &body, HashMap::new());
        let back = Payload::decode(payload.encode_to_vec().as_slice()).unwrap();
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Check {
            connection_id: String,
        }
        outcome(&back, "ServerCheckResponse").unwrap();
        let check: Check = back.body().unwrap();
        assert_eq!(check.connection_id, "c1");
    }

    #[test]
    fn an_error_response_is_a_refusal_with_its_message() {
        let body =
            serde_json::json!({"resultCode": 500, "errorCode": 403, "message": "user not found!"});
        let payload = Payload::new("ErrorResponse", &body, HashMap::new());
        let refused = outcome(&payload, "SubscribeServiceResponse").unwrap_err();
        assert_eq!(refused.code, 403);
        assert_eq!(refused.message, "user not found!");
        let wrong = Payload::new(
            "Other",
            &serde_json::json!({"resultCode": 200}),
            HashMap::new(),
        );
        let refused = outcome(&wrong, "SubscribeServiceResponse").unwrap_err();
        assert!(
            refused.message.contains("instead of"),
            "{}",
            refused.message
        );
    }

    #[test]
    fn the_grpc_port_is_the_http_port_plus_1000() {
        assert_eq!(grpc_address("10.0.0.1:8848").unwrap(), "10.0.0.1:9848");
        assert_eq!(grpc_address("[::1]:8848").unwrap(), "[::1]:9848");
        assert!(grpc_address("10.0.0.1:65000").is_err());
    }
}
