//! Migration parity with Java Dubbo 3.3 (issue 16, item 8): in a mixed set-up of real Java
//! providers of one interface, registered the three ways a Dubbo 3 shop has them during a migration
//! to application-level discovery, a Java 3.3 consumer and rudder reach the same providers under each
//! `migration.step`.
//!
//! | provider | application | `register-mode` | writes |
//! |---|---|---|---|
//! | `app-a` | `migration-parity-a` | `instance` | its instance under `/services/<app>`, the mapping |
//! | `app-b` | `migration-parity-b` | `interface` | its `/dubbo/<interface>/providers` node only |
//! | `app-c` | `migration-parity-c` | `all` (Dubbo's default) | both |
//!
//! So the interface-level view is {B, C} and the application-level view {A, C}. Then C stops
//! (SIGTERM), leaving {B} and {A}: the rudder references follow that live, a fresh Java consumer
//! compares. The Java side is
//! `org.rudder.it.MigrationProbe` (it/java-provider): one Dubbo 3.3 consumer, one reference per
//! setting with the consumer parameter `migration.step` (the key Dubbo's
//! `MigrationRule.getStep(consumerURL)` reads before the global `dubbo.application.migration.step`),
//! which prints the view its `MigrationInvoker` calls through, each view's size and the providers
//! its calls reached. The rudder side is one reference per setting, same parameters, same consumer
//! application. The settings: each step, `APPLICATION_FIRST` with a threshold of 2, and
//! `APPLICATION_FIRST` with `provided-by` naming C alone (so that C stopping empties its
//! application view). Both sides must reach the same set through the same view, and that set must
//! be the one written in [`cases`], so a bug both sides share still fails.
//!
//! Waiting, without sleeps: the rudder references are built first and awaited (on their
//! directories' and subscriptions' notifications) until they list both views in full; by then
//! ZooKeeper holds every node the Java consumer needs (the test reads them back and checks the
//! layout), so the probe starts against a complete registry, and it waits (bounded) until its own
//! views are full before calling.
//!
//! Calls: [`CALLS`] `whoAmI` calls per setting and side, with random load balancing over two
//! providers of equal weight (warm-up off, so Dubbo's weights and rudder's are uniform from the
//! start). A view of two providers misses one of them with probability 2·(1/2)^64 = 2^-63 ≈ 1e-19
//! per setting and side; over the eight such runs < 1e-18, far under 1e-9 (a view of one provider
//! cannot miss it). A missing provider is a migration difference, not bad luck.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::time::{Duration, Instant};

use rudder::{Consumer, DiscoveryView, Reference, SubscriptionStatus};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use zookeeper_client::Client;

use crate::common::changes::reference_reaches;

pub(super) const SERVICE: &str = "org.rudder.it.GreetingService";
/// The consumer application, on both sides (a migration rule would be keyed by it; none is written).
const CONSUMER_APP: &str = "migration-parity-consumer";
/// Calls per setting and side; see the module docs for why 64.
const CALLS: usize = 64;
const READY_WITHIN: Duration = Duration::from_secs(120);
const PROBE_WITHIN: Duration = Duration::from_secs(120);
/// A guard on every awaited condition, not a pause.
const WAIT: Duration = Duration::from_secs(30);

/// The providers: instance name (what `whoAmI` answers), application, `register-mode`.
pub(super) const PROVIDERS: [(&str, &str, &str); 3] = [
    ("app-a", "migration-parity-a", "instance"),
    ("app-b", "migration-parity-b", "interface"),
    ("app-c", "migration-parity-c", "all"),
];

/// One consumer setting, run on both sides.
struct Case {
    label: &'static str,
    parameters: &'static [(&'static str, &'static str)],
    /// The view Dubbo 3.3 calls through and the providers that reaches, as Dubbo's source says:
    /// with all three up ([`ALL_UP`]), then with C stopped ([`C_STOPPED`]).
    expect: [(DiscoveryView, &'static [&'static str]); 2],
}

/// The settings and what Dubbo 3.3 does with each (`MigrationInvoker`, `MigrationRuleHandler`,
/// `DefaultMigrationAddressComparator`).
fn cases() -> Vec<Case> {
    use DiscoveryView::{Application, Interface};
    vec![
        Case {
            // migrateToForceInterfaceInvoker: the interface-level invoker only, no comparison.
            label: "force-interface",
            parameters: &[("migration.step", "FORCE_INTERFACE")],
            expect: [(Interface, &["app-b", "app-c"]), (Interface, &["app-b"])],
        },
        Case {
            // migrateToApplicationFirstInvoker subscribes to both and calcPreferredInvoker asks the
            // comparator on every notification: both views have addresses, so it is
            // application / interface (2/2, then 1/1) >= threshold, whose default is 0.0
            // (dubbo.application.migration.threshold): any application-level address wins.
            label: "application-first",
            parameters: &[("migration.step", "APPLICATION_FIRST")],
            expect: [
                (Application, &["app-a", "app-c"]),
                (Application, &["app-a"]),
            ],
        },
        Case {
            // The same, with the consumer's `migration.threshold` (what MigrationRule.getThreshold
            // falls back to when no rule sets one): 2/2 = 1 < 2, then 1/1 < 2, keeps the
            // interface-level view.
            label: "application-first-threshold-2",
            parameters: &[
                ("migration.step", "APPLICATION_FIRST"),
                ("migration.threshold", "2"),
            ],
            expect: [(Interface, &["app-b", "app-c"]), (Interface, &["app-b"])],
        },
        Case {
            // `provided-by` names the applications instead of the mapping (getMappingByUrl): the
            // application view is {C} (1/2 >= 0: it wins); once C stops it is empty, and "no
            // application-level address" keeps the interface view, {B}.
            label: "application-first-provided-by-c",
            parameters: &[
                ("migration.step", "APPLICATION_FIRST"),
                ("provided-by", "migration-parity-c"),
            ],
            expect: [(Application, &["app-c"]), (Interface, &["app-b"])],
        },
        Case {
            // migrateToForceApplicationInvoker: the application-level invoker only (no interface
            // invoker exists, so no comparison either).
            label: "force-application",
            parameters: &[("migration.step", "FORCE_APPLICATION")],
            expect: [
                (Application, &["app-a", "app-c"]),
                (Application, &["app-a"]),
            ],
        },
    ]
}

impl Case {
    fn parameter(&self, key: &str) -> Option<&'static str> {
        self.parameters
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, value)| *value)
    }

    fn step(&self) -> &'static str {
        self.parameter("migration.step")
            .unwrap_or("APPLICATION_FIRST")
    }

    /// The addresses each view lists in `phase` (whether or not the setting follows that view):
    /// interface level, every running provider not in `instance` mode; application level, every
    /// running one not in `interface` mode whose application the setting follows.
    fn view_sizes(&self, phase: &Phase) -> (usize, usize) {
        let provided_by: Option<Vec<&str>> = self
            .parameter("provided-by")
            .map(|apps| apps.split(',').map(str::trim).collect());
        let running = PROVIDERS
            .iter()
            .filter(|(instance, _, _)| phase.running.contains(instance));
        let interface = running
            .clone()
            .filter(|(_, _, mode)| *mode != "instance")
            .count();
        let application = running
            .filter(|(_, app, mode)| {
                *mode != "interface" && provided_by.as_ref().is_none_or(|apps| apps.contains(app))
            })
            .count();
        (interface, application)
    }
}

/// What the Java probe printed for one setting.
#[derive(Debug, Default)]
struct JavaRun {
    /// Addresses in each view; `None` for a view the reference does not subscribe to.
    interface: Option<usize>,
    application: Option<usize>,
    /// `interface`, `application` or `none`.
    current: String,
    outcomes: BTreeMap<String, usize>,
}

/// Which providers run.
pub(super) struct Phase {
    pub(super) name: &'static str,
    /// Which of each case's `expect` applies.
    index: usize,
    pub(super) running: &'static [&'static str],
}

/// All three up: the interface-level view is {B, C}, the application-level one {A, C}.
const ALL_UP: Phase = Phase {
    name: "all up",
    index: 0,
    running: &["app-a", "app-b", "app-c"],
};
/// C stopped (SIGTERM: Dubbo's shutdown hook removes its provider node and its instance): {B} and
/// {A}. The rudder references follow the change live; the Java probe is a fresh consumer.
const C_STOPPED: Phase = Phase {
    name: "C stopped",
    index: 1,
    running: &["app-a", "app-b"],
};

#[tokio::test]
async fn java_dubbo_and_rudder_reach_the_same_providers_under_each_migration_step() {
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let connect = zookeeper.connect_string();
    let setup = Setup {
        zookeeper: connect.clone(),
        registry: format!("zookeeper://{connect}"),
        java_registry: None,
    };
    run_parity(&setup, |phase, ports| {
        assert_registry_layout(&connect, ports, phase)
    })
    .await;
}

/// Where the providers register and both consumers look.
pub(super) struct Setup {
    /// The ZooKeeper connect string the Java peers get (unused when `java_registry` is set).
    pub(super) zookeeper: String,
    /// The registry URL of the rudder references.
    pub(super) registry: String,
    /// The registry URL of the Java peers, instead of ZooKeeper's (`RUDDER_REGISTRY_ADDRESS`).
    pub(super) java_registry: Option<String>,
}

/// Starts the three providers, compares both sides with all up and with C stopped, and fails on a
/// difference. `layout` reads back what the running providers wrote in the registry and asserts it
/// is what the phase says (a check per registry kind).
pub(super) async fn run_parity<F, Fut>(setup: &Setup, layout: F)
where
    F: Fn(&'static Phase, [u16; 3]) -> Fut,
    Fut: Future<Output = ()>,
{
    let started = Instant::now();
    let (a, b, mut c) = tokio::join!(
        provider(setup, PROVIDERS[0]),
        provider(setup, PROVIDERS[1]),
        provider(setup, PROVIDERS[2]),
    );
    let ports = [a.port(), b.port(), c.port()];
    eprintln!(
        "providers ready in {:?}: ports {ports:?}",
        started.elapsed()
    );

    let consumer = Consumer::builder()
        .application(CONSUMER_APP)
        .seed(16)
        .build();
    let cases = cases();
    let mut references = Vec::new();
    for case in &cases {
        let mut builder = consumer
            .reference(SERVICE)
            .registry(&setup.registry)
            .loadbalance("random")
            .retries(0)
            .timeout(Duration::from_secs(5));
        for (key, value) in case.parameters {
            builder = builder.parameter(key, value);
        }
        references.push(builder.build().await.expect("rudder reference"));
    }

    let mut report = Vec::new();
    let mut mismatches = Vec::new();
    compare(
        &ALL_UP,
        setup,
        layout(&ALL_UP, ports),
        &cases,
        &references,
        &mut report,
        &mut mismatches,
    )
    .await;
    c.terminate().await.expect("app-c stops");
    compare(
        &C_STOPPED,
        setup,
        layout(&C_STOPPED, ports),
        &cases,
        &references,
        &mut report,
        &mut mismatches,
    )
    .await;

    eprintln!("{}", report.join("\n"));
    eprintln!("migration parity took {:?} in all", started.elapsed());
    assert!(
        mismatches.is_empty(),
        "rudder and Java Dubbo 3.3 differ:\n{}",
        mismatches.join("\n")
    );
    drop(references);
    consumer.shutdown().await;
    drop((a, b, c));
}

/// Waits until the rudder references list `phase`'s views in full, checks ZooKeeper holds what
/// `phase` says, runs the Java probe and calls through each reference; a line per case and side
/// into `report`, every difference from the other side or from the expectation into `mismatches`.
async fn compare(
    phase: &Phase,
    setup: &Setup,
    layout: impl Future<Output = ()>,
    cases: &[Case],
    references: &[Reference],
    report: &mut Vec<String>,
    mismatches: &mut Vec<String>,
) {
    for (case, reference) in cases.iter().zip(references) {
        let what = format!(
            "{}: rudder's {} reference to list its views in full",
            phase.name, case.label
        );
        let sizes = case.view_sizes(phase);
        reference_reaches(reference, &what, WAIT, || views_full(reference, sizes)).await;
    }
    layout.await;

    let probe_began = Instant::now();
    let java = run_probe(setup, cases, phase).await;
    eprintln!(
        "{}: Java probe took {:?}",
        phase.name,
        probe_began.elapsed()
    );

    for (case, reference) in cases.iter().zip(references) {
        let label = format!("{} / {}", phase.name, case.label);
        let java_run = java
            .get(case.label)
            .unwrap_or_else(|| panic!("the probe printed nothing for {label}"));
        let rudder_outcomes = call_rudder(reference).await;
        let seen = status(reference);
        let (view, expect) = case.expect[phase.index];
        let expected: BTreeSet<String> = expect.iter().map(|who| (*who).to_owned()).collect();
        let java_set: BTreeSet<String> = java_run.outcomes.keys().cloned().collect();
        let rudder_set: BTreeSet<String> = rudder_outcomes.keys().cloned().collect();
        let java_view = java_run.current.as_str();
        let rudder_view = seen.view.to_string();
        let java_sizes = (java_run.interface, java_run.application);
        let rudder_sizes = subscribed_sizes(case, &seen);
        report.push(format!(
            "{label:<44} java {java_view:<11} {java_sizes:?} {:?}\n{:<44} rudder {rudder_view:<9} \
             {rudder_sizes:?} {rudder_outcomes:?} ({})",
            java_run.outcomes, "", seen.migration_decision
        ));
        if java_set != expected || rudder_set != expected {
            mismatches.push(format!(
                "{label}: providers reached: java {java_set:?}, rudder {rudder_set:?}, \
                 expected {expected:?}"
            ));
        }
        if java_view != view.to_string() || seen.view != view {
            mismatches.push(format!(
                "{label}: view: java {java_view}, rudder {rudder_view}, expected {view}"
            ));
        }
        if java_sizes != rudder_sizes {
            mismatches.push(format!(
                "{label}: view sizes (interface, application): java {java_sizes:?}, \
                 rudder {rudder_sizes:?}"
            ));
        }
    }
}

async fn provider(setup: &Setup, (instance, application, mode): (&str, &str, &str)) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, &setup.zookeeper, instance);
    config.registry = setup.java_registry.clone();
    config.application = Some(application.to_owned());
    config.register_mode = Some(mode.to_owned());
    // Warm-up off: both sides weigh the providers equally from the start (see the module docs).
    config.warmup_ms = Some(0);
    Peer::start(config, READY_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

fn status(reference: &Reference) -> SubscriptionStatus {
    reference.registry_status()[0]
        .clone()
        .expect("a registry reference has a subscription status")
}

/// Whether every view the reference follows lists what it should, `(interface, application)`,
/// and the directory holds the chosen view's providers.
fn views_full(reference: &Reference, (interface, application): (usize, usize)) -> bool {
    let seen = status(reference);
    let step = seen.migration_step.as_str();
    let interface_full = step == "FORCE_APPLICATION" || seen.interface_providers == interface;
    let application_full = step == "FORCE_INTERFACE" || seen.application_providers == application;
    let chosen = match seen.view {
        DiscoveryView::Application => application,
        _ => interface,
    };
    interface_full && application_full && reference.providers().len() == chosen
}

/// The view sizes as the probe reports them: `None` for a view the setting does not follow.
fn subscribed_sizes(case: &Case, seen: &SubscriptionStatus) -> (Option<usize>, Option<usize>) {
    let step = case.step();
    (
        (step != "FORCE_APPLICATION").then_some(seen.interface_providers),
        (step != "FORCE_INTERFACE").then_some(seen.application_providers),
    )
}

/// Reads back what the running providers wrote: the set-up the module docs describe, so that the
/// comparison is about the views, not about a provider that registered otherwise.
async fn assert_registry_layout(connect: &str, ports: [u16; 3], phase: &Phase) {
    let zk = Client::connect(connect).await.expect("reader connects");
    let running = |i: usize| phase.running.contains(&PROVIDERS[i].0);
    let mut interface_ports: Vec<u16> = zk
        .list_children(&format!("/dubbo/{SERVICE}/providers"))
        .await
        .expect("interface-level providers")
        .iter()
        .map(|node| {
            rudder_common::url::DubboUrl::from_node_name(node)
                .unwrap_or_else(|e| panic!("provider node {node}: {e}"))
                .port()
        })
        .collect();
    interface_ports.sort_unstable();
    let mut want: Vec<u16> = (0..3)
        .filter(|&i| running(i) && PROVIDERS[i].2 != "instance")
        .map(|i| ports[i])
        .collect();
    want.sort_unstable();
    assert_eq!(
        interface_ports, want,
        "{}: interface-level providers",
        phase.name
    );
    for (i, (_, application, mode)) in PROVIDERS.iter().enumerate() {
        let instances = zk
            .list_children(&format!("/services/{application}"))
            .await
            .unwrap_or_default();
        let want: Vec<String> = (running(i) && *mode != "interface")
            .then(|| format!("127.0.0.1:{}", ports[i]))
            .into_iter()
            .collect();
        assert_eq!(
            instances, want,
            "{}: instances of {application}",
            phase.name
        );
    }
    // The mapping outlives a provider: Dubbo never removes an application from it.
    let (mapping, _) = zk
        .get_data(&format!("/dubbo/mapping/{SERVICE}"))
        .await
        .expect("the interface-application mapping");
    let apps: BTreeSet<String> = String::from_utf8_lossy(&mapping)
        .split(',')
        .map(|app| app.trim().to_owned())
        .filter(|app| !app.is_empty())
        .collect();
    let want: BTreeSet<String> = [PROVIDERS[0].1, PROVIDERS[2].1]
        .iter()
        .map(|app| (*app).to_owned())
        .collect();
    assert_eq!(
        apps, want,
        "A and C map the interface to their applications"
    );
}

/// Runs the Java probe over every case, in order; what it printed for each.
async fn run_probe(setup: &Setup, cases: &[Case], phase: &Phase) -> BTreeMap<String, JavaRun> {
    let lines: Vec<String> = cases
        .iter()
        .map(|case| {
            let parameters: Vec<String> = case
                .parameters
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let (interface, application) = case.view_sizes(phase);
            format!(
                "{}\t{}\t{interface}\t{application}",
                case.label,
                parameters.join("&")
            )
        })
        .collect();
    let references = lines.join("\n");
    let calls = CALLS.to_string();
    let await_ms = WAIT.as_millis().to_string();
    let mut env = vec![
        ("RUDDER_ZK_ADDRESS", setup.zookeeper.as_str()),
        ("RUDDER_APPLICATION", CONSUMER_APP),
        ("RUDDER_PROBE_REFERENCES", references.as_str()),
        ("RUDDER_PROBE_CALLS", calls.as_str()),
        ("RUDDER_PROBE_AWAIT_MS", await_ms.as_str()),
    ];
    if let Some(registry) = &setup.java_registry {
        env.push(("RUDDER_REGISTRY_ADDRESS", registry.as_str()));
    }
    let out = Peer::run_java("org.rudder.it.MigrationProbe", &env, PROBE_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.lines().any(|l| l == "DONE"),
        "the probe did not finish:\n{out}"
    );
    parse_probe(&out)
}

/// `VIEWS <label> interface=<n|-> application=<n|-> current=<view>` and
/// `RESULT <label> <outcome>=<count>,...` lines, by label.
fn parse_probe(out: &str) -> BTreeMap<String, JavaRun> {
    let mut runs: BTreeMap<String, JavaRun> = BTreeMap::new();
    for line in out.lines() {
        if let Some(views) = line.strip_prefix("VIEWS ") {
            let mut fields = views.split(' ');
            let label = fields.next().unwrap_or_default();
            let run = runs.entry(label.to_owned()).or_default();
            for field in fields {
                let (key, value) = field
                    .split_once('=')
                    .unwrap_or_else(|| panic!("bad VIEWS field {field:?} in {line:?}"));
                let size = || (value != "-").then(|| value.parse().expect("a view size"));
                match key {
                    "interface" => run.interface = size(),
                    "application" => run.application = size(),
                    "current" => run.current = value.to_owned(),
                    _ => panic!("unknown VIEWS field {key} in {line:?}"),
                }
            }
        } else if let Some(result) = line.strip_prefix("RESULT ") {
            let (label, outcomes) = result.split_once(' ').unwrap_or((result, ""));
            let run = runs.entry(label.to_owned()).or_default();
            for outcome in outcomes.split(',').filter(|o| !o.is_empty()) {
                let (what, count) = outcome
                    .rsplit_once('=')
                    .unwrap_or_else(|| panic!("bad outcome {outcome:?}"));
                let count = count
                    .parse()
                    .unwrap_or_else(|_| panic!("bad count in {outcome:?}"));
                run.outcomes.insert(what.to_owned(), count);
            }
        }
    }
    runs
}

/// [`CALLS`] `whoAmI` calls through rudder; which instance answered, or the error, to how many.
async fn call_rudder(reference: &Reference) -> BTreeMap<String, usize> {
    let mut outcomes = BTreeMap::new();
    for _ in 0..CALLS {
        let outcome = match reference
            .call::<rudder::Value, _>("whoAmI", &[], Vec::new())
            .await
        {
            Ok(answer) => answer
                .as_str()
                .map_or_else(|| format!("unexpected:{answer:?}"), str::to_owned),
            Err(e) => format!("error:{e}"),
        };
        *outcomes.entry(outcome).or_default() += 1;
    }
    outcomes
}
