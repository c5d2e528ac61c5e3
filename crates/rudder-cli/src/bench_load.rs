//! The load `rudder bench` (and `rudder demo`'s scenarios) send: N workers keep calls in flight
//! through one [`Reference`], for a number of calls or a duration, optionally paced to a rate; a
//! warm-up phase first, measured apart. Ctrl-C ([`interrupt`]) stops the workers and gives up the
//! calls in flight, so the summary covers what was answered.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rudder::{CallError, Invocation, Reference};
use rudder_cluster::loadbalance::outlier::OutlierSettings;
use tokio::sync::Notify;

use crate::bench_attempts::{self as attempts, histogram, ProviderRow};
use crate::bench_report::Report;

/// When the measured phase ends.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Stop {
    /// After this many calls.
    Calls(usize),
    /// After this long.
    After(Duration),
}

/// How to load a reference.
#[derive(Debug, Clone)]
pub(crate) struct Load {
    pub(crate) concurrency: usize,
    pub(crate) stop: Stop,
    pub(crate) rate: Option<f64>,
    pub(crate) warmup: usize,
    pub(crate) progress: bool,
}

/// Set by Ctrl-C: workers start no more calls and give up the ones in flight.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Wakes the workers waiting on a call or a `--rate` slot when Ctrl-C comes.
static INTERRUPT: Notify = Notify::const_new();

/// Ends the run as Ctrl-C does.
pub(crate) fn interrupt() {
    INTERRUPTED.store(true, SeqCst);
    INTERRUPT.notify_waiters();
}

/// Resolves once the run is interrupted (at once if it already is).
async fn interrupted() {
    // Registered before the flag is read, so an interrupt between the two still wakes it.
    let notified = INTERRUPT.notified();
    if INTERRUPTED.load(SeqCst) {
        return;
    }
    notified.await;
}

/// What the workers share.
struct Shared {
    issued: AtomicUsize,
    done: AtomicU64,
    errors: AtomicU64,
    stop: AtomicBool,
    /// The next call's start time under `--rate`.
    next_slot: Mutex<Instant>,
}

/// One worker's measurements, merged at the end.
struct Tally {
    latency: Histogram<u64>,
    errors_by_kind: BTreeMap<String, u64>,
}

/// Runs the warmup, then the measured calls, and reports on the latter.
pub(crate) async fn drive(reference: &Arc<Reference>, call: &Invocation, load: &Load) -> Report {
    if load.warmup > 0 {
        let warm = Load {
            stop: Stop::Calls(load.warmup),
            progress: false,
            ..load.clone()
        };
        phase(reference, call, &warm).await;
    }
    attempts::start();
    let cpu_before = cpu_time();
    let started = Instant::now();
    let tallies = phase(reference, call, load).await;
    let elapsed = started.elapsed();
    let cpu = cpu_before.zip(cpu_time()).map(|(a, b)| b.saturating_sub(a));
    let mut providers = attempts::finish();
    count_ejections(reference, call.method_name(), &mut providers);
    let mut latency = histogram();
    let mut errors_by_kind = BTreeMap::new();
    for tally in tallies {
        latency.add(&tally.latency).expect("same bounds");
        for (kind, n) in tally.errors_by_kind {
            *errors_by_kind.entry(kind).or_insert(0) += n;
        }
    }
    let errors = errors_by_kind.values().sum();
    Report {
        calls: latency.len(),
        errors,
        errors_by_kind,
        latency,
        elapsed,
        cpu,
        providers,
        interrupted: INTERRUPTED.load(SeqCst),
    }
}

/// Fills in each row's ejection count from the consumer's statistics, when ejection is on for the
/// method.
fn count_ejections(reference: &Reference, method: &str, rows: &mut [ProviderRow]) {
    let providers = reference.providers();
    for row in rows {
        let Some(provider) = providers.iter().find(|p| p.address() == row.address) else {
            continue;
        };
        if OutlierSettings::of(provider.url(), method).is_some() {
            row.ejections = Some(
                provider
                    .status()
                    .find_method(method)
                    .map_or(0, |status| status.outlier().ejections()),
            );
        }
    }
}

async fn phase(reference: &Arc<Reference>, call: &Invocation, load: &Load) -> Vec<Tally> {
    let shared = Arc::new(Shared {
        issued: AtomicUsize::new(0),
        done: AtomicU64::new(0),
        errors: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        next_slot: Mutex::new(Instant::now()),
    });
    let deadline = match load.stop {
        Stop::After(d) => Some(tokio::time::Instant::now() + d),
        Stop::Calls(_) => None,
    };
    let progress = load
        .progress
        .then(|| tokio::spawn(show_progress(Arc::clone(&shared))));
    let workers: Vec<_> = (0..load.concurrency)
        .map(|_| {
            let (reference, call, shared, load) = (
                Arc::clone(reference),
                call.clone(),
                Arc::clone(&shared),
                load.clone(),
            );
            tokio::spawn(async move { worker(&reference, &call, &shared, &load, deadline).await })
        })
        .collect();
    let mut tallies = Vec::with_capacity(workers.len());
    for worker in workers {
        if let Ok(tally) = worker.await {
            tallies.push(tally);
        }
    }
    shared.stop.store(true, Relaxed);
    if let Some(progress) = progress {
        progress.abort();
        let _ = progress.await;
        eprintln!();
    }
    tallies
}

async fn worker(
    reference: &Reference,
    call: &Invocation,
    shared: &Shared,
    load: &Load,
    deadline: Option<tokio::time::Instant>,
) -> Tally {
    let mut tally = Tally {
        latency: histogram(),
        errors_by_kind: BTreeMap::new(),
    };
    loop {
        if INTERRUPTED.load(SeqCst) {
            break;
        }
        if let Stop::Calls(n) = load.stop {
            if shared.issued.fetch_add(1, Relaxed) >= n {
                break;
            }
        }
        if let Some(rate) = load.rate {
            let slot = {
                let mut next = shared
                    .next_slot
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let slot = (*next).max(Instant::now());
                *next = slot + Duration::from_secs_f64(1.0 / rate);
                slot
            };
            tokio::select! {
                () = tokio::time::sleep_until(slot.into()) => {}
                () = interrupted() => break,
            }
        }
        if deadline.is_some_and(|d| tokio::time::Instant::now() >= d) {
            break;
        }
        let started = Instant::now();
        // A call in flight at Ctrl-C is given up and not counted: the summary is of answered calls.
        let result = tokio::select! {
            result = reference.invoke(call.clone()) => {
                result.and_then(|response| Ok(response.into_result()?))
            }
            () = interrupted() => break,
        };
        let micros = started.elapsed().as_micros().clamp(1, 3_600_000_000) as u64;
        tally.latency.saturating_record(micros);
        shared.done.fetch_add(1, Relaxed);
        if let Err(error) = result {
            let kind = match &error {
                CallError::Exception(_) => "exception".to_owned(),
                CallError::Rpc(e) => e.kind().to_string(),
                other => other.to_string(),
            };
            *tally.errors_by_kind.entry(kind).or_insert(0) += 1;
            shared.errors.fetch_add(1, Relaxed);
        }
    }
    tally
}

async fn show_progress(shared: Arc<Shared>) {
    let started = Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    while !shared.stop.load(Relaxed) {
        tick.tick().await;
        let done = shared.done.load(Relaxed);
        let qps = done as f64 / started.elapsed().as_secs_f64();
        eprint!(
            "\r{done} calls, {} errors, {qps:.0} calls/s",
            shared.errors.load(Relaxed)
        );
    }
}

/// User + system CPU time of this process so far (Linux; `None` elsewhere).
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name, which may itself contain spaces.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name; USER_HZ is 100.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}
