//! A tonic-generated client over `reference.grpc_channel()`: protobuf (IDL) calls with rudder's
//! discovery, routing, balancing and failover underneath.
//!
//! Two in-process tonic servers serve `proto/greeter.proto`'s Greeter as tri:// providers of
//! version 1.0.0, given to the reference as URLs (a registry would list the same URLs). The client
//! calls the unary, the server-streaming and the bidirectional method; then one server stops, and the unary calls that
//! the balancer still sends its way fail over to the other.
//!
//! Run: `cargo run -p rudder-examples --example grpc_greeter`.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use rudder::Reference;
use tokio::sync::oneshot;
use tokio_stream::wrappers::TcpListenerStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

/// The code tonic's prost codegen wrote for `proto/greeter.proto` (see `build.rs`).
#[allow(
    missing_docs,
    unreachable_pub,
    missing_debug_implementations,
    clippy::all,
    clippy::pedantic
)]
pub mod proto {
    tonic::include_proto!("org.rudder.it.proto");
}

use proto::greeter_client::GreeterClient;
use proto::greeter_server::{Greeter, GreeterServer};
use proto::{HelloReply, HelloRequest, HelloStreamRequest};

/// The interface the providers register under: the proto package and service.
pub const SERVICE: &str = "org.rudder.it.proto.Greeter";

/// What a run saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The unary answer's message.
    pub hello: String,
    /// The streamed answers' messages, in order.
    pub streamed: Vec<String>,
    /// The `tri-service-version` headers the servers received.
    pub versions_seen: BTreeSet<String>,
    /// The same stream through a channel that was not told the method streams (its first message
    /// waits for the second, then they pass through).
    pub streamed_undeclared: Vec<String>,
    /// The replies of a bidirectional call, each read before the next request was sent.
    pub chatted: Vec<String>,
    /// The status of a call the service refused, and how many providers saw it.
    pub rejected: (tonic::Code, String, usize),
    /// `SayHello` calls in the providers' statistics after the first unary call and the refused one,
    /// and how many of them were the service's error answers.
    pub counted: (i64, i64),
    /// Which servers answered the calls made while both were up.
    pub served_before: BTreeSet<String>,
    /// Which servers answered the calls made after one stopped, and how many calls failed.
    pub served_after: BTreeSet<String>,
    /// Calls that failed after the stop (failover should leave none).
    pub failed_after: usize,
    /// The address of the server that stopped.
    pub stopped: String,
}

/// One Greeter: answers with its address, records the version header of each call.
#[derive(Debug, Clone)]
struct Provider {
    address: String,
    versions: Arc<Mutex<BTreeSet<String>>>,
    /// Calls received, by every server sharing it.
    calls: Arc<AtomicUsize>,
}

impl Provider {
    fn record(&self, metadata: &tonic::metadata::MetadataMap) {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if let Some(version) = metadata
            .get("tri-service-version")
            .and_then(|v| v.to_str().ok())
        {
            self.versions
                .lock()
                .expect("not poisoned")
                .insert(version.to_owned());
        }
    }
}

type ReplyStream = Pin<Box<dyn Stream<Item = Result<HelloReply, Status>> + Send>>;

#[tonic::async_trait]
impl Greeter for Provider {
    async fn say_hello(
        &self,
        request: Request<HelloRequest>,
    ) -> Result<Response<HelloReply>, Status> {
        self.record(request.metadata());
        let name = request.into_inner().name;
        if name.is_empty() {
            return Err(Status::invalid_argument("a name, please"));
        }
        Ok(Response::new(HelloReply {
            message: format!("Hello {name}"),
            served_by: self.address.clone(),
        }))
    }

    type SayHelloStreamStream = ReplyStream;
    type SayHelloChatStream = ReplyStream;

    async fn say_hello_stream(
        &self,
        request: Request<HelloStreamRequest>,
    ) -> Result<Response<ReplyStream>, Status> {
        self.record(request.metadata());
        let HelloStreamRequest { name, count } = request.into_inner();
        let address = self.address.clone();
        let replies = (0..count).map(move |i| {
            Ok(HelloReply {
                message: format!("Hello {name} #{i}"),
                served_by: address.clone(),
            })
        });
        Ok(Response::new(Box::pin(tokio_stream::iter(replies))))
    }

    async fn say_hello_chat(
        &self,
        request: Request<tonic::Streaming<HelloRequest>>,
    ) -> Result<Response<ReplyStream>, Status> {
        self.record(request.metadata());
        let address = self.address.clone();
        let replies = request.into_inner().map(move |request| {
            request.map(|request| HelloReply {
                message: format!("Hello {}", request.name),
                served_by: address.clone(),
            })
        });
        Ok(Response::new(Box::pin(replies)))
    }
}

/// A Greeter server on a loopback port until `stop` fires.
async fn serve(
    versions: Arc<Mutex<BTreeSet<String>>>,
    calls: Arc<AtomicUsize>,
) -> (String, Server) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("bound").to_string();
    let provider = Provider {
        address: address.clone(),
        versions,
        calls,
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(GreeterServer::new(provider))
            .serve_with_incoming_shutdown(TcpListenerStream::new(listener), async {
                let _ = stopped.await;
            }),
    );
    (address, Server { stop, task })
}

/// A running server: `stop` ends it, `task` ends once its connections have closed.
struct Server {
    stop: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), tonic::transport::Error>>,
}

impl Server {
    /// Stops accepting, closes the connections (GOAWAY) and waits until they are gone.
    async fn stop(self) {
        let _ = self.stop.send(());
        let ended = tokio::time::timeout(std::time::Duration::from_secs(10), self.task).await;
        ended
            .expect("the server stops within 10 s")
            .expect("the server task did not panic")
            .expect("the server ran");
    }
}

/// Runs the example: `calls` unary calls before and after one of the two servers stops.
///
/// # Panics
/// When a call that must succeed fails (the example is also a test).
pub async fn run(calls: usize) -> Outcome {
    let versions = Arc::new(Mutex::new(BTreeSet::new()));
    let received = Arc::new(AtomicUsize::new(0));
    let (first, stop_first) = serve(Arc::clone(&versions), Arc::clone(&received)).await;
    let (second, _keep_second) = serve(Arc::clone(&versions), Arc::clone(&received)).await;
    let greeter = Reference::builder(SERVICE)
        .provider(&format!("tri://{first}/{SERVICE}?version=1.0.0"))
        .provider(&format!("tri://{second}/{SERVICE}?version=1.0.0"))
        .parameter("loadbalance", "roundrobin")
        .build()
        .await
        .expect("a reference over two URLs");
    // The generated client takes the reference's channel as it would take a tonic Channel.
    let mut client = GreeterClient::new(greeter.grpc_channel().streaming("SayHelloStream"));

    let hello = client
        .say_hello(HelloRequest {
            name: "rudder".into(),
        })
        .await
        .expect("unary call")
        .into_inner()
        .message;
    let mut stream = client
        .say_hello_stream(HelloStreamRequest {
            name: "stream".into(),
            count: 3,
        })
        .await
        .expect("streaming call")
        .into_inner();
    let mut streamed = Vec::new();
    while let Some(reply) = stream.message().await.expect("a streamed message") {
        streamed.push(reply.message);
    }

    let mut undeclared = GreeterClient::new(greeter.grpc_channel());
    let mut stream = undeclared
        .say_hello_stream(HelloStreamRequest {
            name: "plain".into(),
            count: 2,
        })
        .await
        .expect("streaming call")
        .into_inner();
    let mut streamed_undeclared = Vec::new();
    while let Some(reply) = stream.message().await.expect("a streamed message") {
        streamed_undeclared.push(reply.message);
    }

    // Bidirectional: each reply comes before the next request is written, so nothing waits for the
    // client's body to end (one provider, the stream passed through).
    let (requests, outgoing) = tokio::sync::mpsc::channel(1);
    let mut chat = undeclared
        .say_hello_chat(tokio_stream::wrappers::ReceiverStream::new(outgoing))
        .await
        .expect("bidirectional call")
        .into_inner();
    let mut chatted = Vec::new();
    for name in ["one", "two", "three"] {
        requests
            .send(HelloRequest { name: name.into() })
            .await
            .expect("the call is open");
        let reply = chat.message().await.expect("a reply").expect("not ended");
        chatted.push(reply.message);
    }
    drop(requests);
    assert!(
        chat.message().await.expect("the end").is_none(),
        "the call ends with the client's stream"
    );

    // An error the service answers with is its answer: handed over as it came, never sent again.
    let before = received.load(Ordering::SeqCst);
    let rejected = client
        .say_hello(HelloRequest::default())
        .await
        .expect_err("an empty name is refused");
    let rejected = (
        rejected.code(),
        rejected.message().to_owned(),
        received.load(Ordering::SeqCst) - before,
    );
    // Counted like any call: every call so far, the refused one as the provider's exception.
    let counted = greeter
        .providers()
        .iter()
        .filter_map(|p| p.status().find_method("SayHello"))
        .fold((0, 0), |(total, exceptions), m| {
            (total + m.total(), exceptions + m.exceptions())
        });

    let mut served_before = BTreeSet::new();
    for i in 0..calls {
        let reply = client
            .say_hello(HelloRequest {
                name: format!("call {i}"),
            })
            .await
            .expect("both servers up");
        served_before.insert(reply.into_inner().served_by);
    }

    // One server goes away; round robin still sends every other call to it until the call fails
    // there, and failover sends the same request to the other.
    stop_first.stop().await;
    let mut served_after = BTreeSet::new();
    let mut failed_after = 0;
    for i in 0..calls {
        match client
            .say_hello(HelloRequest {
                name: format!("after {i}"),
            })
            .await
        {
            Ok(reply) => {
                served_after.insert(reply.into_inner().served_by);
            }
            Err(status) => {
                eprintln!("call failed: {status}");
                failed_after += 1;
            }
        }
    }
    let versions_seen = versions.lock().expect("not poisoned").clone();
    Outcome {
        hello,
        streamed,
        streamed_undeclared,
        chatted,
        rejected,
        counted,
        versions_seen,
        served_before,
        served_after,
        failed_after,
        stopped: first,
    }
}
