//! The `rudder.call` and `rudder.attempt` spans and their fields, seen by a capturing subscriber.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use ::tracing::field::{Field, Visit};
use ::tracing::span::{Attributes, Id, Record};
use ::tracing::Subscriber;
use rudder_common::error::RpcErrorKind;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use super::*;

/// A closed span: its name, its parent's name and its fields as text.
#[derive(Debug, Clone, Default)]
struct Closed {
    name: String,
    parent: Option<String>,
    fields: BTreeMap<String, String>,
}

/// Keeps every span's fields until it closes, then files it in `closed`.
#[derive(Default, Clone)]
struct Capture {
    open: Arc<Mutex<BTreeMap<u64, Closed>>>,
    closed: Arc<Mutex<Vec<Closed>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut span = Closed {
            name: attrs.metadata().name().to_owned(),
            parent: ctx
                .span(id)
                .and_then(|s| s.parent())
                .map(|p| p.name().to_owned()),
            fields: BTreeMap::new(),
        };
        attrs.record(&mut Fields(&mut span.fields));
        self.open.lock().unwrap().insert(id.into_u64(), span);
    }
    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        if let Some(span) = self.open.lock().unwrap().get_mut(&id.into_u64()) {
            values.record(&mut Fields(&mut span.fields));
        }
    }
    fn on_close(&self, id: Id, _: Context<'_, S>) {
        if let Some(span) = self.open.lock().unwrap().remove(&id.into_u64()) {
            self.closed.lock().unwrap().push(span);
        }
    }
}

/// Runs `f` with `subscriber` as this thread's default.
///
/// Why the extra dispatcher: tracing caches, per callsite, whether any subscriber wants it. While a
/// process has a single live dispatcher, tracing asks only the registering thread's default, so a
/// callsite first reached by another test's thread (no subscriber there) is cached as "never" and
/// its spans would miss this capture. A second dispatcher that lives as long as the process makes
/// tracing ask every dispatcher, and this capture keeps seeing its spans.
fn capturing<T>(subscriber: impl Subscriber + Send + Sync + 'static, f: impl FnOnce() -> T) -> T {
    static EVERY_DISPATCHER_ASKED: OnceLock<::tracing::Dispatch> = OnceLock::new();
    EVERY_DISPATCHER_ASKED
        .get_or_init(|| ::tracing::Dispatch::new(::tracing::subscriber::NoSubscriber::default()));
    ::tracing::subscriber::with_default(subscriber, f)
}

fn field<'a>(span: &'a Closed, name: &str) -> &'a str {
    span.fields
        .get(name)
        .unwrap_or_else(|| panic!("{} has no {name}: {span:?}", span.name))
}

#[test]
fn a_failover_call_is_one_call_span_with_one_attempt_span_per_provider() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let urls = [
        "dubbo://10.0.0.1:1/com.acme.Greeter?loadbalance=roundrobin",
        "dubbo://10.0.0.2:2/com.acme.Greeter",
    ];
    let inv = invoker(
        &urls,
        &[("10.0.0.1:1", RpcErrorKind::Network)],
        ClusterMode::default(),
    );
    let answer = capturing(subscriber, || {
        block_on(inv.invoke(&Invocation::new("sayHello", vec![], vec![])))
    });
    assert_eq!(answer.unwrap(), "10.0.0.2:2");

    let closed = capture.closed.lock().unwrap().clone();
    let names: Vec<&str> = closed.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["rudder.attempt", "rudder.attempt", "rudder.call"]);
    let (first, second, call) = (&closed[0], &closed[1], &closed[2]);

    assert_eq!(call.parent, None);
    assert_eq!(field(call, "otel.name"), "com.acme.Greeter/sayHello");
    assert_eq!(field(call, "otel.kind"), "client");
    assert_eq!(field(call, "rpc.system"), "dubbo");
    assert_eq!(field(call, "rpc.service"), "com.acme.Greeter");
    assert_eq!(field(call, "rpc.method"), "sayHello");
    assert_eq!(field(call, "rudder.cluster"), "failover");
    assert_eq!(field(call, "otel.status_code"), "OK");
    assert!(!call.fields.contains_key("error.type"));

    for (span, number, host, port) in [
        (first, "1", "10.0.0.1", "1"),
        (second, "2", "10.0.0.2", "2"),
    ] {
        assert_eq!(span.parent.as_deref(), Some("rudder.call"));
        assert_eq!(field(span, "rudder.attempt"), number);
        assert_eq!(field(span, "server.address"), host);
        assert_eq!(field(span, "server.port"), port);
        field(span, "rudder.elapsed_ms").parse::<u64>().unwrap();
    }
    assert_eq!(field(first, "rudder.outcome"), "network");
    assert_eq!(field(first, "otel.status_code"), "ERROR");
    assert_eq!(field(first, "error.type"), "network");
    assert_eq!(field(second, "rudder.outcome"), "ok");
    assert_eq!(field(second, "otel.status_code"), "OK");
    assert!(!second.fields.contains_key("rudder.exception"));
}

#[test]
fn a_failed_call_and_a_cancelled_fork_say_so() {
    let capture = Capture::default();
    let subscriber = tracing_subscriber::registry().with(capture.clone());
    let inv = invoker(
        &THREE,
        &[],
        ClusterMode::Forking {
            forks: 2,
            timeout_millis: 1_000,
        },
    );
    inv.caller().hang("10.0.0.1:1");
    let failing = invoker(
        &THREE,
        &[("10.0.0.1:1", RpcErrorKind::Timeout)],
        ClusterMode::Failfast,
    );
    capturing(subscriber, || {
        block_on(inv.invoke(&call())).unwrap();
        block_on(failing.invoke(&call())).unwrap_err();
    });
    let closed = capture.closed.lock().unwrap().clone();
    let outcomes: Vec<(&str, &str)> = closed
        .iter()
        .filter(|s| s.name == "rudder.attempt")
        .map(|s| (field(s, "server.address"), field(s, "rudder.outcome")))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("10.0.0.2", "ok"),
            ("10.0.0.1", "cancelled"),
            ("10.0.0.1", "timeout")
        ]
    );
    let calls: Vec<&Closed> = closed.iter().filter(|s| s.name == "rudder.call").collect();
    assert_eq!(field(calls[0], "rudder.cluster"), "forking");
    assert_eq!(field(calls[1], "otel.status_code"), "ERROR");
    assert_eq!(field(calls[1], "error.type"), "timeout");
}
