//! Java value types through a real Apache Dubbo 3.3 provider (it/java-provider's
//! `JavaTypesService`): `BigDecimal`, `BigInteger`, `Date`, `java.time`, an enum and a POJO of
//! them, each sent typed, echoed, and described by Java's own `toString()` so the test sees what
//! the provider really received; then the same through `rudder invoke`'s JSON; then how a
//! provider's error reads.

use std::time::Duration as StdDuration;

use rudder::value::{
    from_value, to_value, BigDecimal, BigInteger, Date, Duration, Instant, LocalDate, LocalDateTime,
};
use rudder::{CallError, Reference, Value};
use rudder_it::{run_rudder, Peer, PeerConfig, PeerKind, ZooKeeperContainer};
use serde::{Deserialize, Serialize};

const SERVICE: &str = "org.rudder.it.JavaTypesService";
const READY_WITHIN: StdDuration = StdDuration::from_secs(120);

fn provider_url(peer: &Peer, service: &str) -> String {
    format!("dubbo://127.0.0.1:{}/{service}", peer.port())
}

async fn reference(peer: &Peer, service: &str) -> Reference {
    Reference::builder(service)
        .provider(&provider_url(peer, service))
        .timeout(StdDuration::from_secs(10))
        .retries(0)
        .build()
        .await
        .unwrap()
}

async fn java_provider(zookeeper: &ZooKeeperContainer) -> Peer {
    Peer::start(
        PeerConfig::new(PeerKind::Java, &zookeeper.connect_string(), "java-values"),
        READY_WITHIN,
    )
    .await
    .unwrap()
}

fn typed(class: &str, text: &str) -> Value {
    Value::from_java_text(class, text).unwrap().unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename = "org.rudder.it.Color", rename_all = "SCREAMING_SNAKE_CASE")]
enum Color {
    Red,
    Green,
    Blue,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename = "org.rudder.it.Invoice")]
struct Invoice {
    id: String,
    amount: BigDecimal,
    serial: BigInteger,
    due: LocalDate,
    issued: LocalDateTime,
    paid: Instant,
    grace: Duration,
    created: Date,
    color: Color,
}

#[tokio::test]
async fn java_value_types_round_trip_through_a_java_provider() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java_provider(&zookeeper).await;
    let r = reference(&peer, SERVICE).await;

    // (echo method, Java type, the value's text, describe method, what Java's toString() says).
    let cases = [
        (
            "echoDecimal",
            "java.math.BigDecimal",
            "12.340",
            "describeDecimal",
            "12.340 scale=3",
        ),
        (
            "echoDecimal",
            "java.math.BigDecimal",
            "-1E-8",
            "describeDecimal",
            "-1E-8 scale=8",
        ),
        (
            "echoDecimal",
            "java.math.BigDecimal",
            "1E+3",
            "describeDecimal",
            "1E+3 scale=-3",
        ),
        (
            "echoBigInteger",
            "java.math.BigInteger",
            "-123456789012345678901234567890",
            "describeBigInteger",
            "-123456789012345678901234567890",
        ),
        (
            "echoBigInteger",
            "java.math.BigInteger",
            "0",
            "describeBigInteger",
            "0",
        ),
        (
            "echoDate",
            "java.util.Date",
            "2026-12-01T23:30:00.123Z",
            "describeDate",
            "2026-12-01T23:30:00.123Z",
        ),
        (
            "echoLocalDate",
            "java.time.LocalDate",
            "2026-12-31",
            "describeTime",
            "java.time.LocalDate 2026-12-31",
        ),
        (
            "echoLocalDateTime",
            "java.time.LocalDateTime",
            "2026-12-01T23:30:00",
            "describeTime",
            "java.time.LocalDateTime 2026-12-01T23:30",
        ),
        (
            "echoLocalTime",
            "java.time.LocalTime",
            "23:30:05.120",
            "describeTime",
            "java.time.LocalTime 23:30:05.120",
        ),
        (
            "echoInstant",
            "java.time.Instant",
            "2026-12-01T23:30:00.000000123Z",
            "describeTime",
            "java.time.Instant 2026-12-01T23:30:00.000000123Z",
        ),
        (
            "echoDuration",
            "java.time.Duration",
            "PT-1M-29.999999995S",
            "describeTime",
            "java.time.Duration PT-1M-29.999999995S",
        ),
        (
            "echoZoned",
            "java.time.ZonedDateTime",
            "2026-03-29T01:30:00+01:00[Europe/Paris]",
            "describeTime",
            "java.time.ZonedDateTime 2026-03-29T01:30+01:00[Europe/Paris]",
        ),
        (
            "echoOffset",
            "java.time.OffsetDateTime",
            "2026-12-01T23:30:00+05:30",
            "describeTime",
            "java.time.OffsetDateTime 2026-12-01T23:30+05:30",
        ),
        (
            "echoPeriod",
            "java.time.Period",
            "P1Y-2M3D",
            "describeTime",
            "java.time.Period P1Y-2M3D",
        ),
    ];
    for (echo, java_type, text, describe, java_says) in cases {
        let value = typed(java_type, text);
        let back = r
            .call::<Value, _>(echo, &[java_type], vec![value.clone()])
            .await
            .unwrap_or_else(|e| panic!("{echo}({text}): {e}"));
        assert_eq!(back, value, "{echo}({text}) came back different");
        // describeTime takes an Object: the provider must have built the java.time value itself.
        let describe_type = if describe == "describeTime" {
            "java.lang.Object"
        } else {
            java_type
        };
        let described = r
            .call::<Value, _>(describe, &[describe_type], vec![value])
            .await
            .unwrap();
        assert_eq!(described, Value::from(java_says), "{describe}({text})");
    }

    // An enum constant both ways; the provider computes with it.
    let green = r
        .call::<Value, _>(
            "nextColor",
            &["org.rudder.it.Color"],
            vec![to_value(&Color::Red).unwrap()],
        )
        .await
        .unwrap();
    assert_eq!(from_value::<Color>(green).unwrap(), Color::Green);
    let blue = Value::java_enum("org.rudder.it.Color", "BLUE");
    assert_eq!(
        r.call::<Value, _>("echoColor", &["org.rudder.it.Color"], vec![blue.clone()])
            .await
            .unwrap(),
        blue
    );

    // A POJO of them through serde: the provider doubles the amount and moves the due date.
    let invoice = Invoice {
        id: "inv-7".into(),
        amount: "12.34".parse().unwrap(),
        serial: "98765432109876543210".parse().unwrap(),
        due: "2026-12-31".parse().unwrap(),
        issued: "2026-12-01T23:30:00".parse().unwrap(),
        paid: "2026-12-02T08:00:00.5Z".parse().unwrap(),
        grace: "PT72H".parse().unwrap(),
        created: "2026-12-01T23:30:00.123Z".parse().unwrap(),
        color: Color::Blue,
    };
    let next = r
        .call::<Value, _>(
            "nextInvoice",
            &["org.rudder.it.Invoice"],
            vec![to_value(&invoice).unwrap()],
        )
        .await
        .unwrap();
    let next: Invoice = from_value(next).unwrap();
    assert_eq!(
        next,
        Invoice {
            id: "inv-7+1".into(),
            amount: "24.68".parse().unwrap(),
            serial: "98765432109876543211".parse().unwrap(),
            due: "2027-01-01".parse().unwrap(),
            ..invoice
        }
    );
}

#[tokio::test]
async fn cli_json_spells_java_values_as_text() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java_provider(&zookeeper).await;
    let url = provider_url(&peer, SERVICE);
    for (method, java_type, arg, printed) in [
        (
            "echoDecimal",
            "java.math.BigDecimal",
            r#"["12.340"]"#,
            r#""12.340""#,
        ),
        (
            "echoBigInteger",
            "java.math.BigInteger",
            r#"["123456789012345678901234567890"]"#,
            r#""123456789012345678901234567890""#,
        ),
        (
            "echoDate",
            "java.util.Date",
            r#"["2026-12-01T23:30:00Z"]"#,
            r#""2026-12-01T23:30:00Z""#,
        ),
        (
            "echoLocalDate",
            "java.time.LocalDate",
            r#"["2026-12-31"]"#,
            r#""2026-12-31""#,
        ),
        (
            "echoLocalDateTime",
            "java.time.LocalDateTime",
            r#"["2026-12-01T23:30:00"]"#,
            r#""2026-12-01T23:30:00""#,
        ),
        (
            "echoColor",
            "org.rudder.it.Color",
            r#"["BLUE"]"#,
            r#""BLUE""#,
        ),
        (
            "nextColor",
            "org.rudder.it.Color",
            r#"["BLUE"]"#,
            r#""RED""#,
        ),
    ] {
        let out = run_rudder(&[
            "invoke", "--url", &url, "--method", method, "--types", java_type, "--args", arg,
        ])
        .await;
        assert_eq!(out.code, 0, "{method}: {}", out.stderr);
        assert_eq!(out.stdout.trim(), printed, "{method}");
    }
    // Money given as a JSON number would have been through a double: refused, and why.
    let out = run_rudder(&[
        "invoke",
        "--url",
        &url,
        "--method",
        "echoDecimal",
        "--types",
        "java.math.BigDecimal",
        "--args",
        "[12.34]",
    ])
    .await;
    assert_eq!(out.code, 2, "{}", out.stdout);
    assert!(out.stderr.contains("string of digits"), "{}", out.stderr);
}

/// What a Java provider answers for a method it does not have: status 70 and Dubbo's whole stack
/// trace. The status answer's `Display` is the line that says what happened, printed once in the
/// error's chain; its `{:#}` and `message()` keep all of it.
#[tokio::test]
async fn a_providers_stack_trace_reads_as_its_first_line() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java_provider(&zookeeper).await;
    let r = reference(&peer, "org.rudder.it.GreetingService").await;
    let err = r.call::<Value, _>("nosuch", &[], vec![]).await.unwrap_err();
    let CallError::Rpc(rpc) = &err else {
        panic!("expected a status answer, got {err:?}");
    };
    // The cluster mode's error wraps the one call's, whose source is the status answer.
    let provider = err
        .provider_error()
        .expect("a ProviderError in the source chain");
    let full = provider.message();
    assert!(full.lines().count() > 10, "a stack trace: {full}");
    // The chain on one line, as anyhow prints it: each part once, the headline of the trace last.
    let chain: Vec<String> =
        std::iter::successors(Some(rpc as &(dyn std::error::Error + 'static)), |e| {
            e.source()
        })
        .map(ToString::to_string)
        .collect();
    let short = chain.join(": ");
    assert_eq!(short.lines().count(), 1, "{short}");
    assert!(
        short.ends_with(r#"SERVICE_ERROR: Not found method "nosuch" in class org.rudder.it.GreetingServiceImpl."#),
        "{short}"
    );
    assert_eq!(short.matches("SERVICE_ERROR").count(), 1, "{short}");
    assert!(!short.contains("\tat "), "{short}");
    let verbose = format!("{provider:#}");
    assert!(verbose.contains(full), "{verbose}");
}

/// An object argument whose class the metadata report describes goes typed without `--types` or
/// `--generic`: its BigDecimal, LocalDate, Instant, Duration, Date and enum fields decode at the
/// provider (before, they went as JSON strings and the provider answered "Fail to decode
/// request"). By `--url` (no metadata) the hint for each cause says what to add.
#[tokio::test]
async fn cli_types_an_objects_fields_from_the_metadata() {
    let zookeeper = ZooKeeperContainer::start().await.unwrap();
    let peer = java_provider(&zookeeper).await;
    let registry = format!("zookeeper://{}", zookeeper.connect_string());
    let invoice = r#"[{"id":"inv-7","amount":"12.34","serial":"98765432109876543210",
        "due":"2026-12-31","issued":"2026-12-01T23:30:00","paid":"2026-12-02T08:00:00.500Z",
        "grace":"PT72H","created":"2026-12-01T23:30:00.123Z","color":"BLUE"}]"#;
    let out = run_rudder(&[
        "invoke",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "nextInvoice",
        "--args",
        invoice,
        "-v",
    ])
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("types: nextInvoice(org.rudder.it.Invoice) (the registry's metadata)"),
        "{}",
        out.stderr
    );
    let next: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(next["amount"], "24.68", "{next}");
    assert_eq!(next["due"], "2027-01-01", "{next}");
    assert_eq!(next["color"], "BLUE", "{next}");

    // --generic prints what a Java generic consumer gets (PojoUtils.generalize: the properties with
    // a getter, the enum as its name), without the "class" entries the provider adds unless
    // --with-class asks; the Date field's ISO-8601 text goes typed (the metadata says Date), where
    // before it went as text the provider could not parse ("Unparseable date").
    let generic = |extra: &'static [&'static str]| {
        let registry = registry.clone();
        async move {
            let mut args = vec![
                "invoke",
                "--registry",
                registry.as_str(),
                "--interface",
                SERVICE,
                "--method",
                "nextInvoice",
                "--args",
                invoice,
                "--generic",
            ];
            args.extend_from_slice(extra);
            let out = run_rudder(&args).await;
            assert_eq!(out.code, 0, "{}", out.stderr);
            serde_json::from_str::<serde_json::Value>(out.stdout.trim()).unwrap()
        }
    };
    assert_eq!(
        generic(&[]).await,
        serde_json::json!({"id": "inv-7+1", "amount": "24.68", "due": "2027-01-01", "color": "BLUE"})
    );
    assert_eq!(
        generic(&["--with-class"]).await["class"],
        "org.rudder.it.Invoice"
    );

    // `list SERVICE` shows the classes' fields and the enum's constants the metadata describes.
    let out = run_rudder(&["list", "--registry", &registry, SERVICE]).await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("\nenum org.rudder.it.Color { RED, GREEN, BLUE }\nclass org.rudder.it.Invoice {\n  amount: java.math.BigDecimal\n  color: org.rudder.it.Color\n"),
        "{}",
        out.stdout
    );

    // A field value that is not its type is named before anything is sent.
    let out = run_rudder(&[
        "invoke",
        "--registry",
        &registry,
        "--interface",
        SERVICE,
        "--method",
        "nextInvoice",
        "--args",
        r#"[{"id":"x","amount":12.5}]"#,
    ])
    .await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("field amount of org.rudder.it.Invoice (java.math.BigDecimal)"),
        "{}",
        out.stderr
    );

    // By --url: no metadata, and Dubbo 3.3 says the same for every cause: the hint names the causes
    // the call's shape allows.
    let url = provider_url(&peer, SERVICE);
    let hint = |args: Vec<&'static str>| {
        let url = url.clone();
        async move {
            let mut all = vec!["invoke", "--url", url.as_str()];
            all.extend(args);
            let out = run_rudder(&all).await;
            assert_eq!(out.code, 1, "{}", out.stderr);
            let lines: Vec<String> = out.stderr.lines().map(str::to_owned).collect();
            assert!(lines[0].starts_with("error: "), "{}", out.stderr);
            lines
                .iter()
                .find(|l| l.starts_with("hint: "))
                .cloned()
                .unwrap_or_else(|| panic!("no hint: {}", out.stderr))
        }
    };
    let enum_constant = hint(vec![
        "--method",
        "echoColor",
        "--types",
        "org.rudder.it.Color",
        "--args",
        r#"["PURPLE"]"#,
    ])
    .await;
    assert!(
        enum_constant.contains("\"PURPLE\" may not be a constant of org.rudder.it.Color"),
        "{enum_constant}"
    );
    let untyped = hint(vec!["--method", "nextInvoice", "--args", r#"[{"id":"x"}]"#]).await;
    // Both flags at once: nothing by --url says the class nor its fields' types.
    assert!(
        untyped.contains("give its class with --types, and add --generic when it has a BigDecimal"),
        "{untyped}"
    );
    // --generic with an ISO-8601 Date field by --url: Dubbo's PojoUtils parses only its own format.
    let date = hint(vec![
        "--method",
        "nextInvoice",
        "--types",
        "org.rudder.it.Invoice",
        "--generic",
        "--args",
        r#"[{"id":"x","created":"2026-12-01T23:30:00.123Z"}]"#,
    ])
    .await;
    assert!(date.contains("give epoch milliseconds"), "{date}");
    let mistyped = hint(vec![
        "--method",
        "nextInvoise",
        "--types",
        "org.rudder.it.Invoice",
        "--args",
        r#"[{"id":"x"}]"#,
    ])
    .await;
    assert!(
        mistyped.contains("exports no nextInvoise(org.rudder.it.Invoice)"),
        "{mistyped}"
    );
    let fields = hint(vec![
        "--method",
        "nextInvoice",
        "--types",
        "org.rudder.it.Invoice",
        "--args",
        r#"[{"id":"x","amount":"12.34"}]"#,
    ])
    .await;
    assert!(fields.contains("--generic"), "{fields}");
}
