//! `rudder invoke --url` against an in-process dubbo:// provider: JSON results, types, errors, exit codes.

use rudder::{Invocation, Value};
use rudder_common::value::JavaException;
use rudder_rpc::server::DubboServer;

async fn provider() -> DubboServer {
    DubboServer::bind(0, |call: Invocation| async move {
        let args = call.arguments().to_vec();
        match call.method_name() {
            "sayHello" => Ok(Value::from(format!(
                "Hello {}",
                args[0].as_str().unwrap_or("?")
            ))),
            "add" => Ok(Value::Long(args.iter().filter_map(Value::as_i64).sum())),
            "types" => Ok(Value::from(call.parameter_types().join(","))),
            "echo" => Ok(args.into_iter().next().unwrap_or(Value::Null)),
            "fail" => Err(JavaException {
                class: "com.acme.Oops".into(),
                message: Some("no".into()),
                cause: None,
            }),
            "slow" => {
                tokio::time::sleep(std::time::Duration::from_millis(500)).await;
                Ok(Value::Null)
            }
            _ => Ok(Value::Null),
        }
    })
    .await
    .unwrap()
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_prints_json_lines_and_maps_errors_to_exit_codes() {
    let server = provider().await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let call = |method: &'static str, extra: &'static [&'static str]| {
        let url = url.clone();
        async move {
            let mut args = vec!["invoke", "--url", &url, "--method", method];
            args.extend_from_slice(extra);
            rudder(&args).await
        }
    };

    assert_eq!(
        call("sayHello", &["--args", "[\"rust\"]", "--calls", "2"])
            .await
            .1,
        "\"Hello rust\"\n\"Hello rust\"\n"
    );
    assert_eq!(call("add", &["--args", "[2, 3]"]).await.1, "5\n");
    // Types inferred from JSON, or given.
    assert_eq!(
        call("types", &["--args", "[1, 3000000000, \"s\", true]"])
            .await
            .1,
        "\"int,long,java.lang.String,boolean\"\n"
    );
    assert_eq!(
        call("types", &["--types", "long,double", "--args", "[1, 2]"])
            .await
            .1,
        "\"long,double\"\n"
    );
    let (code, out, _) = call(
        "echo",
        &[
            "--types",
            "com.acme.User",
            "--args",
            "[{\"name\":\"alice\",\"age\":30}]",
        ],
    )
    .await;
    assert_eq!(
        (code, out.as_str()),
        (0, "{\"age\":30,\"name\":\"alice\"}\n")
    );

    let (code, out, err) = call("fail", &[]).await;
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(err, "error: exception: com.acme.Oops: no\n");
    let (code, _, err) = call("slow", &["--timeout", "100"]).await;
    assert_eq!(code, 1);
    assert!(err.starts_with("error: timeout:"), "{err}");
    let (code, _, err) = call("add", &["--types", "int", "--args", "[1, 2]"]).await;
    assert_eq!(code, 2);
    assert!(
        err.contains("--types names 1 parameter(s) but --args has 2"),
        "{err}"
    );
    server.shutdown().await;
}
