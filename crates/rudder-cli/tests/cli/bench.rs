//! `rudder bench` as a user trusts it, against an in-process dubbo:// provider: the headline's errors
//! and the provider rows' failures agree (exceptions counted in both); the service as a positional
//! argument and `--args @FILE` / `-` as `invoke` takes them; a method the provider does not list
//! refused before any call; Ctrl-C prints the summary of the calls so far; `--help` names tri://.

use std::io::Write;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rudder::{Invocation, Value};
use rudder_common::value::JavaException;
use rudder_rpc::server::DubboServer;
use tokio::io::AsyncWriteExt;
use tokio::sync::Notify;

/// A provider counting its calls (and telling `seen` each one): `fail` always throws, `expect`
/// throws unless its one argument is the string "from-file", anything else answers "ok".
async fn provider(calls: Arc<AtomicUsize>, seen: Arc<Notify>) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| {
        let (calls, seen) = (Arc::clone(&calls), Arc::clone(&seen));
        async move {
            calls.fetch_add(1, Ordering::SeqCst);
            seen.notify_one();
            let throw = |message: &str| {
                Err(JavaException {
                    class: "java.lang.IllegalStateException".into(),
                    message: Some(message.into()),
                    cause: None,
                })
            };
            match call.method_name() {
                "fail" => throw("database down"),
                "expect"
                    if call.arguments().first().and_then(Value::as_str) != Some("from-file") =>
                {
                    throw("wrong argument")
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
        .kill_on_drop(true)
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

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.lines().last().expect("a JSON line")).unwrap()
}

fn sum(report: &serde_json::Value, field: &str) -> u64 {
    report["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[field].as_u64().unwrap())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headline_errors_and_provider_rows_agree() {
    let server = provider(Arc::default(), Arc::default()).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    for cluster in ["failover", "failfast"] {
        let param = format!("cluster={cluster}");
        let (code, out, err) = rudder(
            &[
                "bench",
                "--url",
                &url,
                "--method",
                "fail",
                "--calls",
                "50",
                "--concurrency",
                "4",
                "--param",
                &param,
                "--format",
                "json",
            ],
            None,
        )
        .await;
        assert_eq!(code, 1, "failed calls fail the run: {err}");
        let report = json(&out);
        assert_eq!(report["calls"], 50, "{report}");
        assert_eq!(report["errors"], 50, "{report}");
        // The exception is the provider's answer to the one attempt of each call: rows say so.
        assert_eq!(sum(&report, "failed"), 50, "{report}");
        assert_eq!(sum(&report, "exceptions"), 50, "{report}");
        assert_eq!(report["attempts"], 50, "{report}");
        assert_eq!(report["exception_attempts"], 50, "{report}");
        assert_eq!(report["retries"], 0, "{report}");
    }
    // The text report's rows too; --max-error-rate 1 lets the run pass.
    let (code, out, err) = rudder(
        &[
            "bench",
            "--url",
            &url,
            "--method",
            "fail",
            "--calls",
            "20",
            "--max-error-rate",
            "1",
        ],
        None,
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("20 calls in "), "{out}");
    assert!(out.contains(" 20 errors (100.00 %)"), "{out}");
    assert!(
        out.contains(
            "attempts: 20 (0 retries), 20 failed: 0 with an RPC error, 20 with an exception"
        ),
        "{out}"
    );
    let row = out
        .lines()
        .find(|l| l.starts_with(&server.local_addr().to_string()))
        .expect("the provider's row");
    let columns: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(columns[1..4], ["20", "100.0%", "20"], "{row}");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_service_and_arguments_are_taken_as_invoke_takes_them() {
    let server = provider(Arc::default(), Arc::default()).await;
    let url = format!("dubbo://{}", server.local_addr());
    let dir = std::env::temp_dir().join(format!("rudder-bench-args-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("args.json");
    std::fs::File::create(&file)
        .unwrap()
        .write_all(b"[\"from-file\"]")
        .unwrap();
    let from_file = format!("@{}", file.display());
    for (args, stdin) in [
        (from_file.as_str(), None),
        ("-", Some(&b"[\"from-file\"]"[..])),
    ] {
        let (code, out, err) = rudder(
            &[
                "bench",
                "com.acme.Greeter",
                "--url",
                &url,
                "--method",
                "expect",
                "--args",
                args,
                "--calls",
                "10",
                "--format",
                "json",
            ],
            stdin,
        )
        .await;
        assert_eq!(code, 0, "{args}: {err}");
        let report = json(&out);
        assert_eq!(
            (report["calls"].as_u64(), report["errors"].as_u64()),
            (Some(10), Some(0)),
            "{report}"
        );
    }
    let (code, _, err) = rudder(
        &[
            "bench",
            "com.acme.Greeter",
            "--url",
            &url,
            "--method",
            "expect",
            "--args",
            "@/nonexistent/args.json",
        ],
        None,
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--args @/nonexistent/args.json"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_method_the_providers_do_not_list_is_refused_before_any_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = provider(Arc::clone(&calls), Arc::default()).await;
    let url = format!(
        "dubbo://{}/com.acme.Greeter?methods=fail,expect,greet",
        server.local_addr()
    );
    let (code, out, err) = rudder(
        &[
            "bench", "--url", &url, "--method", "nope", "--calls", "1000",
        ],
        None,
    )
    .await;
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty(), "{out}");
    assert_eq!(
        err.trim(),
        "error: method-not-found: com.acme.Greeter has no method nope; its providers list: expect, fail, greet"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was sent");
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_prints_the_summary_of_the_calls_so_far() {
    let calls = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(Notify::new());
    let server = provider(Arc::clone(&calls), Arc::clone(&seen)).await;
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args([
            "bench",
            "--url",
            &url,
            "--method",
            "greet",
            "--duration",
            "1h",
            "--format",
            "json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Calls are being answered: interrupt it as Ctrl-C does.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while calls.load(Ordering::SeqCst) < 100 {
        tokio::time::timeout_at(deadline, seen.notified())
            .await
            .expect("calls within 60 s");
    }
    let sent = std::process::Command::new("kill")
        .args(["-INT", &child.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let out = tokio::time::timeout_at(deadline, child.wait_with_output())
        .await
        .expect("the run ends at Ctrl-C, not after an hour")
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let report = json(&stdout);
    assert_eq!(report["interrupted"], true, "{report}");
    assert_eq!(report["errors"], 0, "{report}");
    let answered = report["calls"].as_u64().unwrap();
    assert!(
        answered >= 100 && answered as usize <= calls.load(Ordering::SeqCst),
        "{report}"
    );
    assert!(
        stderr.contains(&format!(
            "the summary covers the {answered} calls answered before"
        )),
        "{stderr}"
    );
    server.shutdown().await;
}

#[test]
fn help_says_tri_works() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(["bench", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("over dubbo:// or tri://"), "{help}");
    assert!(help.contains("tri://HOST:PORT/INTERFACE"), "{help}");
    assert!(help.contains("[SERVICE]"), "{help}");
    assert!(help.contains("@FILE"), "{help}");
}
