//! Logging to stderr (`RUDDER_LOG`, colour only on a terminal and never with `NO_COLOR`), and the
//! attempt log behind `invoke -v`: which providers each call tried, read from the cluster's
//! `rudder.attempt` tracing spans (`server.address`, `server.port`, `rudder.outcome`), so the CLI
//! learns what the library did without the library knowing about the CLI.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::Subscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{filter, EnvFilter, Layer};

/// The environment variable with the log filter (tracing's `EnvFilter` syntax; default `warn`).
pub(crate) const LOG_ENV: &str = "RUDDER_LOG";

static COLOUR: OnceLock<bool> = OnceLock::new();

/// Whether stderr gets colour: a terminal, and `NO_COLOR` unset or empty (no-color.org).
pub(crate) fn colour() -> bool {
    *COLOUR.get_or_init(|| {
        std::io::stderr().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
    })
}

/// `error:` for a message on stderr, red and bold when colour is on.
pub(crate) fn error_label() -> &'static str {
    if colour() {
        "\x1b[1;31merror:\x1b[0m"
    } else {
        "error:"
    }
}

/// `warning:` for a message on stderr, yellow and bold when colour is on.
pub(crate) fn warning_label() -> &'static str {
    if colour() {
        "\x1b[1;33mwarning:\x1b[0m"
    } else {
        "warning:"
    }
}

/// Writes one line to stderr, ignoring failure: a closed stderr (a reader that went away) must not
/// turn a finished command into a panic, as `eprintln!` would.
pub(crate) fn say(line: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Installs the stderr logger, and with `attempts` the attempt log it returns.
pub(crate) fn install(attempts: bool) -> Option<AttemptLog> {
    let filter = EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new("warn"));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour())
        .with_filter(filter);
    let log = attempts.then(AttemptLog::default);
    let capture = log.clone().map(|log| {
        AttemptLayer { log }.with_filter(filter::filter_fn(|meta| meta.name() == ATTEMPT_SPAN))
    });
    // `rudder bench` reads each attempt's provider from its span too, only while it records.
    let bench = crate::bench_attempts::AttemptLayer
        .with_filter(filter::filter_fn(crate::bench_attempts::wanted));
    tracing_subscriber::registry()
        .with(fmt)
        .with(capture)
        .with(bench)
        .init();
    log
}

/// The cluster's span of one attempt on one provider.
const ATTEMPT_SPAN: &str = "rudder.attempt";

/// One attempt of a call: the provider and how it ended (`ok`, an error kind, `cancelled`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AttemptRecord {
    pub(crate) address: String,
    pub(crate) outcome: Option<String>,
}

/// The attempts seen since the last [`AttemptLog::take`]: calls run one at a time, so they are the
/// attempts of the call that just ended.
#[derive(Debug, Clone, Default)]
pub(crate) struct AttemptLog(Arc<Mutex<Vec<AttemptRecord>>>);

impl AttemptLog {
    /// The attempts recorded so far, emptying the log.
    pub(crate) fn take(&self) -> Vec<AttemptRecord> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn with<R>(&self, f: impl FnOnce(&mut Vec<AttemptRecord>) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

struct AttemptLayer {
    log: AttemptLog,
}

/// Where in the log a span's attempt is.
struct Slot(usize);

#[derive(Default)]
struct Fields {
    host: Option<String>,
    port: Option<u64>,
    outcome: Option<String>,
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "server.address" => self.host = Some(value.to_owned()),
            "rudder.outcome" => self.outcome = Some(value.to_owned()),
            _ => {}
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "server.port" {
            self.port = Some(value);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        if field.name() == "server.port" {
            self.port = u64::try_from(value).ok();
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        // `%` and `?` values arrive here; strings recorded as `str` do not.
        let text = format!("{value:?}");
        self.record_str(field, text.trim_matches('"'));
    }
}

impl<S> Layer<S> for AttemptLayer
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        attrs.record(&mut fields);
        let address = match (fields.host, fields.port) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host,
            _ => "?".to_owned(),
        };
        let slot = self.log.with(|log| {
            log.push(AttemptRecord {
                address,
                outcome: fields.outcome,
            });
            log.len() - 1
        });
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Slot(slot));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::default();
        values.record(&mut fields);
        let Some(outcome) = fields.outcome else {
            return;
        };
        let Some(span) = ctx.span(id) else { return };
        let Some(&Slot(slot)) = span.extensions().get::<Slot>() else {
            return;
        };
        self.log.with(|log| {
            if let Some(record) = log.get_mut(slot) {
                record.outcome = Some(outcome);
            }
        });
    }
}
