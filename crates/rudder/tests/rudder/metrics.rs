//! The metrics endpoint end to end: calls through references to real dubbo:// servers, scraped over
//! HTTP on loopback, the text exposition parsed, exact values asserted.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rudder::metrics::{ManualTicker, MetricsConfig, MetricsServer};
use rudder::{ClusterMode, Consumer, Invocation, Value};
use rudder_rpc::server::DubboServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::consumer::Gate;
use rudder_test_support::wait::within;

const SERVICE: &str = "com.acme.Greeter";

/// A provider whose methods "take" a fixed time on `ticker`: `fast` 2 ms, `slow` 300 ms; `stall`
/// never answers, `hold` answers once `gate` lets it.
async fn provider(ticker: Arc<ManualTicker>, gate: Arc<Gate>) -> DubboServer {
    DubboServer::bind(0, move |call: Invocation| {
        let (ticker, gate) = (Arc::clone(&ticker), Arc::clone(&gate));
        async move {
            match call.method_name() {
                "fast" => ticker.advance_micros(2_000),
                "slow" => ticker.advance_micros(300_000),
                "stall" => std::future::pending::<()>().await,
                "hold" => gate.hold().await,
                _ => {}
            }
            Ok(Value::from("done"))
        }
    })
    .await
    .unwrap()
}

fn url(server: &DubboServer) -> String {
    format!("dubbo://{}/{SERVICE}", server.local_addr())
}

/// Sends `request` and returns the status line and the body.
async fn http(addr: SocketAddr, request: &[u8]) -> (String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = String::new();
    within("the answer", stream.read_to_string(&mut answer))
        .await
        .unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.lines().next().unwrap().to_owned();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("a Content-Length")
        .parse()
        .unwrap();
    assert_eq!(length, body.len(), "Content-Length matches the body");
    (status, body.to_owned())
}

/// Scrapes `GET /metrics` and parses the exposition into `name{labels}` → value.
async fn scrape(server: &MetricsServer) -> HashMap<String, f64> {
    let (status, body) = http(
        server.local_addr(),
        b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/openmetrics-text\r\n\r\n",
    )
    .await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    parse(&body)
}

/// Sample lines into a map; every line checked to be a comment or `series value`.
fn parse(text: &str) -> HashMap<String, f64> {
    assert!(
        text.ends_with("# EOF\n"),
        "an OpenMetrics exposition ends in # EOF:\n{text}"
    );
    let mut samples = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (series, value) = line.rsplit_once(' ').expect("series and value");
        let value: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("a number in {line}"));
        assert!(
            samples.insert(series.to_owned(), value).is_none(),
            "{series} twice"
        );
    }
    samples
}

fn series(name: &str, provider: &str, method: &str, extra: &str) -> String {
    format!("{name}{{provider=\"{provider}\",method=\"{method}\"{extra}}}")
}

#[tokio::test]
async fn scraped_metrics_count_every_call_with_exact_durations_and_forget_pruned_providers() {
    let ticker = Arc::new(ManualTicker::default());
    let gate = Gate::closed();
    let a = provider(Arc::clone(&ticker), Arc::clone(&gate)).await;
    let b = provider(Arc::clone(&ticker), Arc::clone(&gate)).await;
    let consumer = Consumer::builder()
        .metrics(MetricsConfig::default().ticker(ticker.clone()))
        .build();
    let both = consumer
        .reference(SERVICE)
        .provider(&url(&a))
        .provider(&url(&b))
        .loadbalance("roundrobin")
        .cluster(ClusterMode::Failfast)
        .timeout(Duration::from_millis(300))
        .build()
        .await
        .unwrap();
    let only_a = consumer
        .reference(SERVICE)
        .provider(&url(&a))
        .build()
        .await
        .unwrap();
    let server = consumer
        .metrics()
        .expect("metrics are on")
        .serve("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();

    // One call at a time, so each call's duration is exactly what its provider added to the ticker.
    for _ in 0..4 {
        both.call::<Value, _>("fast", &[], vec![]).await.unwrap();
    }
    for _ in 0..2 {
        both.call::<Value, _>("slow", &[], vec![]).await.unwrap();
    }
    both.call::<Value, _>("stall", &[], vec![])
        .await
        .unwrap_err();
    only_a.call::<Value, _>("fast", &[], vec![]).await.unwrap();

    let (pa, pb) = (url(&a), url(&b));
    let m = scrape(&server).await;
    let get = |key: String| {
        *m.get(&key)
            .unwrap_or_else(|| panic!("{key} missing: {m:#?}"))
    };
    // Round robin over two equal providers alternates: fast 2 + 2 (and one more on a), slow 1 + 1.
    assert_eq!(get(series("rudder_calls_total", &pa, "fast", "")), 3.0);
    assert_eq!(get(series("rudder_calls_total", &pb, "fast", "")), 2.0);
    assert_eq!(get(series("rudder_calls_total", &pa, "slow", "")), 1.0);
    assert_eq!(get(series("rudder_calls_total", &pb, "slow", "")), 1.0);
    let stalled = |p: &str, name: &str| m.get(&series(name, p, "stall", "")).copied();
    let (stall_a, stall_b) = (
        stalled(&pa, "rudder_calls_total"),
        stalled(&pb, "rudder_calls_total"),
    );
    assert_eq!(stall_a.unwrap_or(0.0) + stall_b.unwrap_or(0.0), 1.0);
    let failures = stalled(&pa, "rudder_call_failures_total").unwrap_or(0.0)
        + stalled(&pb, "rudder_call_failures_total").unwrap_or(0.0);
    assert_eq!(failures, 1.0, "the timed-out call is the one failure");
    assert_eq!(
        get(series("rudder_call_failures_total", &pa, "fast", "")),
        0.0
    );
    for (p, method) in [(&pa, "fast"), (&pb, "fast"), (&pa, "slow"), (&pb, "slow")] {
        assert_eq!(get(series("rudder_calls_in_flight", p, method, "")), 0.0);
    }

    // Durations: fast calls took 2 ms each on the ticker, slow ones 300 ms.
    let bucket = |p: &str, method: &str, le: &str| {
        // prometheus-client puts `le` first.
        get(format!(
            "rudder_call_duration_seconds_bucket{{le=\"{le}\",provider=\"{p}\",method=\"{method}\"}}"
        ))
    };
    assert_eq!(bucket(&pa, "fast", "0.001"), 0.0);
    assert_eq!(bucket(&pa, "fast", "0.0025"), 3.0);
    assert_eq!(bucket(&pa, "fast", "+Inf"), 3.0);
    assert_eq!(bucket(&pb, "fast", "0.0025"), 2.0);
    assert_eq!(bucket(&pa, "slow", "0.25"), 0.0);
    assert_eq!(bucket(&pa, "slow", "0.5"), 1.0);
    assert_eq!(bucket(&pa, "slow", "10.0"), 1.0);
    let sum = get(series("rudder_call_duration_seconds_sum", &pa, "fast", ""));
    assert!((sum - 0.006).abs() < 1e-9, "3 x 2 ms, got {sum}");
    assert_eq!(
        get(series(
            "rudder_call_duration_seconds_count",
            &pb,
            "slow",
            ""
        )),
        1.0
    );

    // Picks by strategy: `both` picks by round robin (7 attempts), `only_a` by the default, random.
    assert_eq!(
        get("rudder_picks_total{strategy=\"roundrobin\"}".into()),
        7.0
    );
    assert_eq!(get("rudder_picks_total{strategy=\"random\"}".into()), 1.0);
    assert_eq!(get("rudder_connections_open".into()), 2.0);
    #[cfg(feature = "zookeeper")]
    assert_eq!(get("rudder_registry_sessions_open".into()), 0.0);

    // A call held at the provider shows as in flight while it runs, and not after.
    let held = tokio::spawn({
        let only_a = only_a.clone();
        async move { only_a.call::<Value, _>("hold", &[], vec![]).await }
    });
    let in_flight = series("rudder_calls_in_flight", &pa, "hold", "");
    // Counted in flight before it was sent, so by the time it reaches the provider.
    gate.arrivals(1).await;
    assert_eq!(
        scrape(&server).await.get(&in_flight),
        Some(&1.0),
        "the held call in the exposition"
    );
    gate.add_permits(1);
    within("the held call", held).await.unwrap().unwrap();
    assert_eq!(scrape(&server).await.get(&in_flight), Some(&0.0));

    // Dropping `both` leaves b in no directory: the consumer prunes it, and its series go with it.
    drop(both);
    let m = scrape(&server).await;
    assert!(
        !m.keys().any(|k| k.contains(&pb)),
        "b's series are gone: {m:#?}"
    );
    assert_eq!(
        m.get(&series("rudder_calls_total", &pa, "fast", "")),
        Some(&3.0)
    );
    assert_eq!(
        m.get("rudder_picks_total{strategy=\"roundrobin\"}"),
        Some(&7.0)
    );
    // Pruned, b's connection closes (b sees its consumer hang up); a's stays open.
    within("b's connection to close", b.wait_for_open_connections(0)).await;
    assert_eq!(a.open_connections(), 1, "a's connection stays open");

    let addr = server.local_addr();
    server.shutdown().await;
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the endpoint is closed"
    );
    drop(only_a);
    // With no reference left, the consumer closes a's connection too, and every connection task ends.
    within(
        "the consumer's last connection to close",
        consumer.diagnostics().wait_until_idle(),
    )
    .await;
    assert_eq!(consumer.diagnostics().open_connections(), 0);
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn the_endpoint_answers_only_get_metrics_and_bounds_the_request() {
    let consumer = Consumer::builder()
        .metrics(MetricsConfig::default())
        .build();
    let server = consumer
        .metrics()
        .unwrap()
        .serve("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let addr = server.local_addr();
    let (status, _) = http(addr, b"GET / HTTP/1.1\r\n\r\n").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let (status, _) = http(addr, b"DELETE /metrics HTTP/1.1\r\n\r\n").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    let mut huge = b"GET /metrics HTTP/1.1\r\nX-Padding: ".to_vec();
    huge.extend(std::iter::repeat_n(b'x', 16 * 1024));
    let mut stream = TcpStream::connect(addr).await.unwrap();
    // The server answers once it has read past its limit (8 KiB), without a complete head.
    stream.write_all(&huge).await.unwrap();
    stream.shutdown().await.unwrap();
    let mut answer = Vec::new();
    let _ = within("the refusal", stream.read_to_end(&mut answer)).await;
    assert!(
        answer.starts_with(b"HTTP/1.1 431 "),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    // An idle consumer still exposes every family, with no call series yet.
    let body = http(addr, b"GET /metrics HTTP/1.0\r\n\r\n").await.1;
    assert!(body.contains("# TYPE rudder_calls counter\n"), "{body}");
    assert!(
        body.contains("# TYPE rudder_call_duration_seconds histogram\n"),
        "{body}"
    );
    assert!(parse(&body)
        .keys()
        .all(|k| !k.starts_with("rudder_calls_total")));
    // A connection open when the endpoint is dropped ends with it (served or still in the
    // listener's queue): its end is the event that says the listener is closed.
    let mut idle = TcpStream::connect(addr).await.unwrap();
    drop(server);
    let mut rest = Vec::new();
    let ended = within(
        "the dropped endpoint to close its connection",
        idle.read_to_end(&mut rest),
    );
    assert!(
        ended.await.map_or(true, |_| rest.is_empty()),
        "closed unanswered: {}",
        String::from_utf8_lossy(&rest)
    );
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "the dropped endpoint is closed"
    );
}

#[test]
fn a_consumer_without_metrics_has_no_handle() {
    assert!(Consumer::builder().build().metrics().is_none());
}

/// `outlier.*` on: a provider that refuses connections is ejected after two errors in a row, and the
/// metrics and `Reference::explain` say so until the ejection ends on the consumer's clock.
#[tokio::test]
async fn ejections_show_in_the_metrics_and_the_explanation_until_they_end() {
    let server = provider(Arc::new(ManualTicker::default()), Gate::closed()).await;
    // A port nobody listens on: bound, then closed.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_address = dead.local_addr().unwrap();
    drop(dead);
    let clock = Arc::new(rudder_common::clock::ManualClock::new(1_800_000_000_000));
    let consumer = Consumer::builder()
        .clock(clock.clone())
        .metrics(MetricsConfig::default())
        .build();
    let params =
        "loadbalance=roundrobin&outlier.consecutive-errors=2&outlier.base-ejection-ms=60000";
    let reference = consumer
        .reference(SERVICE)
        .provider(&format!("{}?{params}", url(&server)))
        .provider(&format!("dubbo://{dead_address}/{SERVICE}?{params}"))
        .cluster(ClusterMode::Failfast)
        // Ejection alone: with the availability check the refused port would leave the pick
        // after its first failure, before two errors in a row could eject it.
        .parameter("cluster.availablecheck", "false")
        .build()
        .await
        .unwrap();
    let mut failed = 0;
    for _ in 0..4 {
        failed += usize::from(
            reference
                .call::<Value, _>("fast", &[], vec![])
                .await
                .is_err(),
        );
    }
    assert_eq!(
        failed, 2,
        "round robin sends two of four calls to the dead port"
    );
    let live = url(&server);
    let gone = format!("dubbo://{dead_address}/{SERVICE}");
    let metrics = consumer.metrics().unwrap();
    let read = |text: &str, name: &str, provider: &str| {
        parse(text)
            .get(&series(name, provider, "fast", ""))
            .copied()
            .unwrap_or_else(|| panic!("no {name} for {provider}:\n{text}"))
    };
    let text = metrics.encode();
    assert_eq!(read(&text, "rudder_outlier_ejections_total", &gone), 1.0);
    assert_eq!(read(&text, "rudder_outlier_ejected", &gone), 1.0);
    assert_eq!(read(&text, "rudder_outlier_ejections_total", &live), 0.0);
    assert_eq!(read(&text, "rudder_outlier_ejected", &live), 0.0);

    // Ejected, the dead provider gets no call: the next four all succeed.
    for _ in 0..4 {
        reference
            .call::<Value, _>("fast", &[], vec![])
            .await
            .unwrap();
    }
    let why = reference.explain(&Invocation::new("fast", vec![], vec![]));
    assert_eq!(why.ejected(), 1, "{why}");
    let fate = why
        .providers
        .iter()
        .find(|p| p.provider.address() == dead_address.to_string())
        .unwrap();
    assert_eq!(
        fate.ejected.map(|e| (e.left_out, e.remaining_millis)),
        Some((true, 60_000))
    );

    clock.advance(60_000);
    let text = metrics.encode();
    assert_eq!(read(&text, "rudder_outlier_ejected", &gone), 0.0);
    assert_eq!(read(&text, "rudder_outlier_ejections_total", &gone), 1.0);
    assert_eq!(
        reference
            .explain(&Invocation::new("fast", vec![], vec![]))
            .ejected(),
        0
    );
    server.shutdown().await;
}
