//! Faults with Nacos as the registry, all real parts: rnacos on loopback, Java Dubbo 3.3.6 providers
//! registering into it with Dubbo's own NacosRegistry, and rudder calling them under load (16
//! callers, Dubbo's default `failover` with two retries).
//!
//! * a provider leaving gracefully (SIGTERM: Dubbo's shutdown hook deregisters it) and one killed
//!   with SIGKILL (rnacos drops the instances of a gRPC connection that closes): how long until the
//!   registry's push takes each out, and that no call fails;
//! * the rnacos server killed and restarted under load: its naming data is in memory, so the restarted
//!   server knows no instance until the providers' Nacos clients re-register; rudder keeps calling the
//!   providers it knows meanwhile, and the list is reconciled after (a provider leaving after the
//!   restart is seen).
//!
//! Each test prints its counts (`--nocapture`); docs/nacos.md has the figures.
//! Skipped only with `RUDDER_SKIP_NACOS=1`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nacos_sdk::api::naming::NamingServiceBuilder;
use nacos_sdk::api::props::ClientProps;
use rudder::{Reference, SubscriptionStatus, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, Rnacos};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::common;

pub(crate) const SERVICE: &str = "org.rudder.it.GreetingService";
const READY_WITHIN: Duration = Duration::from_secs(120);
const CALLERS: usize = 16;
/// Calls completed between two steps of a run.
const STEP: usize = 1_500;

pub(crate) async fn java_in(registry: &str, instance: &str) -> Peer {
    // The ZooKeeper address is not used: the registry URL wins.
    let mut config = PeerConfig::new(PeerKind::Java, "127.0.0.1:1", instance);
    config.registry = Some(registry.to_owned());
    config.register_mode = Some("interface".to_owned());
    config.warmup_ms = Some(0);
    Peer::start(config, READY_WITHIN).await.unwrap()
}

async fn java(nacos: &Rnacos, instance: &str) -> Peer {
    java_in(&nacos.url(), instance).await
}

/// What the callers saw.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Answers per provider instance name.
    pub(crate) answered: HashMap<String, usize>,
    /// Failed calls: their count and the first few errors.
    pub(crate) failed: Failures,
}

/// How many failed calls' errors are kept: a fault that fails every call at once must not fill memory
/// with millions of copies of one message.
const KEPT_ERRORS: usize = 8;

/// Failed calls, counted; the first [`KEPT_ERRORS`] errors kept to print.
#[derive(Debug, Default)]
pub(crate) struct Failures {
    count: usize,
    first: Vec<String>,
}

impl Failures {
    fn push(&mut self, error: String) {
        self.count += 1;
        if self.first.len() < KEPT_ERRORS {
            self.first.push(error);
        }
    }

    fn extend(&mut self, other: Failures) {
        self.count += other.count;
        let room = KEPT_ERRORS - self.first.len();
        self.first.extend(other.first.into_iter().take(room));
    }

    pub(crate) fn len(&self) -> usize {
        self.count
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Asserts no call failed, printing the first errors seen (at most five) when some did.
    pub(crate) fn assert_none(&self) {
        let first = &self.first[..5.min(self.first.len())];
        for error in first {
            println!("  failure: {error}");
        }
        assert!(
            self.is_empty(),
            "{} calls failed, first: {first:?}",
            self.count
        );
    }
}

impl Tally {
    pub(crate) fn total(&self) -> usize {
        self.answered.values().sum::<usize>() + self.failed.len()
    }
}

/// [`CALLERS`] tasks calling `sayHello` until stopped; `completed` counts finished calls.
pub(crate) struct Load {
    stop: Arc<AtomicBool>,
    completed: watch::Receiver<usize>,
    callers: Vec<JoinHandle<Tally>>,
}

impl Load {
    pub(crate) fn start(reference: &Arc<Reference>) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let (completed_tx, completed) = watch::channel(0usize);
        let completed_tx = Arc::new(completed_tx);
        let callers = (0..CALLERS)
            .map(|_| {
                let (reference, stop, completed) = (
                    Arc::clone(reference),
                    Arc::clone(&stop),
                    Arc::clone(&completed_tx),
                );
                tokio::spawn(async move {
                    let mut tally = Tally::default();
                    while !stop.load(Ordering::Relaxed) {
                        match reference
                            .call::<Value, _>(
                                "sayHello",
                                &["java.lang.String"],
                                vec![Value::from("rust")],
                            )
                            .await
                        {
                            Ok(answer) => {
                                let who = answer
                                    .as_str()
                                    .and_then(|s| s.rsplit(' ').next())
                                    .unwrap_or("?")
                                    .to_owned();
                                *tally.answered.entry(who).or_default() += 1;
                            }
                            Err(e) => {
                                tally.failed.push(e.to_string());
                                // A call that fails at once must not starve the runtime's other
                                // tasks (the registry's, the directory's) on two worker threads.
                                tokio::task::yield_now().await;
                            }
                        }
                        completed.send_modify(|n| *n += 1);
                    }
                    tally
                })
            })
            .collect();
        Load {
            stop,
            completed,
            callers,
        }
    }

    /// Waits until `calls` more calls have completed (within [`common::WAIT`]).
    pub(crate) async fn run_for(&mut self, calls: usize) {
        let target = *self.completed.borrow() + calls;
        tokio::time::timeout(common::WAIT, self.completed.wait_for(|n| *n >= target))
            .await
            .expect("the load goes on")
            .expect("callers alive");
    }

    /// Stops the callers and sums what they saw.
    pub(crate) async fn stop(self) -> Tally {
        self.stop.store(true, Ordering::Relaxed);
        let mut sum = Tally::default();
        for caller in self.callers {
            let tally = caller.await.expect("caller task");
            for (who, n) in tally.answered {
                *sum.answered.entry(who).or_default() += n;
            }
            sum.failed.extend(tally.failed);
        }
        sum
    }
}

/// The reference's (only) registry status as it changes.
pub(crate) fn status_of(reference: &Reference) -> watch::Receiver<SubscriptionStatus> {
    reference.registry_status_changes()[0]
        .clone()
        .expect("subscribed")
}

/// Waits for `condition` on the status, or fails saying `what` did not happen.
pub(crate) async fn must_reach(
    status: &mut watch::Receiver<SubscriptionStatus>,
    what: &str,
    condition: impl FnMut(&SubscriptionStatus) -> bool,
) {
    let reached = matches!(
        tokio::time::timeout(common::WAIT, status.wait_for(condition)).await,
        Ok(Ok(_))
    );
    assert!(
        reached,
        "{what}: never happened; status {:?}",
        *status.borrow()
    );
}

async fn reference(nacos: &Rnacos, providers: usize) -> Arc<Reference> {
    let reference = Reference::builder(SERVICE)
        .registry(&nacos.url())
        .build()
        .await
        .unwrap();
    must_reach(&mut status_of(&reference), "every provider listed", |s| {
        s.providers == providers
    })
    .await;
    Arc::new(reference)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_leaving_gracefully_or_killed_leaves_the_pick_and_no_call_fails() {
    let Some(nacos) = Rnacos::start().await else {
        return;
    };
    let (_a, mut b, mut c) = tokio::join!(
        java(&nacos, "java-a"),
        java(&nacos, "java-b"),
        java(&nacos, "java-c")
    );
    let reference = reference(&nacos, 3).await;
    let mut status = status_of(&reference);
    let mut load = Load::start(&reference);
    load.run_for(STEP).await;

    // Graceful: Dubbo's shutdown hook deregisters the instance, then closes its server.
    let signalled = Instant::now();
    let (terminated, ()) = tokio::join!(
        b.terminate(),
        must_reach(&mut status, "the stopped provider leaves", |s| {
            s.providers == 2
        })
    );
    terminated.unwrap();
    let graceful = signalled.elapsed();
    load.run_for(STEP).await;

    // SIGKILL: the provider's gRPC connection to rnacos closes with the process.
    let killed = Instant::now();
    c.kill().await;
    must_reach(&mut status, "the killed provider leaves", |s| {
        s.providers == 1
    })
    .await;
    let kill9 = killed.elapsed();
    load.run_for(STEP).await;

    let tally = load.stop().await;
    println!(
        "nacos_faults: graceful stop out of the registry after {graceful:?}, kill -9 after {kill9:?}; \
         {} calls, {} failed, answered {:?}",
        tally.total(),
        tally.failed.len(),
        tally.answered
    );
    tally.failed.assert_none();
    assert!(tally.answered.get("java-a").copied().unwrap_or(0) >= STEP);
    let addresses: Vec<String> = reference
        .providers()
        .iter()
        .map(|p| p.address().to_owned())
        .collect();
    assert_eq!(addresses.len(), 1, "{addresses:?}");
}

/// The instances rnacos lists for the service, as Dubbo's own Nacos client would read them
/// (retried until the client's connection to the just-started server is up).
async fn listed_in_nacos(nacos: &Rnacos) -> usize {
    let mut ticks = tokio::time::interval(Duration::from_millis(50));
    loop {
        ticks.tick().await;
        let props = ClientProps::new()
            .server_addr(nacos.address())
            .env_first(false);
        let Ok(naming) = NamingServiceBuilder::new(props).build().await else {
            continue;
        };
        if let Ok(listed) = naming
            .get_all_instances(format!("providers:{SERVICE}::"), None, Vec::new(), false)
            .await
        {
            return listed.len();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_nacos_server_restarted_under_load_loses_no_call_and_is_reconciled() {
    let Some(mut nacos) = Rnacos::start().await else {
        return;
    };
    let (_a, mut b) = tokio::join!(java(&nacos, "java-a"), java(&nacos, "java-b"));
    let reference = reference(&nacos, 2).await;
    let mut status = status_of(&reference);
    // The fewest providers the directory held at any time.
    let fewest = Arc::new(AtomicUsize::new(usize::MAX));
    let tracker = {
        let (mut status, fewest) = (status.clone(), Arc::clone(&fewest));
        tokio::spawn(async move {
            loop {
                fewest.fetch_min(status.borrow_and_update().providers, Ordering::Relaxed);
                if status.changed().await.is_err() {
                    return;
                }
            }
        })
    };
    let mut load = Load::start(&reference);
    load.run_for(STEP).await;

    nacos.kill().await;
    load.run_for(STEP).await;
    let restarted = Instant::now();
    nacos.restart().await;
    // The providers' Nacos clients re-register into the empty server (their "redo").
    let relisted = async {
        let mut ticks = tokio::time::interval(Duration::from_millis(100));
        loop {
            ticks.tick().await;
            if listed_in_nacos(&nacos).await == 2 {
                return;
            }
        }
    };
    tokio::time::timeout(common::WAIT, relisted)
        .await
        .expect("the providers register again");
    let reregistered = restarted.elapsed();
    must_reach(&mut status, "both providers listed again", |s| {
        s.providers == 2
    })
    .await;
    load.run_for(STEP).await;

    // Reconciled: the subscription lives on the restarted server, and a provider leaving is seen.
    let before = status.borrow().generation;
    b.terminate().await.unwrap();
    must_reach(&mut status, "a provider leaving after the restart", |s| {
        s.providers == 1 && s.generation > before
    })
    .await;
    load.run_for(STEP).await;
    let tally = load.stop().await;
    tracker.abort();
    let last = status.borrow().clone();
    println!(
        "nacos_faults: providers registered again {reregistered:?} after the restart; fewest \
         providers held {}; empty pushes kept {}; {} calls, {} failed, answered {:?}",
        fewest.load(Ordering::Relaxed),
        last.empty_pushes_kept,
        tally.total(),
        tally.failed.len(),
        tally.answered
    );
    tally.failed.assert_none();
}
