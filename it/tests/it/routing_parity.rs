//! Routing parity with Java Dubbo 3.3 (issue #11 part 5): the Java consumer and rudder, subscribed to the
//! same four Java providers through one ZooKeeper (testcontainers), under the same rules written into
//! ZooKeeper's config-center nodes in the YAML dubbo-admin writes, reach the same set of providers for
//! the same calls.
//!
//! The Java side is `org.rudder.it.RoutingProbe` (it/java-provider), a fresh Dubbo 3.3 consumer per
//! scenario: Dubbo's routers read their rule node when the reference starts, so each probe runs after
//! the scenario's rules are written and read back from ZooKeeper. The rudder side is one reference for
//! the whole test, which must show the scenario's rules in `explain` before it is called.
//!
//! Calls: every call spec is made [`CALLS`] times on each side with random load balancing over equal
//! weights (rudder's made uniform, as Dubbo's consumer sees them, by a clock past the providers'
//! warm-up). A spec allowing k providers misses one of them with probability at most k·(1 - 1/k)^64:
//! 2^-63 for the specs allowing two, 4·0.75^64 ≈ 4·10^-8 for the one allowing all four. A missing
//! provider is a routing difference, not bad luck.
//!
//! Java is required: without `java` or `mvn` on PATH the test fails, saying what is missing. Where
//! Java cannot be installed, `RUDDER_SKIP_JAVA=1` turns that failure into a skip, printed on stderr
//! as `routing parity SKIPPED` (the test then passes having compared nothing). The variable only
//! excuses a missing Java: with Java present, the test runs whatever it says.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rudder::extension::{Clock, ManualClock, SystemClock};
use rudder::rules::RuleKey;
use rudder::Invocation;
use rudder::{CallError, Consumer, Reference, RpcErrorKind, Value};
use rudder_it::{Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use zookeeper_client::{Acls, Client, CreateMode};

use crate::common::changes::reference_reaches;

pub(super) const SERVICE: &str = "org.rudder.it.GreetingService";
/// The providers' application: the tag router reads `<provider app>.tag-router`.
pub(super) const PROVIDER_APP: &str = "parity-provider";
/// The consumers' application, on both sides: `<consumer app>.condition-router` applies to them.
pub(super) const CONSUMER_APP: &str = "parity-app";
/// Calls per spec and side; see the module docs for why 64.
const CALLS: usize = 64;
/// Where Dubbo reads governance rules when the registry doubles as config center (spec-2 §1.1).
const CONFIG_ROOT: &str = "/dubbo/config/dubbo";
pub(super) const READY_WITHIN: Duration = Duration::from_secs(120);
const PROBE_WITHIN: Duration = Duration::from_secs(180);
/// A guard on every awaited condition, not a pause.
pub(super) const WAIT: Duration = Duration::from_secs(30);

/// Until rudder references read the config center by themselves, the test hands the rudder side the
/// same YAML it wrote into ZooKeeper. When they do, set this to `false`: everything else (waiting for
/// the rule to show in `explain`) already treats the rudder side as a config-center reader.
const FEED_RULES_BY_HAND: bool = false;

pub(super) const NO_PROVIDER: &str = "error:no-provider";
/// `1` where Java cannot be had: a missing JDK or Maven then skips the test (loudly) instead of
/// failing it. Any other value, or none, and a missing Java is a failure.
const SKIP_JAVA: &str = "RUDDER_SKIP_JAVA";

/// The four providers: instance name and static `dubbo.tag`.
const PROVIDERS: [(&str, Option<&str>); 4] = [
    ("plain-1", None),
    ("plain-2", None),
    ("gray-1", Some("gray")),
    ("gray-2", Some("gray")),
];

/// One kind of call, made [`CALLS`] times on each side.
#[derive(Debug, Clone)]
pub(super) struct CallSpec {
    pub(super) label: &'static str,
    /// `whoAmI` or `sayHello`.
    method: &'static str,
    attachments: Vec<(&'static str, &'static str)>,
    /// What Dubbo 3.3's rules (spec-2 §2.2.3, §2.3.3) say the call reaches: a sanity check that the
    /// scenario tests what it claims. Parity is the Java and rudder sets being equal.
    expect: Vec<&'static str>,
    /// What Dubbo 3.3 reaches instead, when it differs because the providers are on loopback: its
    /// `NetUtils.matchIpRange` takes a loopback host for IPv6 (`isValidV4Address` is false for
    /// loopback addresses) and throws on every `ip:port` pattern, so no dynamic tag address, listed or
    /// computed by `match`, ever matches a provider on 127.0.0.1. rudder matches them.
    java_on_loopback: Option<Vec<&'static str>>,
}

pub(super) fn who(
    label: &'static str,
    attachments: &[(&'static str, &'static str)],
    expect: &[&'static str],
) -> CallSpec {
    CallSpec {
        label,
        method: "whoAmI",
        attachments: attachments.to_vec(),
        expect: expect.to_vec(),
        java_on_loopback: None,
    }
}

pub(super) fn hello(
    label: &'static str,
    attachments: &[(&'static str, &'static str)],
    expect: &[&'static str],
) -> CallSpec {
    CallSpec {
        method: "sayHello",
        ..who(label, attachments, expect)
    }
}

impl CallSpec {
    /// Dubbo 3.3 reaches `java` instead, because of its loopback quirk (see `java_on_loopback`).
    fn loopback_quirk(mut self, java: &[&'static str]) -> CallSpec {
        self.java_on_loopback = Some(java.to_vec());
        self
    }

    /// The probe's spec line: `label<TAB>method<TAB>argument<TAB>k=v&k=v` (a tag may hold `|`).
    fn probe_line(&self) -> String {
        let attachments: Vec<String> = self
            .attachments
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        format!(
            "{}\t{}\tparity\t{}",
            self.label,
            self.method,
            attachments.join("&")
        )
    }

    fn invocation(&self) -> Invocation {
        let (types, arguments) = match self.method {
            "sayHello" => (
                vec!["java.lang.String".to_owned()],
                vec![Value::from("parity")],
            ),
            _ => (Vec::new(), Vec::new()),
        };
        let mut invocation = Invocation::new(self.method, types, arguments);
        for (key, value) in &self.attachments {
            invocation.set_attachment(key, value);
        }
        invocation
    }
}

/// A rule as written into the config center: its key (the node name) and its YAML.
#[derive(Debug, Clone)]
pub(super) struct Rule {
    pub(super) key: RuleKey,
    pub(super) yaml: String,
    /// A condition line the rule holds (how `explain` names its steps); `None` for a tag rule.
    first_line: Option<String>,
}

pub(super) struct Scenario<R = Rule> {
    pub(super) name: &'static str,
    pub(super) rules: Vec<R>,
    pub(super) specs: Vec<CallSpec>,
}

/// Outcome (instance name or error kind) to how many calls had it.
pub(super) type Outcomes = BTreeMap<String, usize>;

#[tokio::test]
async fn java_dubbo_and_rudder_reach_the_same_providers_under_the_same_rules() {
    if skip_without_java("routing parity") {
        return;
    }
    let started = Instant::now();
    let zookeeper = ZooKeeperContainer::start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let connect = zookeeper.connect_string();
    let (p1, p2, p3, p4) = tokio::join!(
        provider(&connect, PROVIDERS[0]),
        provider(&connect, PROVIDERS[1]),
        provider(&connect, PROVIDERS[2]),
        provider(&connect, PROVIDERS[3]),
    );
    let ports = [p1.port(), p2.port(), p3.port(), p4.port()];
    eprintln!(
        "providers ready in {:?}: ports {ports:?}",
        started.elapsed()
    );

    let writer = Client::connect(&connect)
        .await
        .expect("rule writer connects");
    let registry = format!("zookeeper://{connect}");
    // An hour past the providers' start: warm-up is over, so random load balancing is uniform, as it is
    // for Dubbo's consumer (which drops the provider's start timestamp).
    let later: Arc<dyn Clock> = Arc::new(ManualClock::new(SystemClock.now_millis() + 3_600_000));
    let consumer = Consumer::builder()
        .application(CONSUMER_APP)
        .clock(later)
        .seed(11)
        .build();
    let rudder = consumer
        .reference(SERVICE)
        .registry(&registry)
        .loadbalance("random")
        .retries(0)
        .timeout(std::time::Duration::from_millis(5000))
        .build()
        .await
        .expect("rudder reference");
    wait_for(&rudder, "rudder to list the four providers", || {
        rudder.snapshot().providers().len() == 4
    })
    .await;

    let mut findings = Findings::default();
    for scenario in scenarios(ports) {
        findings
            .run(
                &scenario,
                &rudder,
                async |rule| publish(&writer, &rudder, rule).await,
                async |specs| run_probe(&connect, None, specs).await,
                async |rule| withdraw(&writer, &rudder, rule).await,
            )
            .await;
    }
    findings.assert_none("routing parity", started);
    drop((p1, p2, p3, p4));
}

/// The scenarios, for providers on `ports` (in [`PROVIDERS`] order).
fn scenarios(ports: [u16; 4]) -> Vec<Scenario> {
    let [plain_1, plain_2, gray_1, gray_2] = ports;
    let gray = ("dubbo.tag", "gray");
    let force = ("dubbo.force.tag", "true");
    let north = ("region", "north");
    let plain: &[&str] = &["plain-1", "plain-2"];
    vec![
        Scenario {
            name: "static tags",
            rules: Vec::new(),
            specs: vec![
                who("untagged", &[], plain),
                who("gray", &[gray], &["gray-1", "gray-2"]),
                who("gray-forced", &[gray, force], &["gray-1", "gray-2"]),
                who("blue-fallback", &[("dubbo.tag", "blue")], plain),
                who("blue-forced", &[("dubbo.tag", "blue"), force], &[NO_PROVIDER]),
            ],
        },
        Scenario {
            // A valid rule none of whose addresses is live: Dubbo's fallbacks under a dynamic rule,
            // which loopback providers cannot disturb (see `loopback_quirk`).
            name: "dynamic tags, dead",
            rules: vec![tag_rule(
                false,
                "- addresses:\n  - 10.255.0.1:20880\n  name: blue\n\
                 - match:\n  - key: rudder.instance\n    value:\n      exact: nobody\n  name: canary\n",
            )],
            specs: vec![
                who("untagged", &[], plain),
                who("gray-static", &[gray], &["gray-1", "gray-2"]),
                who("blue-fallback", &[("dubbo.tag", "blue")], plain),
                who("blue-forced", &[("dubbo.tag", "blue"), force], &[NO_PROVIDER]),
                who("canary-unset", &[("dubbo.tag", "canary")], plain),
            ],
        },
        Scenario {
            // `force: true` in the rule: a tag the rule names but no live provider has fails the call,
            // even over a provider statically tagged with it.
            name: "dynamic tags, forced",
            rules: vec![tag_rule(true, "- addresses:\n  - 10.255.0.2:20880\n  name: gray\n")],
            specs: vec![
                who("untagged", &[], plain),
                who("gray", &[gray], &[NO_PROVIDER]),
                who("blue-fallback", &[("dubbo.tag", "blue")], plain),
            ],
        },
        Scenario {
            // A CIDR block is the one address form Dubbo matches on loopback (its CIDR path does not
            // classify the host): every provider carries the dynamic tag `local`.
            name: "dynamic tags, CIDR",
            rules: vec![tag_rule(false, "- addresses:\n  - 127.0.0.1/32\n  name: local\n")],
            specs: vec![
                who("untagged", &[], &[NO_PROVIDER]),
                who("local", &[("dubbo.tag", "local")], &["gray-1", "gray-2", "plain-1", "plain-2"]),
                who("gray-static", &[gray], &["gray-1", "gray-2"]),
                who("blue-failover", &[("dubbo.tag", "blue")], &[NO_PROVIDER]),
            ],
        },
        Scenario {
            name: "dynamic tags, live",
            rules: vec![tag_rule(
                false,
                &format!(
                    "- addresses:\n  - 127.0.0.1:{plain_2}\n  name: blue\n\
                     - addresses:\n  - 127.0.0.1:{gray_2}\n  name: gray\n\
                     - match:\n  - key: rudder.instance\n    value:\n      exact: gray-1\n  name: canary\n"
                ),
            )],
            specs: vec![
                who("untagged", &[], &["plain-1"]).loopback_quirk(plain),
                who("blue", &[("dubbo.tag", "blue")], &["plain-2"]).loopback_quirk(plain),
                who("gray", &[gray], &["gray-2"]).loopback_quirk(plain),
                who("canary", &[("dubbo.tag", "canary")], &["gray-1"]).loopback_quirk(plain),
                who("gray-team", &[("dubbo.tag", "gray|team1")], &["gray-2"]).loopback_quirk(plain),
                who("red-fallback", &[("dubbo.tag", "red")], &["plain-1"]).loopback_quirk(plain),
                who("red-forced", &[("dubbo.tag", "red"), force], &[NO_PROVIDER]),
            ],
        },
        Scenario {
            name: "condition region",
            rules: vec![service_condition(
                true,
                &[
                    &format!("method = sayHello => port = {plain_1},{gray_1}"),
                    &format!("method = whoAmI & attachments[region] = north => port = {plain_2},{gray_2}"),
                ],
            )],
            specs: vec![
                hello("hello", &[], &["plain-1"]),
                hello("hello-gray", &[gray], &["gray-1"]),
                hello("hello-north", &[north], &["plain-1"]),
                who("who", &[], plain),
                who("who-north", &[north], &["plain-2"]),
                who("who-north-gray", &[north, gray], &["gray-2"]),
            ],
        },
        Scenario {
            name: "unforced, no match",
            // force: false and a then-part no provider matches: the rule is ignored for the call.
            rules: vec![app_condition(false, &["method = sayHello => port = 1"])],
            specs: vec![
                hello("hello", &[], plain),
                hello("hello-gray", &[gray], &["gray-1", "gray-2"]),
                who("who", &[], plain),
            ],
        },
        Scenario {
            name: "forced, no match",
            rules: vec![service_condition(true, &["method = sayHello => port = 2"])],
            specs: vec![hello("hello", &[], &[NO_PROVIDER]), who("who", &[], plain)],
        },
    ]
}

/// dubbo-admin's TagRoute for the providers' application, as SnakeYAML's `dumpAsMap` writes it (keys
/// sorted, nulls left out, sequences not indented under their key); `tags` is the list's YAML.
pub(super) fn tag_rule(force: bool, tags: &str) -> Rule {
    Rule {
        key: RuleKey::tag(PROVIDER_APP),
        yaml: format!(
            "configVersion: v3.0\nenabled: true\nforce: {force}\nkey: {PROVIDER_APP}\npriority: 0\n\
             runtime: false\ntags:\n{tags}"
        ),
        first_line: None,
    }
}

/// dubbo-admin's RoutingRule for a service (`scope: service`, key the interface), as SnakeYAML dumps it.
pub(super) fn service_condition(force: bool, conditions: &[&str]) -> Rule {
    condition_rule(
        RuleKey::service_condition(SERVICE, "", ""),
        "service",
        SERVICE,
        force,
        conditions,
    )
}

/// dubbo-admin's RoutingRule for an application (`scope: application`, key the consumer application).
pub(super) fn app_condition(force: bool, conditions: &[&str]) -> Rule {
    condition_rule(
        RuleKey::app_condition(CONSUMER_APP),
        "application",
        CONSUMER_APP,
        force,
        conditions,
    )
}

fn condition_rule(key: RuleKey, scope: &str, name: &str, force: bool, conditions: &[&str]) -> Rule {
    let lines: String = conditions.iter().map(|c| format!("- {c}\n")).collect();
    Rule {
        key,
        yaml: format!(
            "conditions:\n{lines}configVersion: v3.0\nenabled: true\nforce: {force}\nkey: {name}\n\
             priority: 0\nruntime: false\nscope: {scope}\n"
        ),
        first_line: conditions.first().map(|c| (*c).to_owned()),
    }
}

async fn provider(zookeeper: &str, (instance, tag): (&str, Option<&str>)) -> Peer {
    let mut config = PeerConfig::new(PeerKind::Java, zookeeper, instance);
    config.tag = tag.map(str::to_owned);
    config.application = Some(PROVIDER_APP.to_owned());
    Peer::start(config, READY_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Whether the test named `test` is to be skipped: `java` or `mvn` is missing and [`SKIP_JAVA`] is
/// `1` (said on stderr as `<test> SKIPPED`). With Java missing and no such setting, fails the test.
pub(super) fn skip_without_java(test: &str) -> bool {
    let Some(missing) = missing_java_tool() else {
        return false;
    };
    let install = "Install a JDK 17 and Maven \
         (scripts/peers/build-java-provider.sh does it with apt-get)";
    assert!(
        std::env::var_os(SKIP_JAVA).is_some_and(|v| v == "1"),
        "{test} needs Java: {missing}. {install}, or set {SKIP_JAVA}=1 to skip it."
    );
    // Straight to the stderr handle: libtest hides `eprintln!` output of a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "\n{test} SKIPPED ({SKIP_JAVA}=1): {missing}. {install}; nothing was compared."
    );
    true
}

/// `Some(what is missing)` when this machine cannot run Java Dubbo at all. Anything else that goes
/// wrong with the Java side (a failed build, a crashing probe) fails the test.
fn missing_java_tool() -> Option<String> {
    for tool in ["java", "mvn"] {
        match std::process::Command::new(tool)
            .arg("-version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
        {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Some(format!("`{tool}` is not installed (not on PATH)"));
            }
            _ => {}
        }
    }
    None
}

/// Writes `rule` into the config center as dubbo-admin does (a persistent node), reads it back, and
/// waits until the rudder side routes by it.
async fn publish(writer: &Client, rudder: &Reference, rule: &Rule) {
    let path = format!("{CONFIG_ROOT}/{}", rule.key.name);
    let persistent = CreateMode::Persistent.with_acls(Acls::anyone_all());
    writer
        .mkdir(CONFIG_ROOT, &persistent)
        .await
        .expect("mkdir config root");
    writer
        .create(&path, rule.yaml.as_bytes(), &persistent)
        .await
        .expect("create rule node");
    let (stored, _) = writer.get_data(&path).await.expect("read rule node back");
    assert_eq!(
        stored,
        rule.yaml.as_bytes(),
        "ZooKeeper holds the rule as written"
    );
    if FEED_RULES_BY_HAND {
        rudder
            .set_rule(rule.key.clone(), Some(&rule.yaml))
            .expect("rudder parses the rule");
    }
    wait_for(
        rudder,
        &format!("rudder to route by {}", rule.key.name),
        || in_force(rudder, rule),
    )
    .await;
}

/// Deletes `rule`'s node and waits until the rudder side no longer routes by it.
async fn withdraw(writer: &Client, rudder: &Reference, rule: &Rule) {
    let path = format!("{CONFIG_ROOT}/{}", rule.key.name);
    writer.delete(&path, None).await.expect("delete rule node");
    if FEED_RULES_BY_HAND {
        rudder
            .set_rule(rule.key.clone(), None)
            .expect("rudder deletes the rule");
    }
    wait_for(rudder, &format!("rudder to drop {}", rule.key.name), || {
        !in_force(rudder, rule)
    })
    .await;
}

/// Whether `explain` shows a step of `rule` (by its key, and its first condition line if any) for a
/// plain `whoAmI`. Routing stops at a step that keeps nothing, but for that call only a tag rule ever
/// does, and the tag router is always the first step, so the rule's own step is always reached.
pub(super) fn in_force(rudder: &Reference, rule: &Rule) -> bool {
    let why = rudder.explain(&Invocation::new("whoAmI", Vec::new(), Vec::new()));
    why.steps.iter().any(|step| {
        *step.rule.rule == *rule.key.name
            && rule
                .first_line
                .as_deref()
                .is_none_or(|line| step.rule.detail.trim() == line)
    })
}

/// Waits until `condition` holds for `rudder`, checked on each snapshot or rule change; panics after
/// [`WAIT`] saying what did not happen.
pub(super) async fn wait_for(rudder: &Reference, what: &str, condition: impl FnMut() -> bool) {
    reference_reaches(rudder, what, WAIT, condition).await;
}

/// What the scenarios of a parity test found: one line per spec (`report`), and one entry (with
/// rudder's `explain`) for each spec either side did not reach as expected (`mismatches`).
#[derive(Default)]
pub(super) struct Findings {
    report: Vec<String>,
    mismatches: Vec<String>,
}

impl Findings {
    /// One scenario: `publish` each rule (returning once rudder routes by it), the Java probe's calls
    /// (`probe`), the same calls through `rudder`, compared; then `withdraw` each rule.
    pub(super) async fn run<R>(
        &mut self,
        scenario: &Scenario<R>,
        rudder: &Reference,
        publish: impl AsyncFn(&R),
        probe: impl AsyncFn(&[CallSpec]) -> BTreeMap<String, Outcomes>,
        withdraw: impl AsyncFn(&R),
    ) {
        let begun = Instant::now();
        for rule in &scenario.rules {
            publish(rule).await;
        }
        let java = probe(&scenario.specs).await;
        let java_took = begun.elapsed();
        self.compare(scenario.name, &scenario.specs, &java, rudder)
            .await;
        for rule in &scenario.rules {
            withdraw(rule).await;
        }
        eprintln!(
            "scenario {} took {:?} (Java probe {java_took:?})",
            scenario.name,
            begun.elapsed()
        );
    }

    /// Prints the report and asserts that every spec went as expected on both sides.
    pub(super) fn assert_none(self, test: &str, started: Instant) {
        eprintln!("{}", self.report.join("\n"));
        eprintln!("{test} took {:?} in all", started.elapsed());
        assert!(
            self.mismatches.is_empty(),
            "routing differs:\n{}",
            self.mismatches.join("\n")
        );
    }

    /// Makes each of `specs`' calls through `rudder` and compares the providers reached with the
    /// Java probe's (`java`) and with what the spec expects.
    pub(super) async fn compare(
        &mut self,
        scenario: &str,
        specs: &[CallSpec],
        java: &BTreeMap<String, Outcomes>,
        rudder: &Reference,
    ) {
        for spec in specs {
            let java_outcomes = java.get(spec.label).unwrap_or_else(|| {
                panic!("{scenario}: the probe printed no result for {}", spec.label)
            });
            let rudder_outcomes = call_rudder(rudder, spec).await;
            let (java_set, rudder_set) = (keys(java_outcomes), keys(&rudder_outcomes));
            let expected = names(&spec.expect);
            let java_expected = spec
                .java_on_loopback
                .as_deref()
                .map_or_else(|| expected.clone(), names);
            let as_expected = java_set == java_expected && rudder_set == expected;
            let verdict = match (java_set == rudder_set, as_expected) {
                (true, true) => "same",
                (false, true) => "known difference",
                (true, false) => "same, not as expected",
                (false, false) => "DIFFERENT",
            };
            self.report.push(format!(
                "{scenario:<20} {:<15} {verdict:<16} java {java_outcomes:?} rudder {rudder_outcomes:?}",
                spec.label
            ));
            if !as_expected {
                let why = rudder.explain(&spec.invocation());
                self.mismatches.push(format!(
                    "{scenario} / {}: java {java_set:?} (expected {java_expected:?}), rudder {rudder_set:?} \
                     (expected {expected:?})\n{why}",
                    spec.label
                ));
            }
        }
    }
}

/// Runs the Java probe over `specs` through the ZooKeeper at `zookeeper`, or through `registry` (a
/// whole registry URL, `nacos://127.0.0.1:PORT`) when given; each spec's outcomes.
pub(super) async fn run_probe(
    zookeeper: &str,
    registry: Option<&str>,
    specs: &[CallSpec],
) -> BTreeMap<String, Outcomes> {
    let lines: Vec<String> = specs.iter().map(CallSpec::probe_line).collect();
    let lines = lines.join("\n");
    let calls = CALLS.to_string();
    let mut env = vec![
        ("RUDDER_ZK_ADDRESS", zookeeper),
        ("RUDDER_APPLICATION", CONSUMER_APP),
        ("RUDDER_PROBE_CALLS", calls.as_str()),
        ("RUDDER_PROBE_SPECS", lines.as_str()),
    ];
    if let Some(registry) = registry {
        env.push(("RUDDER_REGISTRY_ADDRESS", registry));
    }
    let out = Peer::run_java("org.rudder.it.RoutingProbe", &env, PROBE_WITHIN)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.lines().any(|l| l == "DONE"),
        "the probe did not finish:\n{out}"
    );
    out.lines()
        .filter_map(|line| line.strip_prefix("RESULT "))
        .map(|result| {
            let (label, outcomes) = result.split_once(' ').unwrap_or((result, ""));
            let outcomes = outcomes
                .split(',')
                .filter(|o| !o.is_empty())
                .map(|o| {
                    let (what, count) = o
                        .rsplit_once('=')
                        .unwrap_or_else(|| panic!("bad outcome {o}"));
                    (
                        what.to_owned(),
                        count.parse().unwrap_or_else(|_| panic!("bad count in {o}")),
                    )
                })
                .collect();
            (label.to_owned(), outcomes)
        })
        .collect()
}

/// Makes the spec's calls through rudder; each outcome as the probe names it.
async fn call_rudder(rudder: &Reference, spec: &CallSpec) -> Outcomes {
    let mut outcomes = Outcomes::new();
    for _ in 0..CALLS {
        let outcome = match rudder
            .invoke(spec.invocation())
            .await
            .and_then(|response| Ok(response.into_result()?))
        {
            Ok(answer) => answering_instance(spec.method, &answer),
            Err(CallError::Rpc(e)) if e.kind() == RpcErrorKind::NoProvider => {
                NO_PROVIDER.to_owned()
            }
            Err(CallError::Rpc(e)) => format!("error:{:?}", e.kind()),
            Err(other) => format!("error:{other}"),
        };
        *outcomes.entry(outcome).or_default() += 1;
    }
    outcomes
}

/// The instance that answered: `whoAmI` returns it, `sayHello` ends with `, from <instance>`.
fn answering_instance(method: &str, answer: &Value) -> String {
    let text = answer.as_str().unwrap_or_default();
    match method {
        "sayHello" => text
            .rsplit_once(", from ")
            .map_or_else(|| format!("unexpected:{text}"), |(_, who)| who.to_owned()),
        _ => text.to_owned(),
    }
}

fn names(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

fn keys(outcomes: &Outcomes) -> BTreeSet<String> {
    outcomes.keys().cloned().collect()
}
