//! `--metrics-addr`: `rudder invoke` and `rudder demo` serve Prometheus metrics while they run, at the
//! address they print on stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::{Invocation, Value};
use rudder_rpc::server::DubboServer;
use tokio::sync::Semaphore;

/// Reads stderr until the `metrics: http://ADDR/metrics` line; the address.
fn metrics_address(stderr: &mut BufReader<ChildStderr>) -> String {
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "stderr closed before the metrics address was printed"
        );
        if let Some(rest) = line.trim().strip_prefix("metrics: http://") {
            return rest
                .strip_suffix("/metrics")
                .expect("a /metrics URL")
                .to_owned();
        }
    }
}

/// One scrape over plain HTTP/1.1: the body of a 200 answer.
fn scrape(addr: &str) -> String {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200 OK"), "{head}");
    assert!(body.ends_with("# EOF\n"), "{body}");
    body.to_owned()
}

/// The value of the sample line that starts with `series` (name and labels), if present.
fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

/// Scrapes until `done` holds for the exposition (the deadline only guards against a hang).
fn scrape_until(addr: &str, what: &str, done: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let body = scrape(addr);
        if done(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "never saw {what}:\n{body}");
        std::thread::yield_now();
    }
}

fn spawn(args: &[&str]) -> (Child, BufReader<ChildStderr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    (child, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_serves_the_calls_in_flight_and_done_while_it_runs() {
    let gate = Arc::new(Semaphore::new(0));
    let server = DubboServer::bind(0, {
        let gate = Arc::clone(&gate);
        move |_: Invocation| {
            let gate = Arc::clone(&gate);
            async move {
                gate.acquire().await.expect("gate open").forget();
                Ok(Value::from("done"))
            }
        }
    })
    .await
    .unwrap();
    let url = format!("dubbo://{}/com.acme.Greeter", server.local_addr());
    let provider = format!("provider=\"{url}\",method=\"hold\"");
    let args = [
        "invoke",
        "--url",
        &url,
        "--method",
        "hold",
        "--calls",
        "3",
        "--timeout",
        "30000",
        "--metrics-addr",
        "127.0.0.1:0",
    ];
    let (mut child, mut stderr) = spawn(&args);
    let child_stdout = child.stdout.take().unwrap();
    let addr = tokio::task::spawn_blocking(move || metrics_address(&mut stderr))
        .await
        .unwrap();
    let in_flight = format!("rudder_calls_in_flight{{{provider}}}");
    let calls = format!("rudder_calls_total{{{provider}}}");
    let body = tokio::task::spawn_blocking({
        let (addr, in_flight) = (addr.clone(), in_flight.clone());
        move || {
            // In flight counts from before the connect; the socket opens a moment later.
            scrape_until(
                &addr,
                "the first call in flight on an open connection",
                |b| {
                    value(b, &in_flight) == Some(1.0)
                        && value(b, "rudder_connections_open") == Some(1.0)
                },
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(value(&body, &calls), Some(0.0), "{body}");
    assert_eq!(value(&body, "rudder_connections_open"), Some(1.0), "{body}");
    // Let one call through: it is counted, and the next one is in flight.
    gate.add_permits(1);
    let body = tokio::task::spawn_blocking({
        let (addr, calls, in_flight) = (addr.clone(), calls.clone(), in_flight.clone());
        move || {
            scrape_until(&addr, "one call done and the next in flight", |b| {
                value(b, &calls) == Some(1.0) && value(b, &in_flight) == Some(1.0)
            })
        }
    })
    .await
    .unwrap();
    assert_eq!(
        value(&body, "rudder_picks_total{strategy=\"random\"}"),
        Some(2.0),
        "{body}"
    );
    gate.add_permits(2);
    let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
        .await
        .unwrap();
    assert!(status.success());
    let mut out = String::new();
    BufReader::new(child_stdout)
        .read_to_string(&mut out)
        .unwrap();
    assert_eq!(out, "\"done\"\n\"done\"\n\"done\"\n");
    // The endpoint ended with the command.
    assert!(std::net::TcpStream::connect(&addr).is_err());
    server.shutdown().await;
}

#[test]
fn demo_serves_picks_per_strategy_while_it_runs() {
    // More calls than the test waits for: it stops the demo once it has seen what it checks.
    let (mut child, mut stderr) = spawn(&[
        "demo",
        "--calls",
        "1000000",
        "--concurrency",
        "4",
        "--metrics-addr",
        "127.0.0.1:0",
    ]);
    let addr = metrics_address(&mut stderr);
    let body = scrape_until(&addr, "200 random picks", |b| {
        value(b, "rudder_picks_total{strategy=\"random\"}").is_some_and(|v| v >= 200.0)
    });
    child.kill().unwrap();
    child.wait().unwrap();
    // Four embedded providers, one connection each; every sayHello series is labelled by provider.
    assert_eq!(value(&body, "rudder_connections_open"), Some(4.0), "{body}");
    let providers: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with("rudder_calls_total{"))
        .collect();
    assert_eq!(providers.len(), 4, "{body}");
    assert!(
        providers.iter().all(|l| l.contains("method=\"sayHello\"")),
        "{body}"
    );
    let in_flight: f64 = body
        .lines()
        .filter(|l| l.starts_with("rudder_calls_in_flight{"))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert!(
        in_flight <= 4.0,
        "at most --concurrency calls in flight: {body}"
    );
    assert!(
        body.contains("# TYPE rudder_call_duration_seconds histogram"),
        "{body}"
    );
}
