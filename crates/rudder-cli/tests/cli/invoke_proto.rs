//! `rudder invoke --proto` without a provider: `--list` of files, and the usage errors that are said
//! before anything is sent. Calls to a real gRPC server are in it/tests/it/cli_proto.rs (Python grpcio).

const GREETER_PROTO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/greeter.proto");

async fn rudder(args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test]
async fn list_prints_the_services_of_the_files() {
    let (code, out, err) = rudder(&["invoke", "--proto", GREETER_PROTO, "--list"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "org.rudder.it.proto.Greeter\n\
         \x20 rpc SayHello(org.rudder.it.proto.HelloRequest) returns (org.rudder.it.proto.HelloReply); unary\n\
         \x20 rpc SayHelloStream(org.rudder.it.proto.HelloStreamRequest) returns (stream org.rudder.it.proto.HelloReply); server streaming\n\
         \x20 rpc SayHelloChat(stream org.rudder.it.proto.HelloRequest) returns (stream org.rudder.it.proto.HelloReply); bidi streaming\n"
    );
    let (code, out, err) = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--list",
        "--interface",
        "x.Nope",
    ])
    .await;
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("error: method-not-found: no service x.Nope in ")
            && err.contains("services: org.rudder.it.proto.Greeter"),
        "{err}"
    );
}

#[tokio::test]
async fn usage_errors_are_said_before_anything_is_sent() {
    let cases: [(&[&str], i32, &str); 7] = [
        (
            &["invoke", "--list"],
            2,
            "--list needs --proto FILE, or --url / --registry of a provider that serves gRPC reflection",
        ),
        // A Dubbo engineer's telnet `ls -l`: pointed to `rudder list`.
        (
            &["invoke", "--url", "dubbo://127.0.0.1:1/S", "--list"],
            2,
            "is not tri://; a Dubbo interface's methods and classes: rudder list --registry R SERVICE",
        ),
        (
            &[
                "invoke", "--proto", GREETER_PROTO, "--url", "dubbo://127.0.0.1:1/S", "--method", "M",
            ],
            2,
            "--proto and --list are for protobuf services over tri:// (gRPC)",
        ),
        (
            &[
                "invoke", "--proto", GREETER_PROTO, "--url", "tri://127.0.0.1:1/org.rudder.it.proto.Greeter",
                "--method", "SayHello", "--args", "[1]",
            ],
            2,
            "--args[0] must be a JSON object (a org.rudder.it.proto.HelloRequest), got a number",
        ),
        (
            &[
                "invoke", "--proto", "/nonexistent/x.proto", "--url", "tri://127.0.0.1:1/S", "--method", "M",
            ],
            2,
            "x.proto",
        ),
        (
            &[
                "invoke", "--proto", GREETER_PROTO, "--url", "tri://127.0.0.1:1/org.rudder.it.proto.Greeter",
                "--method", "SayHello", "--types", "java.lang.String", "--args", r#"[{"name":"x"}]"#,
            ],
            2,
            "--types and --generic are for Java interface calls",
        ),
        (
            &["invoke", "--import-path", "/tmp", "--url", "tri://127.0.0.1:1/S", "--method", "M"],
            2,
            "--proto <FILE>",
        ),
    ];
    for (args, code, says) in cases {
        let (got, out, err) = rudder(args).await;
        assert_eq!((got, out.as_str()), (code, ""), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[tokio::test]
async fn a_provider_that_is_not_there_fails_each_call_as_a_network_failure() {
    // A port nothing listens on: bound, then closed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("tri://127.0.0.1:{port}/org.rudder.it.proto.Greeter");
    let (code, out, err) = rudder(&[
        "invoke",
        "--proto",
        GREETER_PROTO,
        "--url",
        &url,
        "--method",
        "SayHello",
        "--args",
        r#"[{"name":"x"}]"#,
        "--calls",
        "2",
    ])
    .await;
    assert_eq!((code, out.as_str()), (1, ""), "{err}");
    assert!(
        err.contains(&format!(
            "call 1/2 failed: network: tri://127.0.0.1:{port} org.rudder.it.proto.Greeter/SayHello: grpc-status 14 Unavailable"
        )),
        "{err}"
    );
    assert!(err.contains("2 calls: 0 ok, 2 failed (network 2)"), "{err}");
}
