//! `rudder invoke --proto` and server reflection against a plain gRPC server of another stack: Python
//! grpcio (`it/python-grpc`, the Greeter of `proto/greeter.proto`), called by URL and found through
//! ZooKeeper. Values asserted are the ones the Python server answers.
//!
//! Needs the Python venv (`scripts/peers/build-python-grpc.sh`, run by `scripts/it-setup.sh`), Docker
//! for the registry test, and the debug binary (`cargo build -p rudder-cli`).

use std::time::Duration;

use rudder_it::{run_rudder, CliOutput, Peer, PeerConfig, PeerKind};

use crate::common::providers::put_node;

const SERVICE: &str = "org.rudder.it.proto.Greeter";
const GREETER_PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../proto/greeter.proto");
const READY_WITHIN: Duration = Duration::from_secs(120);

/// What `--list` prints for the Greeter, from the file or through reflection alike.
const LISTING: &str = "org.rudder.it.proto.Greeter\n\
\x20 rpc SayHello(org.rudder.it.proto.HelloRequest) returns (org.rudder.it.proto.HelloReply); unary\n\
\x20 rpc SayHelloStream(org.rudder.it.proto.HelloStreamRequest) returns (stream org.rudder.it.proto.HelloReply); server streaming\n\
\x20 rpc SayHelloChat(stream org.rudder.it.proto.HelloRequest) returns (stream org.rudder.it.proto.HelloReply); bidi streaming\n";

/// What `--list` prints for `it/python-grpc/streams.proto`'s Gatherer (after the Greeter's lines).
const GATHERER_LISTING: &str = "org.rudder.it.streams.Gatherer\n\
\x20 rpc Gather(stream org.rudder.it.proto.HelloRequest) returns (org.rudder.it.proto.HelloReply); client streaming\n\
\x20 rpc Echo(stream org.rudder.it.proto.HelloRequest) returns (stream org.rudder.it.proto.HelloReply); bidi streaming\n";
const STREAMS_PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/python-grpc/streams.proto");

async fn python(instance: &str, reflection: bool) -> Peer {
    let mut config = PeerConfig::new(PeerKind::PythonGrpc, "", instance);
    config.version = Some("1.0.0".into());
    config.reflection = reflection;
    Peer::start(config, READY_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn rudder(args: &[&str]) -> CliOutput {
    // Generous: a loaded CI machine, and the Python server's first answer.
    let mut with_timeout = args.to_vec();
    if args.first() == Some(&"invoke") && !args.contains(&"--list") {
        with_timeout.extend(["--timeout", "10000"]);
    }
    run_rudder(&with_timeout).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpcio_greeter_answers_by_url_with_proto_files_and_through_reflection() {
    let peer = python("python-grpc-1", true).await;
    assert_eq!(
        peer.url(),
        format!("tri://127.0.0.1:{}/{SERVICE}", peer.port())
    );
    let url = format!("tri://127.0.0.1:{}/{SERVICE}?version=1.0.0", peer.port());
    let hello = r#"[{"name":"rust"}]"#;
    let answer = "{\"message\":\"Hello rust\",\"servedBy\":\"python-grpc-1\"}\n";

    // With the .proto file.
    let out = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        hello,
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, answer),
        "{}",
        out.stderr
    );

    // Without: the descriptors come from the server's reflection (grpcio serves v1alpha only, so the
    // v1 request is answered UNIMPLEMENTED first).
    let out = rudder(&[
        "invoke", "--url", &url, "--method", "SayHello", "--args", hello, "-v",
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, answer),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("/org.rudder.it.proto.Greeter/SayHello (unary) from the provider's server reflection (grpc.reflection.v1alpha)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains(&format!("call ok: provider 127.0.0.1:{}", peer.port())),
        "{}",
        out.stderr
    );

    // A Java-style interface name finds the one reflected service of that simple name (as a Dubbo
    // IDL service's Java package may differ from its proto package); the path is the proto's.
    let java_named = format!(
        "tri://127.0.0.1:{}/com.example.Greeter?version=1.0.0",
        peer.port()
    );
    let out = rudder(&[
        "invoke",
        "--url",
        &java_named,
        "--method",
        "SayHello",
        "--args",
        hello,
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, answer),
        "{}",
        out.stderr
    );

    // --list: from the file alone, and through reflection (by the URL's service, or everything).
    let out = rudder(&["invoke", "--proto", GREETER_PROTO, "--list"]).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, LISTING),
        "{}",
        out.stderr
    );
    let out = rudder(&["invoke", "--url", &url, "--list"]).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, LISTING),
        "{}",
        out.stderr
    );
    let bare = format!("tri://127.0.0.1:{}", peer.port());
    let out = rudder(&["invoke", "--url", &bare, "--list"]).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, format!("{LISTING}{GATHERER_LISTING}").as_str()),
        "{}",
        out.stderr
    );

    // A server stream: one JSON line per answer; Java's method spelling finds the proto's method.
    let out = rudder(&[
        "invoke",
        "--url",
        &url,
        "--method",
        "sayHelloStream",
        "--args",
        r#"[{"name":"s","count":3}]"#,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        [1, 2, 3]
            .map(|i| format!("{{\"message\":\"Hello s #{i}\",\"servedBy\":\"python-grpc-1\"}}"))
    );

    // --calls N: each answer, and the summary.
    let out = rudder(&[
        "invoke", "--url", &url, "--method", "SayHello", "--args", hello, "--calls", "3",
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, answer.repeat(3));
    assert!(out.stderr.contains("3 calls: 3 ok"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_calls_to_a_grpcio_greeter_fail_clearly() {
    let peer = python("python-grpc-2", true).await;
    let url = format!("tri://127.0.0.1:{}/{SERVICE}?version=1.0.0", peer.port());

    // An unknown method lists the service's methods (nothing is sent).
    let out = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &url,
        "--method",
        "Nope",
        "--args",
        r#"[{"name":"x"}]"#,
    ])
    .await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "method-not-found: org.rudder.it.proto.Greeter has no method Nope; methods: SayHello, SayHelloStream"
        ),
        "{}",
        out.stderr
    );
    // A field the request message does not have is named.
    let out = rudder(&[
        "invoke",
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        r#"[{"nme":"x"}]"#,
    ])
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "--args[0] is not a org.rudder.it.proto.HelloRequest: unrecognized field name 'nme'"
        ) && out.stderr.contains("(HelloRequest has fields: name)"),
        "{}",
        out.stderr
    );
    // --args that are not an array of one object.
    let out = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        r#"{"name":"x"}"#,
    ])
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--args must be a JSON array"),
        "{}",
        out.stderr
    );
    // The server's grpc-status, printed as the POJO path prints a failed call (exit 1).
    let out = rudder(&[
        "invoke",
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        r#"[{"name":""}]"#,
    ])
    .await;
    assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!(
            "error: unknown: tri://127.0.0.1:{} org.rudder.it.proto.Greeter/SayHello: grpc-status 3 InvalidArgument: name is required",
            peer.port()
        )),
        "{}",
        out.stderr
    );
    // The version travels as tri-service-version: the server exports 1.0.0 only.
    let unversioned = format!("tri://127.0.0.1:{}/{SERVICE}", peer.port());
    let out = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &unversioned,
        "--version",
        "2.0.0",
        "--method",
        "SayHello",
        "--args",
        r#"[{"name":"x"}]"#,
    ])
    .await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("method-not-found:")
            && out.stderr.contains(
                "grpc-status 5 NotFound: no org.rudder.it.proto.Greeter at version 2.0.0"
            ),
        "{}",
        out.stderr
    );
    // `payload` bounds each message both ways, failing that call only: a 305-byte request passes a
    // 320-byte limit and its 327-byte answer does not; a 405-byte request is not sent.
    for (name_length, side) in [
        (300, "decoded message length too large: found 327 bytes"),
        (400, "the request is 405 bytes, over payload=320"),
    ] {
        let args = format!(r#"[{{"name":"{}","count":1}}]"#, "n".repeat(name_length));
        let out = rudder(&[
            "invoke",
            "--url",
            &url,
            "--method",
            "SayHelloStream",
            "--param",
            "payload=320",
            "--args",
            &args,
        ])
        .await;
        assert_eq!((out.code, out.stdout.as_str()), (1, ""), "{}", out.stderr);
        assert!(
            out.stderr.contains("error: serialization: ")
                && out.stderr.contains("grpc-status 11 OutOfRange")
                && out.stderr.contains(side),
            "{side}: {}",
            out.stderr
        );
    }
    // A .proto that does not parse: the file, line and column.
    let dir = std::env::temp_dir().join(format!("rudder-it-proto-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.proto");
    std::fs::write(
        &bad,
        "syntax = \"proto3\";\nmessage M {\n  string name = 1\n}\n",
    )
    .unwrap();
    let out = rudder(&["invoke", "--proto", bad.to_str().unwrap(), "--list"]).await;
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("error: bad.proto:4:1: "),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_reflection_the_proto_file_is_needed_and_said_so() {
    let peer = python("python-grpc-3", false).await;
    let url = format!("tri://127.0.0.1:{}/{SERVICE}?version=1.0.0", peer.port());
    let out = rudder(&["invoke", "--url", &url, "--list"]).await;
    // The provider answered (no reflection there): a failed call, exit code 1; 2 is for usage.
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("serves no gRPC reflection (grpc.reflection.v1 or v1alpha)")
            && out.stderr.contains("give --proto FILE"),
        "{}",
        out.stderr
    );
    let out = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        r#"[{"name":"p"}]"#,
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            0,
            "{\"message\":\"Hello p\",\"servedBy\":\"python-grpc-3\"}\n"
        ),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grpcio_greeter_registered_in_zookeeper_is_called_through_the_registry() {
    let peer = python("python-grpc-4", true).await;
    let zookeeper = crate::common::zookeeper().await;
    let zk = crate::common::writer(&zookeeper).await;
    // As a Dubbo provider registers a tri:// IDL service (grpcio registers nowhere itself).
    let provider = format!(
        "tri://127.0.0.1:{}/{SERVICE}?interface={SERVICE}&methods=SayHello,SayHelloStream&version=1.0.0&side=provider&application=python-grpc",
        peer.port()
    );
    let node = format!(
        "/dubbo/{SERVICE}/providers/{}",
        rudder_common::url::java_url_encode(&provider)
    );
    put_node(&zk, &node, "").await;
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let hello = r#"[{"name":"zk"}]"#;
    let answer = "{\"message\":\"Hello zk\",\"servedBy\":\"python-grpc-4\"}\n";
    for proto in [vec!["--proto", GREETER_PROTO], vec![]] {
        let mut args = vec![
            "invoke",
            "--registry",
            &registry,
            "--interface",
            SERVICE,
            "--version",
            "1.0.0",
            "--method",
            "SayHello",
            "--args",
            hello,
        ];
        args.extend(proto.iter().copied());
        let out = rudder(&args).await;
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, answer),
            "{proto:?}: {}",
            out.stderr
        );
    }
    let out = rudder(&[
        "invoke",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--version",
        "1.0.0",
        "--list",
    ])
    .await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, LISTING),
        "{}",
        out.stderr
    );
}

/// Without `--proto`, a tri:// call with JSON-object arguments first asks the provider's reflection:
/// a Java Dubbo 3.3 provider exporting a Java interface over tri:// does not describe it there, and
/// the call goes on as the POJO call it is, by URL and through the registry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_java_interface_over_tri_with_object_arguments_is_still_a_pojo_call() {
    let zookeeper = crate::common::zookeeper().await;
    let mut config = PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-tri");
    config.version = Some("1.0.0".into());
    config.group = Some("g1".into());
    config.protocol = Some("tri".into());
    let java = Peer::start(config, READY_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let pojo = "org.rudder.it.GreetingService";
    let user = r#"[{"name":"alice","age":30,"tags":["x"]}]"#;
    let echoed = r#"{"age":31,"name":"alice","tags":["x","seen-by:java-tri"]}"#;
    let url = format!(
        "tri://127.0.0.1:{}/{pojo}?version=1.0.0&group=g1",
        java.port()
    );
    let out = rudder(&[
        "invoke",
        "--url",
        &url,
        "--method",
        "echoUser",
        "--types",
        "org.rudder.it.User",
        "--args",
        user,
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let by_types: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let expected: serde_json::Value = serde_json::from_str(echoed).unwrap();
    assert_eq!(by_types, expected, "{}", out.stdout);
    // No --types: the reflection probe finds no protobuf service, and the registry's metadata gives
    // the overload.
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let out = rudder(&[
        "invoke",
        "--registry",
        &registry,
        "--interface",
        pojo,
        "--version",
        "1.0.0",
        "--group",
        "g1",
        "--method",
        "echoUser",
        "--args",
        user,
        "-v",
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    let through_registry: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(through_registry, expected, "{}", out.stderr);
    assert!(out.stderr.contains("not a protobuf call"), "{}", out.stderr);
}

/// Client and bidi streaming: `--args` holds the request stream, one object per message. The
/// Gatherer's file imports greeter.proto: with --proto it needs both import paths, through reflection
/// the server's answer names greeter.proto as a dependency, fetched by file name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_streams_go_as_one_message_per_object_through_files_and_reflection() {
    let peer = python("python-grpc-5", true).await;
    let url = format!(
        "tri://127.0.0.1:{}/org.rudder.it.streams.Gatherer?version=1.0.0",
        peer.port()
    );
    let names = r#"[{"name":"a"},{"name":"b"},{"name":"c"}]"#;
    let gathered = "{\"message\":\"a,b,c\",\"servedBy\":\"python-grpc-5\"}\n";
    let python_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/python-grpc");
    let proto_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../proto");
    let with_files = [
        "--proto",
        STREAMS_PROTO,
        "--import-path",
        python_dir,
        "--import-path",
        proto_dir,
    ];
    for files in [&with_files[..], &[]] {
        let mut args = vec![
            "invoke", "--url", &url, "--method", "Gather", "--args", names,
        ];
        args.extend_from_slice(files);
        let out = rudder(&args).await;
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (0, gathered),
            "{files:?}: {}",
            out.stderr
        );
        let mut args = vec!["invoke", "--url", &url, "--method", "Echo", "--args", names];
        args.extend_from_slice(files);
        let out = rudder(&args).await;
        assert_eq!(out.code, 0, "{files:?}: {}", out.stderr);
        assert_eq!(
            out.stdout.lines().collect::<Vec<_>>(),
            ["a", "b", "c"]
                .map(|n| format!("{{\"message\":\"Hello {n}\",\"servedBy\":\"python-grpc-5\"}}")),
            "{files:?}"
        );
    }
    let out = rudder(&["invoke", "--url", &url, "--list"]).await;
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (0, GATHERER_LISTING),
        "{}",
        out.stderr
    );
    // Without the import path of greeter.proto: the import is named, with its place.
    let out = rudder(&["invoke", "--proto", STREAMS_PROTO, "--list"]).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("error: streams.proto:8:1: import 'greeter.proto' not found"),
        "{}",
        out.stderr
    );
    // A unary method still takes exactly one object.
    let greeter = format!("tri://127.0.0.1:{}/{SERVICE}?version=1.0.0", peer.port());
    let out = rudder(&[
        "invoke", "--url", &greeter, "--method", "SayHello", "--args", names,
    ])
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("--args must be an array of one object, the org.rudder.it.proto.HelloRequest of SayHello (unary), got 3 values"),
        "{}",
        out.stderr
    );
}
