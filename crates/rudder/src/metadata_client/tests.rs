//! Which MetadataService is asked, and the fallback, against a scripted HTTP/2 provider (h2's server)
//! that records each request and answers V2 and V1 as the script says, as Java 3.3.6 does on the wire.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use prost::Message;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_registry::MetadataRequest;
use tokio::net::TcpListener;

use super::*;

const V2_PATH: &str = "/org.apache.dubbo.metadata.MetadataServiceV2/GetMetadataInfo";
const V1_PATH: &str = "/org.apache.dubbo.metadata.MetadataService/getMetadataInfo";

/// `TripleResponseWrapper` (Dubbo's triple_wrapper.proto): how a V1 answer comes over tri://.
#[derive(Clone, PartialEq, prost::Message)]
struct ResponseWrapper {
    #[prost(string, tag = "1")]
    serialize_type: String,
    #[prost(bytes = "vec", tag = "2")]
    data: Vec<u8>,
    #[prost(string, tag = "3")]
    r#type: String,
}

/// `MetadataInfoV2` with one service, encoded by hand (field by field, as protobuf-java writes it).
fn v2_answer(app: &str, revision: &str, service: &str) -> Vec<u8> {
    let field = |tag: u8, bytes: &[u8]| {
        let mut out = vec![(tag << 3) | 2, u8::try_from(bytes.len()).unwrap()];
        out.extend_from_slice(bytes);
        out
    };
    let info = [field(1, service.as_bytes()), field(4, b"tri")].concat();
    let entry = [
        field(1, format!("{service}:tri").as_bytes()),
        field(2, &info),
    ]
    .concat();
    [
        field(1, app.as_bytes()),
        field(2, revision.as_bytes()),
        field(3, &entry),
    ]
    .concat()
}

/// Java's `MetadataInfo` in hessian2, wrapped as a tri:// V1 answer.
fn v1_answer(app: &str, revision: &str, service: &str) -> Vec<u8> {
    let object = |class: &str, fields: Vec<(&str, Value)>| Value::Object {
        class: Arc::from(class),
        fields: fields.into_iter().map(|(k, v)| (Arc::from(k), v)).collect(),
    };
    let info = object(
        "org.apache.dubbo.metadata.MetadataInfo",
        vec![
            ("app", Value::from(app)),
            ("revision", Value::from(revision)),
            (
                "services",
                Value::Map {
                    type_name: None,
                    entries: vec![(
                        Value::from(format!("{service}:tri")),
                        object(
                            "org.apache.dubbo.metadata.MetadataInfo$ServiceInfo",
                            vec![
                                ("name", Value::from(service)),
                                ("protocol", Value::from("tri")),
                            ],
                        ),
                    )],
                },
            ),
        ],
    );
    let mut writer = rudder_hessian::Hessian2Writer::new();
    writer.write_value(&info);
    ResponseWrapper {
        serialize_type: "hessian4".into(),
        data: writer.into_bytes(),
        r#type: "org.apache.dubbo.metadata.MetadataInfo".into(),
    }
    .encode_to_vec()
}

/// How the scripted provider answers one path.
#[derive(Clone)]
enum Answer {
    /// `grpc-status 0` with this message.
    Message(Vec<u8>),
    /// A Trailers-Only answer with this status and message.
    Status(&'static str, &'static str),
    /// `grpc-status 0` and no message.
    Nothing,
}

/// What the provider saw: each request's path and its `tri-service-version`.
type Seen = Arc<Mutex<Vec<(String, String)>>>;

async fn provider(v2: Answer, v1: Answer) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Arc::default();
    let record = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (v2, v1, record) = (v2.clone(), v1.clone(), Arc::clone(&record));
            tokio::spawn(async move {
                let mut connection = h2::server::handshake(socket).await.unwrap();
                while let Some(Ok((request, respond))) = connection.accept().await {
                    let path = request.uri().path().to_owned();
                    let answer = match path.as_str() {
                        V2_PATH => v2.clone(),
                        V1_PATH => v1.clone(),
                        _ => Answer::Status("12", "no such path"),
                    };
                    let version = request
                        .headers()
                        .get("tri-service-version")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    record.lock().unwrap().push((path, version));
                    tokio::spawn(respond_with(request.into_body(), respond, answer));
                }
            });
        }
    });
    (addr, seen)
}

async fn respond_with(
    mut body: h2::RecvStream,
    mut respond: h2::server::SendResponse<Bytes>,
    answer: Answer,
) {
    while let Some(Ok(chunk)) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    let head = http::Response::builder()
        .status(200)
        .header("content-type", "application/grpc");
    let message = match answer {
        Answer::Status(code, message) => {
            let head = head
                .header("grpc-status", code)
                .header("grpc-message", message);
            let _ = respond.send_response(head.body(()).unwrap(), true);
            return;
        }
        Answer::Message(message) => message,
        Answer::Nothing => {
            let mut send = respond
                .send_response(head.body(()).unwrap(), false)
                .unwrap();
            let mut trailers = http::HeaderMap::new();
            trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
            let _ = send.send_trailers(trailers);
            return;
        }
    };
    let mut send = respond
        .send_response(head.body(()).unwrap(), false)
        .unwrap();
    let mut frame = vec![0];
    frame.extend_from_slice(&u32::try_from(message.len()).unwrap().to_be_bytes());
    frame.extend_from_slice(&message);
    send.send_data(Bytes::from(frame), false).unwrap();
    let mut trailers = http::HeaderMap::new();
    trailers.insert("grpc-status", http::HeaderValue::from_static("0"));
    let _ = send.send_trailers(trailers);
}

/// What the registry asks of an instance at `addr` whose `meta-v` is `meta_v`.
fn request(addr: &str, meta_v: &str) -> MetadataRequest {
    let url = DubboUrl::parse(&format!(
        "tri://{addr}/org.apache.dubbo.metadata.MetadataService?interface=org.apache.dubbo.metadata.MetadataService&group=shop&version={meta_v}&timeout=3000&retries=0"
    ))
    .unwrap();
    MetadataRequest {
        url,
        revision: "r1".into(),
        metadata_version: Some(meta_v.into()),
    }
}

fn seen(seen: &Seen) -> Vec<(String, String)> {
    seen.lock().unwrap().clone()
}

#[tokio::test]
async fn a_meta_v_2_instance_is_asked_metadata_service_v2() {
    let (addr, record) = provider(
        Answer::Message(v2_answer("shop", "r1", "com.acme.V2")),
        Answer::Message(v1_answer("shop", "r1", "com.acme.V1")),
    )
    .await;
    let client = MetadataClient::new(Protocols::new(Some("rudder-test")));
    let info = client.fetch(request(&addr, "2.0.0")).await.unwrap();
    assert_eq!((info.app.as_str(), info.revision.as_str()), ("shop", "r1"));
    assert_eq!(info.services[0].name, "com.acme.V2");
    assert_eq!(
        seen(&record),
        [(V2_PATH.to_owned(), "2.0.0".to_owned())],
        "one call, to V2"
    );
    let calls = client.counts().snapshot();
    assert_eq!(
        (calls.v2_answered, calls.v1_answered, calls.v2_fallbacks),
        (1, 0, 0)
    );
    client.protocol.shutdown().await;
}

#[tokio::test]
async fn v2_not_served_falls_back_to_v1_at_its_own_version() {
    // UNIMPLEMENTED (no such service), NOT_FOUND, and Java 3.3.6's answer for a missing method.
    let refusals = [
        ("12", "Not found exported service"),
        ("5", "not found"),
        (
            "2",
            "Cannot invoke \"java.util.List.iterator()\" because \"methodDescriptors\" is null",
        ),
    ];
    let client = MetadataClient::new(Protocols::new(Some("rudder-test")));
    for (i, (code, message)) in refusals.into_iter().enumerate() {
        let (addr, record) = provider(
            Answer::Status(code, message),
            Answer::Message(v1_answer("shop", "r1", "com.acme.V1")),
        )
        .await;
        let info = client.fetch(request(&addr, "2.0.0")).await.unwrap();
        assert_eq!(info.services[0].name, "com.acme.V1", "status {code}");
        assert_eq!(
            seen(&record),
            [
                (V2_PATH.to_owned(), "2.0.0".to_owned()),
                (V1_PATH.to_owned(), "1.0.0".to_owned())
            ],
            "status {code}: V2, then V1 as exported"
        );
        let calls = client.counts().snapshot();
        let n = i as u64 + 1;
        assert_eq!(
            (calls.v2_answered, calls.v1_answered, calls.v2_fallbacks),
            (0, n, n)
        );
    }
    client.protocol.shutdown().await;
}

#[tokio::test]
async fn a_v2_failure_that_is_not_a_refusal_is_not_retried_on_v1() {
    let (addr, record) = provider(
        Answer::Status("13", "metadataV2 not found for revision"),
        Answer::Message(v1_answer("shop", "r1", "com.acme.V1")),
    )
    .await;
    let client = MetadataClient::new(Protocols::new(Some("rudder-test")));
    let error = client.fetch(request(&addr, "2.0.0")).await.unwrap_err();
    assert!(error.contains("MetadataServiceV2"), "{error}");
    assert!(error.contains("metadataV2 not found"), "{error}");
    assert_eq!(seen(&record).len(), 1, "V1 not asked");
    assert_eq!(client.counts().snapshot(), MetadataServiceCalls::default());

    // An OK answer with no message is a failure too.
    let (addr, _) = provider(Answer::Nothing, Answer::Status("12", "unused")).await;
    let error = client.fetch(request(&addr, "2.0.0")).await.unwrap_err();
    assert!(error.contains("no message"), "{error}");
    client.protocol.shutdown().await;
}

#[tokio::test]
async fn other_instances_are_asked_v1_only() {
    let (addr, record) = provider(
        Answer::Message(v2_answer("shop", "r1", "com.acme.V2")),
        Answer::Message(v1_answer("shop", "r1", "com.acme.V1")),
    )
    .await;
    let client = MetadataClient::new(Protocols::new(Some("rudder-test")));
    let mut no_meta_v = request(&addr, "1.0.0");
    no_meta_v.metadata_version = None;
    for request in [request(&addr, "1.0.0"), no_meta_v] {
        let info = client.fetch(request).await.unwrap();
        assert_eq!(info.services[0].name, "com.acme.V1");
    }
    assert!(seen(&record).iter().all(|(path, _)| path == V1_PATH));
    let calls = client.counts().snapshot();
    assert_eq!((calls.v2_answered, calls.v1_answered), (0, 2));
    client.protocol.shutdown().await;
}

#[test]
fn v2_is_asked_of_tri_metadata_services_that_say_meta_v_2_only() {
    let mut request = request("127.0.0.1:1", "2.0.0");
    assert!(serves_v2(&request));
    // V2 is a Triple service: a dubbo:// MetadataService is asked V1 whatever meta-v says.
    request.url = DubboUrl::parse(
        "dubbo://127.0.0.1:1/org.apache.dubbo.metadata.MetadataService?group=shop&version=2.0.0",
    )
    .unwrap();
    assert!(!serves_v2(&request));
    let mut request = self::request("127.0.0.1:1", "2.0.0");
    request.metadata_version = Some("3.0.0".into());
    assert!(!serves_v2(&request));
}
