//! `rudder invoke` as a Dubbo engineer uses it against an in-process dubbo:// provider: `--calls N`
//! runs every call and summarises, `-v` names provider, time and attempts, `--args @FILE` and `-`,
//! `--url` with `--interface` / `--version` applied, refused schemes, `--linger`, plain stderr.

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rudder::{Invocation, Value};
use rudder_common::value::JavaException;
use rudder_rpc::server::DubboServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// A provider whose first `failures` calls of `flaky` throw; `where` answers the service path and
/// version the request carried.
async fn provider(failures: usize) -> DubboServer {
    let calls = Arc::new(AtomicUsize::new(0));
    DubboServer::bind(0, move |call: Invocation| {
        let calls = Arc::clone(&calls);
        async move {
            match call.method_name() {
                "flaky" if calls.fetch_add(1, Ordering::SeqCst) < failures => Err(JavaException {
                    class: "com.acme.Flaky".into(),
                    message: Some("not now".into()),
                    cause: None,
                }),
                "where" => Ok(Value::from(format!(
                    "{}:{}",
                    call.attachment("path").unwrap_or("?"),
                    call.attachment("version").unwrap_or("-")
                ))),
                "length" => Ok(Value::Int(
                    call.arguments()[0].as_str().map_or(-1, |s| s.len() as i32),
                )),
                "slow" => {
                    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
                    Ok(Value::Null)
                }
                _ => Ok(Value::from("ok")),
            }
        }
    })
    .await
    .unwrap()
}

async fn rudder(args: &[&str], stdin: Option<&[u8]>) -> (i32, String, String) {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(input).await.unwrap();
        drop(pipe);
    }
    let out = child.wait_with_output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_all_run_and_are_summarised() {
    let server = provider(9).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let (code, out, err) = rudder(
        &[
            "invoke", "--url", &url, "--method", "flaky", "--calls", "20",
        ],
        None,
    )
    .await;
    assert_eq!(code, 1, "a failed call is exit code 1: {err}");
    // One stdout line per call, in call order: line N is call N's result or error.
    let failed = "{\"error\":{\"kind\":\"exception\",\"message\":\"com.acme.Flaky: not now\"}}\n";
    assert_eq!(
        out,
        format!("{}{}", failed.repeat(9), "\"ok\"\n".repeat(11)),
        "one JSON line per call"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 10, "{err}");
    for (i, line) in lines[..9].iter().enumerate() {
        assert_eq!(
            *line,
            format!(
                "call {}/20 failed: exception: com.acme.Flaky: not now",
                i + 1
            )
        );
    }
    assert_eq!(lines[9], "20 calls: 11 ok, 9 failed (exception 9)");
    assert!(
        !err.contains('\x1b'),
        "no colour when stderr is not a terminal"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verbose_names_the_provider_the_time_and_the_attempts() {
    let server = provider(1).await;
    let address = server.local_addr().to_string();
    let url = format!("dubbo://{address}/com.acme.Greeter");
    let (code, out, err) = rudder(
        &[
            "invoke", "--url", &url, "--method", "flaky", "--calls", "2", "-v",
        ],
        None,
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        out,
        "{\"error\":{\"kind\":\"exception\",\"message\":\"com.acme.Flaky: not now\"}}\n\"ok\"\n"
    );
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 4, "{err}");
    // The Java types sent, and where they came from.
    assert_eq!(
        lines[0],
        "types: flaky() (inferred from the JSON: give --types for other Java types)"
    );
    let lines = &lines[1..];
    let failed =
        format!("call 1/2 failed: exception: com.acme.Flaky: not now [provider {address}, ");
    assert!(lines[0].starts_with(&failed), "{err}");
    assert!(lines[0].ends_with(" ms, 1 attempt]"), "{err}");
    assert!(
        lines[1].starts_with(&format!("call 2/2 ok: provider {address}, ")),
        "{err}"
    );
    assert!(lines[1].ends_with(" ms, 1 attempt"), "{err}");
    assert_eq!(lines[2], "2 calls: 1 ok, 1 failed (exception 1)");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_url_is_one_attempt_and_verbose_shows_the_types() {
    let server = provider(0).await;
    let address = server.local_addr().to_string();
    let url = format!("dubbo://{address}/com.acme.Greeter");
    // A timeout by --url: failover would have tried the one address three times.
    let (code, _, err) = rudder(
        &[
            "invoke",
            "--url",
            &url,
            "--method",
            "slow",
            "--timeout",
            "200",
            "-v",
            "--args",
            r#"["x", 3000000000]"#,
        ],
        None,
    )
    .await;
    assert_eq!(code, 1, "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines[0],
        "types: slow(java.lang.String, long) (inferred from the JSON: give --types for other Java types)"
    );
    assert!(
        lines[1].starts_with("call failed: timeout: ") && lines[1].ends_with(" ms, 1 attempt]"),
        "{err}"
    );
    assert_eq!(err.matches(&address).count(), 2, "{err}");
    // Retries asked for are made.
    let (_, _, err) = rudder(
        &[
            "invoke",
            "--url",
            &url,
            "--method",
            "slow",
            "--timeout",
            "200",
            "-v",
            "--param",
            "retries=1",
        ],
        None,
    )
    .await;
    assert!(err.contains(" ms, 2 attempts: "), "{err}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arguments_come_from_a_file_or_stdin() {
    let server = provider(0).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    // 200 KB: more than a command line holds.
    let big = format!("[\"{}\"]", "x".repeat(200_000));
    let path = std::env::temp_dir().join(format!("rudder-args-{}.json", std::process::id()));
    std::fs::File::create(&path)
        .unwrap()
        .write_all(big.as_bytes())
        .unwrap();
    let file_arg = format!("@{}", path.display());
    let (code, out, err) = rudder(
        &[
            "invoke", "--url", &url, "--method", "length", "--args", &file_arg,
        ],
        None,
    )
    .await;
    assert_eq!((code, out.as_str()), (0, "200000\n"), "{err}");
    let (code, out, err) = rudder(
        &["invoke", "--url", &url, "--method", "length", "--args", "-"],
        Some(b"[\"four\"]\n"),
    )
    .await;
    assert_eq!((code, out.as_str()), (0, "4\n"), "{err}");
    let (code, _, err) = rudder(
        &[
            "invoke",
            "--url",
            &url,
            "--method",
            "length",
            "--args",
            "@/nonexistent/args.json",
        ],
        None,
    )
    .await;
    assert_eq!(code, 2);
    assert!(err.contains("--args @/nonexistent/args.json"), "{err}");
    std::fs::remove_file(&path).unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_flags_apply_and_conflicts_are_errors() {
    let server = provider(0).await;
    let bare = format!("dubbo://{}", server.local_addr());
    let with_path = format!("{bare}/com.acme.Greeter");
    let call = |url: String, extra: &'static [&'static str]| async move {
        let mut args = vec!["invoke", "--url", url.as_str(), "--method", "where"];
        args.extend_from_slice(extra);
        rudder(&args, None).await
    };
    let (code, out, err) = call(with_path.clone(), &["--version", "1.0.0"]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "\"com.acme.Greeter:1.0.0\"\n"),
        "{err}"
    );
    let (code, out, err) = call(bare.clone(), &["--interface", "com.acme.Other"]).await;
    assert_eq!(
        (code, out.as_str()),
        (0, "\"com.acme.Other:0.0.0\"\n"),
        "{err}"
    );
    let (code, _, err) = call(format!("{with_path}?version=1.0.0"), &["--version", "2.0"]).await;
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!("error: --version 2.0 conflicts with version=1.0.0 in --url {with_path}?version=1.0.0\n")
    );
    let (code, _, err) = call(with_path.clone(), &["--interface", "com.acme.Other"]).await;
    assert_eq!(code, 2);
    assert!(
        err.contains("--interface com.acme.Other conflicts with the service com.acme.Greeter"),
        "{err}"
    );
    let (code, _, err) = call(bare.clone(), &[]).await;
    assert_eq!(code, 2);
    assert!(err.contains("names no service: give --interface"), "{err}");
    for scheme in ["http", "rest"] {
        let url = format!("{scheme}://{}/com.acme.Greeter", server.local_addr());
        let (code, out, err) = call(url, &[]).await;
        assert_eq!((code, out.as_str()), (2, ""), "{err}");
        assert!(
            err.contains(&format!("{scheme}:// is not supported")),
            "{err}"
        );
    }
    let (code, _, err) = rudder(&["invoke", "--method", "where"], None).await;
    assert_eq!(code, 2);
    assert_eq!(err, "error: --registry or --url is required\n");
    let (code, _, err) = call(with_path.clone(), &["--types", "int", "--args", "[\"x\"]"]).await;
    assert_eq!(code, 2);
    assert_eq!(err, "error: argument 1: argument \"x\" is not an int\n");
    // One attempt is "1 attempt".
    let (code, _, err) = rudder(
        &[
            "invoke",
            "--url",
            "dubbo://127.0.0.1:1/com.acme.Greeter",
            "--method",
            "where",
            "--param",
            "retries=0",
        ],
        None,
    )
    .await;
    assert_eq!(code, 1);
    assert!(
        err.contains("after 1 attempt on providers [127.0.0.1:1]"),
        "{err}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn linger_keeps_the_metrics_endpoint_after_the_calls() {
    let server = provider(0).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args([
            "invoke",
            "--url",
            &url,
            "--method",
            "where",
            "--calls",
            "3",
            "--metrics-addr",
            "127.0.0.1:0",
            "--linger",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut address = None;
    while let Some(line) = stderr.next_line().await.unwrap() {
        if let Some(rest) = line.strip_prefix("metrics: still serving http://") {
            address = rest
                .strip_suffix("/metrics; Ctrl-C to stop")
                .map(str::to_owned);
            break;
        }
    }
    let address = address.expect("the lingering endpoint is announced");
    // The calls are over; the endpoint still answers with their count.
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut body = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut body)
        .await
        .unwrap();
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    assert!(body.contains("method=\"where\""), "{body}");
    let pid = child.id().unwrap().to_string();
    let status = tokio::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .await
        .unwrap();
    assert!(status.success());
    let exit = child.wait().await.unwrap();
    assert_eq!(
        exit.code(),
        Some(0),
        "Ctrl-C ends a lingering invoke cleanly"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn help_names_the_log_variable() {
    let (code, out, _) = rudder(&["--help"], None).await;
    assert_eq!(code, 0);
    assert!(out.contains("RUDDER_LOG"), "{out}");
    assert!(out.contains("NO_COLOR"), "{out}");
    assert!(out.contains("list"), "{out}");
}

/// On a terminal (a pty from util-linux `script`) the error label is coloured, unless NO_COLOR is set.
#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let run = |no_color: bool| {
        let command = format!("'{}' invoke --method where", env!("CARGO_BIN_EXE_rudder"));
        let mut script = std::process::Command::new("script");
        script
            .args(["-qec", &command, "/dev/null"])
            .env_remove("NO_COLOR");
        if no_color {
            script.env("NO_COLOR", "1");
        }
        let out = script.output().expect("util-linux script runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = run(false);
    assert!(
        coloured.contains("\x1b[1;31merror:\x1b[0m --registry or --url is required"),
        "{coloured:?}"
    );
    let plain = run(true);
    assert!(
        plain.contains("error: --registry or --url is required"),
        "{plain:?}"
    );
    assert!(!plain.contains('\x1b'), "{plain:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_many_calls_prints_the_partial_summary() {
    let server = provider(0).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args([
            "invoke",
            "--url",
            &url,
            "--method",
            "flaky",
            "--calls",
            "1000000000",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Some calls have been answered: interrupt it as Ctrl-C does.
    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        assert_eq!(stdout.next_line().await.unwrap().as_deref(), Some("\"ok\""));
    }
    let pid = child.id().unwrap().to_string();
    let sent = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(sent.success());
    while stdout.next_line().await.unwrap().is_some() {}
    let out = child.wait_with_output().await.unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with("interrupted during call ") && lines[0].ends_with("/1000000000"),
        "{err}"
    );
    assert!(
        lines[1].ends_with(" ok") && lines[1].contains(" calls: "),
        "{err}"
    );
    server.shutdown().await;
}

/// `--calls N` on a terminal (a pty from util-linux `script`): a progress line, rewritten in place
/// and wiped before the summary; in a pipe (every other test here) none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_shows_on_a_terminal_only() {
    let server = provider(0).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let command = format!(
        "'{}' invoke --url {url} --method flaky --calls 3 >/dev/null",
        env!("CARGO_BIN_EXE_rudder")
    );
    let out = tokio::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("NO_COLOR", "1")
        .output()
        .await
        .expect("util-linux script runs");
    let seen = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        seen.contains("\r\x1b[Kcall 1/3: 1 ok, 0 failed"),
        "{seen:?}"
    );
    assert!(seen.contains("\r\x1b[K3 calls: 3 ok"), "{seen:?}");
    let (code, _, err) = rudder(
        &["invoke", "--url", &url, "--method", "flaky", "--calls", "3"],
        None,
    )
    .await;
    assert_eq!((code, err.as_str()), (0, "3 calls: 3 ok\n"));
    server.shutdown().await;
}
