//! End-to-end load: `sayHello` through [`DubboProtocol`] against the in-process test server over
//! loopback, at several concurrencies. Prints QPS and p50/p99 latency per level.
//!
//! ```text
//! cargo run --release -p rudder-rpc --example load -- [--calls 20000] [--seconds 10] [--levels 1,16,128] [--connections 1]
//! ```
//! Each level stops after `--calls` calls or `--seconds` seconds, whichever comes first.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder_common::invocation::Invocation;
use rudder_common::url::DubboUrl;
use rudder_common::value::Value;
use rudder_rpc::server::DubboServer;
use rudder_rpc::DubboProtocol;

struct Options {
    calls: u64,
    seconds: u64,
    levels: Vec<usize>,
    connections: usize,
}

fn options() -> Result<Options, String> {
    let mut o = Options {
        calls: 20_000,
        seconds: 10,
        levels: vec![1, 16, 128],
        connections: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |_| format!("bad value {value:?} for {flag}");
        match flag.as_str() {
            "--calls" => o.calls = value.parse().map_err(bad)?,
            "--seconds" => o.seconds = value.parse().map_err(bad)?,
            "--connections" => o.connections = value.parse().map_err(bad)?,
            "--levels" => {
                o.levels = value
                    .split(',')
                    .map(|l| l.trim().parse().map_err(bad))
                    .collect::<Result<_, _>>()?
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(o)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * p).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

async fn run_level(protocol: &DubboProtocol, url: &Arc<DubboUrl>, concurrency: usize, o: &Options) {
    let issued = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(o.seconds);
    let started = Instant::now();
    let mut workers = Vec::with_capacity(concurrency);
    for _ in 0..concurrency {
        let (protocol, url, issued) = (protocol.clone(), Arc::clone(url), Arc::clone(&issued));
        let calls = o.calls;
        workers.push(tokio::spawn(async move {
            let call = Invocation::new(
                "sayHello",
                vec!["java.lang.String".into()],
                vec![Value::from("load")],
            );
            let (mut latencies, mut errors) = (Vec::new(), 0u64);
            while issued.fetch_add(1, Ordering::Relaxed) < calls && Instant::now() < deadline {
                let t = Instant::now();
                match protocol.invoke(&url, &call).await {
                    Ok(_) => latencies.push(t.elapsed()),
                    Err(_) => errors += 1,
                }
            }
            (latencies, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for worker in workers {
        let (latencies, e) = worker.await.expect("worker");
        all.extend(latencies);
        errors += e;
    }
    let elapsed = started.elapsed();
    all.sort_unstable();
    println!(
        "{concurrency:>11} {:>8} {:>7} {:>10.0} {:>9.1} {:>9.1} {:>9.1}",
        all.len(),
        errors,
        all.len() as f64 / elapsed.as_secs_f64(),
        percentile(&all, 0.50).as_secs_f64() * 1e6,
        percentile(&all, 0.99).as_secs_f64() * 1e6,
        all.last().copied().unwrap_or_default().as_secs_f64() * 1e6,
    );
}

#[tokio::main]
async fn main() {
    let o = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("load: {e}");
            std::process::exit(2);
        }
    };
    let server = DubboServer::bind(0, |call: Invocation| async move {
        let name = call
            .arguments()
            .first()
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned();
        Ok(Value::from(format!("Hello {name}")))
    })
    .await
    .expect("bind 127.0.0.1");
    let url = Arc::new(
        DubboUrl::parse(&format!(
            "dubbo://{}/org.apache.dubbo.demo.DemoService?timeout=5000&connections={}",
            server.local_addr(),
            o.connections
        ))
        .expect("URL"),
    );
    let protocol = DubboProtocol::new();
    // Warm up: connect and let the allocator and caches settle.
    let warm = Invocation::new(
        "sayHello",
        vec!["java.lang.String".into()],
        vec![Value::from("warm")],
    );
    for _ in 0..1000 {
        protocol.invoke(&url, &warm).await.expect("warm-up call");
    }
    println!("concurrency    calls  errors        qps   p50(us)   p99(us)   max(us)");
    for &level in &o.levels {
        run_level(&protocol, &url, level.max(1), &o).await;
    }
    protocol.shutdown().await;
    server.shutdown().await;
}
