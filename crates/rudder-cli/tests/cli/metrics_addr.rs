//! `--metrics-addr`: `rudder invoke` and `rudder demo` serve Prometheus metrics while they run, at the
//! address they print on stderr.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;

use rudder::{Invocation, Value};
use rudder_rpc::server::DubboServer;
use tokio::sync::{watch, Semaphore};

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
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream
        .read_to_string(&mut answer)
        .unwrap_or_else(|e| panic!("no answer to the scrape within {WAIT:?}: {e}"));
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

/// Reads the demo's progress (`\r  N / M calls`, every 200 calls, with `RUDDER_DEMO_PROGRESS=1`)
/// until at least `calls` calls have ended.
fn progress_reaches(stderr: &mut BufReader<ChildStderr>, calls: usize) {
    let mut piece = Vec::new();
    loop {
        piece.clear();
        assert!(
            stderr.read_until(b'\r', &mut piece).unwrap() > 0,
            "stderr closed before {calls} calls were reported"
        );
        let text = String::from_utf8_lossy(&piece);
        let done = text
            .trim()
            .split_once(" / ")
            .and_then(|(done, _)| done.parse::<usize>().ok());
        if done.is_some_and(|done| done >= calls) {
            return;
        }
    }
}

/// Where the provider holds each call: counts it as arrived, then waits for a permit. The CLI counts
/// a call in flight, and opens its connection, before sending it, so an arrival is the event after
/// which a scrape must show it.
#[derive(Debug)]
struct Gate {
    permits: Semaphore,
    arrived: watch::Sender<usize>,
}

impl Gate {
    /// Lets no call through until permits are added.
    fn closed() -> Gate {
        Gate {
            permits: Semaphore::new(0),
            arrived: watch::Sender::new(0),
        }
    }

    async fn hold(&self) {
        self.arrived.send_modify(|n| *n += 1);
        self.permits.acquire().await.expect("gate open").forget();
    }

    /// Returns once `n` calls have reached the provider.
    async fn arrivals(&self, n: usize) {
        let mut arrived = self.arrived.subscribe();
        tokio::time::timeout(WAIT, arrived.wait_for(|count| *count >= n))
            .await
            .unwrap_or_else(|_| panic!("call {n} never reached the provider"))
            .expect("the gate lives");
    }
}

/// A guard on every awaited event, not a pause.
const WAIT: Duration = Duration::from_secs(30);

/// Runs `read` (blocking reads of the child's stderr) on a thread of its own; kills the child and
/// panics saying `what` did not happen if it takes longer than [`WAIT`].
fn read_within<T: Send + 'static>(
    child: &mut Child,
    stderr: BufReader<ChildStderr>,
    what: &str,
    read: impl FnOnce(&mut BufReader<ChildStderr>) -> T + Send + 'static,
) -> (T, BufReader<ChildStderr>) {
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut stderr = stderr;
        let value = read(&mut stderr);
        let _ = done.send((value, stderr));
    });
    let result = outcome.recv_timeout(WAIT);
    if result.is_err() {
        let _ = child.kill();
    }
    match result {
        Ok(read) => read,
        Err(RecvTimeoutError::Timeout) => panic!("waited {WAIT:?} for {what}"),
        Err(RecvTimeoutError::Disconnected) => panic!("reading {what} failed (see above)"),
    }
}

/// [`scrape`], off the runtime's threads.
async fn scrape_blocking(addr: &str) -> String {
    let addr = addr.to_owned();
    tokio::task::spawn_blocking(move || scrape(&addr))
        .await
        .unwrap()
}

fn spawn(args: &[&str]) -> (Child, BufReader<ChildStderr>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rudder"))
        .args(args)
        .env("RUDDER_DEMO_PROGRESS", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    (child, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invoke_serves_the_calls_in_flight_and_done_while_it_runs() {
    let gate = Arc::new(Gate::closed());
    let server = DubboServer::bind(0, {
        let gate = Arc::clone(&gate);
        move |_: Invocation| {
            let gate = Arc::clone(&gate);
            async move {
                gate.hold().await;
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
    let (mut child, stderr) = spawn(&args);
    let child_stdout = child.stdout.take().unwrap();
    let (addr, _stderr) = tokio::task::block_in_place(|| {
        read_within(&mut child, stderr, "the metrics address", metrics_address)
    });
    let in_flight = format!("rudder_calls_in_flight{{{provider}}}");
    let calls = format!("rudder_calls_total{{{provider}}}");
    gate.arrivals(1).await;
    let body = scrape_blocking(&addr).await;
    assert_eq!(value(&body, &in_flight), Some(1.0), "{body}");
    assert_eq!(value(&body, &calls), Some(0.0), "{body}");
    assert_eq!(value(&body, "rudder_connections_open"), Some(1.0), "{body}");
    // Let one call through: it is counted before the next one (the calls run one after another)
    // is sent, and that one is in flight.
    gate.permits.add_permits(1);
    gate.arrivals(2).await;
    let body = scrape_blocking(&addr).await;
    assert_eq!(value(&body, &calls), Some(1.0), "{body}");
    assert_eq!(value(&body, &in_flight), Some(1.0), "{body}");
    assert_eq!(
        value(&body, "rudder_picks_total{strategy=\"random\"}"),
        Some(2.0),
        "{body}"
    );
    gate.permits.add_permits(2);
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
    let (mut child, stderr) = spawn(&[
        "demo",
        "--calls",
        "1000000",
        "--concurrency",
        "4",
        "--metrics-addr",
        "127.0.0.1:0",
    ]);
    let (addr, stderr) = read_within(&mut child, stderr, "the metrics address", metrics_address);
    // `random` goes first: once 400 calls have ended, each of the four providers has had some
    // (the least likely, the warming one, misses 400 in a row with probability under 10^-8).
    let (_, _stderr) = read_within(&mut child, stderr, "400 calls to end", |stderr| {
        progress_reaches(stderr, 400)
    });
    let body = scrape(&addr);
    assert!(
        value(&body, "rudder_picks_total{strategy=\"random\"}").is_some_and(|v| v >= 400.0),
        "{body}"
    );
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
