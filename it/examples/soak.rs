//! Soak: call one service for a set time while its providers join and leave at new addresses, and
//! watch what the process holds. Run by hand, not in CI (loopback only; needs Docker and the local
//! ZooKeeper image, see `scripts/it-setup.sh`):
//!
//! ```text
//! cargo run -p rudder-it --example soak -- --minutes 25 --churn 3 --every-ms 1000
//! ```
//!
//! Two providers stay for the whole run; every `--every-ms` the `--churn` oldest of the others leave
//! (their ZooKeeper node is deleted, then their server stops) and as many join on fresh ports, so
//! every departed provider is an address the consumer never sees again. `--callers` tasks call
//! `sayHello` in a loop through one reference found in ZooKeeper (metrics on, as with
//! `rudder invoke --metrics-addr`), each pausing `--pause-ms` between calls (default 0), so a long run
//! can leave the machine's cores to other work.
//!
//! Every `--sample-s` seconds one line: resident memory and its high-water mark (`/proc/self/status`),
//! open file descriptors (`/proc/self/fd`), threads, tokio tasks alive (the runtime's count and
//! rudder's connection tasks), and the per-provider entries (providers listed, statistics entries,
//! open connections, registry sessions). At the end: RSS growth after the warm-up and per departed
//! address. The process exits 1 if RSS grew by more than `--max-growth-kb` (default 1024) between the
//! end of the warm-up (`--warmup-minutes`, default 5) and the end.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::metrics::MetricsConfig;
use rudder::{Consumer, Invocation, Value};
use rudder_common::url::DubboUrl;
use rudder_rpc::server::DubboServer;
use zookeeper_client::{Acls, Client, CreateMode};

const INTERFACE: &str = "com.acme.Soak";
const PROVIDERS: &str = "/dubbo/com.acme.Soak/providers";

struct Settings {
    minutes: f64,
    warmup_minutes: f64,
    every: Duration,
    churn: usize,
    stable: usize,
    churners: usize,
    callers: usize,
    /// Pause of each caller between its calls (0: back to back).
    pause: Duration,
    sample: Duration,
    max_growth_kb: u64,
}

impl Settings {
    fn from_args() -> Settings {
        let mut settings = Settings {
            minutes: 25.0,
            warmup_minutes: 5.0,
            every: Duration::from_millis(1000),
            churn: 3,
            stable: 2,
            churners: 6,
            callers: 4,
            pause: Duration::ZERO,
            sample: Duration::from_secs(30),
            max_growth_kb: 1024,
        };
        let args: Vec<String> = std::env::args().skip(1).collect();
        let mut pairs = args.chunks(2);
        for pair in &mut pairs {
            let [flag, value] = pair else {
                panic!("{}: a value is missing", pair[0]);
            };
            let number = |what: &str| -> f64 {
                value
                    .parse()
                    .unwrap_or_else(|_| panic!("{what} {value:?} is not a number"))
            };
            match flag.as_str() {
                "--minutes" => settings.minutes = number(flag),
                "--warmup-minutes" => settings.warmup_minutes = number(flag),
                "--every-ms" => settings.every = Duration::from_millis(number(flag) as u64),
                "--churn" => settings.churn = number(flag) as usize,
                "--stable" => settings.stable = number(flag) as usize,
                "--churners" => settings.churners = number(flag) as usize,
                "--callers" => settings.callers = number(flag) as usize,
                "--pause-ms" => settings.pause = Duration::from_secs_f64(number(flag) / 1000.0),
                "--sample-s" => settings.sample = Duration::from_secs_f64(number(flag)),
                "--max-growth-kb" => settings.max_growth_kb = number(flag) as u64,
                other => panic!("unknown flag {other}"),
            }
        }
        assert!(
            settings.minutes > 0.0 && settings.minutes <= 24.0 * 60.0,
            "--minutes must be in (0, 1440]"
        );
        assert!(settings.churn <= settings.churners, "--churn > --churners");
        settings
    }
}

/// One in-process provider and its registry node.
struct Provider {
    server: DubboServer,
    node: String,
}

async fn start_provider(zk: &Client) -> Provider {
    let server = DubboServer::bind(0, |call: Invocation| async move {
        Ok(Value::from(call.method_name().to_owned()))
    })
    .await
    .expect("provider binds");
    // The parameters a Java Dubbo 3.3 provider registers, with a pid and timestamp of its own.
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let url = DubboUrl::parse(&format!(
        "dubbo://{}/{INTERFACE}?anyhost=true&application=soak-provider&background=false&deprecated=false\
         &dubbo=2.0.2&dynamic=true&generic=false&interface={INTERFACE}&methods=sayHello,sayBye,status\
         &pid={}&prefer.serialization=hessian2&release=3.3.0&service-name-mapping=true&side=provider\
         &timestamp={stamp}&weight=100",
        server.local_addr(),
        server.local_addr().port(),
    ))
    .expect("provider URL");
    let node = format!("{PROVIDERS}/{}", url.to_node_name());
    let mode = CreateMode::Ephemeral.with_acls(Acls::anyone_all());
    zk.create(&node, b"", &mode).await.expect("register");
    Provider { server, node }
}

async fn stop_provider(zk: &Client, provider: Provider) {
    zk.delete(&provider.node, None).await.expect("deregister");
    provider.server.shutdown().await;
}

/// One sample of what the process holds.
#[derive(Debug, Clone, Copy)]
struct Sample {
    rss_kb: u64,
    hwm_kb: u64,
    fds: usize,
    threads: u64,
    tokio_tasks: usize,
    connection_tasks: usize,
    listed: usize,
    statistics: usize,
    connections: usize,
    sessions: usize,
}

fn status_field(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn sample(consumer: &Consumer, listed: usize) -> Sample {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    Sample {
        rss_kb: status_field(&status, "VmRSS:"),
        hwm_kb: status_field(&status, "VmHWM:"),
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, Iterator::count),
        threads: status_field(&status, "Threads:"),
        tokio_tasks: tokio::runtime::Handle::current()
            .metrics()
            .num_alive_tasks(),
        connection_tasks: consumer.diagnostics().live_tasks(),
        listed,
        statistics: consumer.statuses().len(),
        connections: consumer.diagnostics().open_connections(),
        sessions: consumer.diagnostics().registry_sessions(),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let settings = Settings::from_args();
    let zookeeper = rudder_it::ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let zk = Client::connect(&zookeeper.connect_string())
        .await
        .expect("provider-side ZooKeeper session");
    zk.mkdir(
        PROVIDERS,
        &CreateMode::Persistent.with_acls(Acls::anyone_all()),
    )
    .await
    .expect("providers node");

    let mut stable = Vec::new();
    for _ in 0..settings.stable {
        stable.push(start_provider(&zk).await);
    }
    let mut churning: VecDeque<Provider> = VecDeque::new();
    for _ in 0..settings.churners {
        churning.push_back(start_provider(&zk).await);
    }

    let consumer = Consumer::builder()
        .application("soak")
        .metrics(MetricsConfig::default())
        .build();
    let reference = consumer
        .reference(INTERFACE)
        .registry(&format!("zookeeper://{}", zookeeper.connect_string()))
        .build()
        .await
        .expect("reference builds");
    let metrics = consumer.metrics().expect("metrics are on");

    let calls = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs_f64(settings.minutes * 60.0);
    let mut callers = Vec::new();
    for _ in 0..settings.callers {
        let (reference, calls, errors) = (reference.clone(), calls.clone(), errors.clone());
        let pause = settings.pause;
        callers.push(tokio::spawn(async move {
            while Instant::now() < deadline {
                match reference.call::<Value, _>("sayHello", &[], vec![]).await {
                    Ok(_) => calls.fetch_add(1, Ordering::Relaxed),
                    Err(_) => errors.fetch_add(1, Ordering::Relaxed),
                };
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
            }
        }));
    }

    let started = Instant::now();
    let warmup = Duration::from_secs_f64(settings.warmup_minutes * 60.0);
    let mut departed: u64 = 0;
    let mut at_warmup: Option<(Sample, u64)> = None;
    let mut next_sample = started;
    let mut churn = tokio::time::interval(settings.every);
    let mut scrapes = 0u64;
    println!(
        "# soak: {} min, {} stable providers, {} churning ({} replaced every {:?}), {} callers",
        settings.minutes,
        settings.stable,
        settings.churners,
        settings.churn,
        settings.every,
        settings.callers
    );
    println!("# secs departed calls errors rss_kb hwm_kb fds threads tokio_tasks conn_tasks listed statistics connections sessions");
    let mut last = None;
    while Instant::now() < deadline {
        churn.tick().await;
        for _ in 0..settings.churn {
            if let Some(old) = churning.pop_front() {
                stop_provider(&zk, old).await;
                departed += 1;
            }
            churning.push_back(start_provider(&zk).await);
        }
        // A scrape now and then, as Prometheus would (series must come and go with providers).
        scrapes += 1;
        if scrapes % 15 == 0 {
            let _ = metrics.encode();
        }
        if Instant::now() >= next_sample {
            next_sample += settings.sample;
            let listed = reference.snapshot().providers().len();
            let s = sample(&consumer, listed);
            if at_warmup.is_none() && started.elapsed() >= warmup {
                at_warmup = Some((s, departed));
            }
            println!(
                "{:6.0} {departed:6} {:10} {:6} {:7} {:7} {:4} {:3} {:5} {:4} {:4} {:5} {:4} {:3}",
                started.elapsed().as_secs_f64(),
                calls.load(Ordering::Relaxed),
                errors.load(Ordering::Relaxed),
                s.rss_kb,
                s.hwm_kb,
                s.fds,
                s.threads,
                s.tokio_tasks,
                s.connection_tasks,
                s.listed,
                s.statistics,
                s.connections,
                s.sessions,
            );
            last = Some(s);
        }
    }
    for caller in callers {
        let _ = caller.await;
    }
    let listed = reference.snapshot().providers().len();
    let end = sample(&consumer, listed);
    let last = last.unwrap_or(end);
    drop(reference);
    consumer.shutdown().await;
    for provider in churning.into_iter().chain(stable) {
        stop_provider(&zk, provider).await;
    }
    println!(
        "# {} calls, {} errors, {departed} departed addresses",
        calls.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed)
    );
    let Some((warm, departed_at_warmup)) = at_warmup else {
        println!("# run shorter than the warm-up: no verdict");
        return;
    };
    let growth = last.rss_kb as i64 - warm.rss_kb as i64;
    let after = departed - departed_at_warmup;
    println!(
        "# RSS after warm-up {} KB, at the end {} KB: {growth:+} KB over {after} departed addresses ({:+.2} KB each); fds {} -> {}, threads {} -> {}, tokio tasks {} -> {}",
        warm.rss_kb,
        last.rss_kb,
        growth as f64 / after.max(1) as f64,
        warm.fds,
        last.fds,
        warm.threads,
        last.threads,
        warm.tokio_tasks,
        last.tokio_tasks,
    );
    let (total, failed) = (
        calls.load(Ordering::Relaxed),
        errors.load(Ordering::Relaxed),
    );
    if failed * 1000 > total {
        println!("# FAIL: more than 0.1 % of the calls failed");
        std::process::exit(1);
    }
    if growth > settings.max_growth_kb as i64 {
        println!(
            "# FAIL: RSS grew by more than {} KB",
            settings.max_growth_kb
        );
        std::process::exit(1);
    }
}
