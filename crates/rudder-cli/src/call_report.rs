//! How `rudder invoke` reports its calls on stderr: one line per call (`call 2/5 failed: timeout: ...`,
//! with `-v` the provider, time and attempts), the closing tally, and the exit code's marker for
//! failures already reported. The protobuf path (`proto_invoke`) reports the same way.

use std::collections::BTreeMap;
use std::time::Duration;

use rudder_common::error::{RpcError, RpcErrorKind};

use crate::logging::AttemptRecord;

/// A failure already reported on stderr: only the exit code is left to give.
#[derive(Debug)]
pub(crate) struct Reported(pub(crate) RpcErrorKind);

impl std::fmt::Display for Reported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "a call failed ({})", label(self.0))
    }
}

impl std::error::Error for Reported {}

/// How a failure kind is counted and shown: `exception` for a provider's exception, else the kind.
pub(crate) fn label(kind: RpcErrorKind) -> String {
    match kind {
        RpcErrorKind::Biz => "exception".to_owned(),
        other => other.to_string(),
    }
}

/// The stderr line of one call: for a failure always, for a success only with `-v` (`tried`).
pub(crate) fn describe(
    number: usize,
    calls: usize,
    outcome: &Result<(), RpcError>,
    elapsed: Duration,
    tried: Option<&[AttemptRecord]>,
) -> Option<String> {
    let head = if calls > 1 {
        format!("call {number}/{calls}")
    } else {
        "call".to_owned()
    };
    let detail = tried.map(|tried| verbose_detail(tried, outcome.as_ref().err(), elapsed));
    match outcome {
        Ok(()) => detail.map(|d| format!("{head} ok: {d}")),
        Err(error) => {
            let mut line = format!(
                "{head} failed: {}: {}",
                label(error.kind()),
                crate::error_chain::chain_text(error)
            );
            if let Some(detail) = detail {
                line.push_str(&format!(" [{detail}]"));
            }
            Some(line)
        }
    }
}

/// `127.0.0.1:24001, 2.3 ms, 1 attempt` or `3 attempts: a timeout, b timeout, c ok`.
fn verbose_detail(tried: &[AttemptRecord], error: Option<&RpcError>, elapsed: Duration) -> String {
    let millis = elapsed.as_secs_f64() * 1000.0;
    let answered = tried
        .iter()
        .rev()
        .find(|a| a.outcome.as_deref() == Some("ok"))
        .map(|a| a.address.as_str());
    // A provider that answered with an error (an exception, BAD_REQUEST, no such method) answered.
    let refused = tried
        .last()
        .filter(|a| a.outcome.as_deref().is_some_and(is_answer))
        .map(|a| a.address.as_str());
    let who = match (answered, refused, error) {
        (Some(address), _, _) => format!("provider {address}"),
        (None, Some(address), _) => format!("provider {address} answered"),
        (None, None, _) if tried.is_empty() => "no provider tried".to_owned(),
        (None, None, _) => "no provider answered".to_owned(),
    };
    let attempts = match tried.len() {
        1 => "1 attempt".to_owned(),
        n => {
            let each: Vec<String> = tried
                .iter()
                .map(|a| format!("{} {}", a.address, a.outcome.as_deref().unwrap_or("?")))
                .collect();
            format!("{n} attempts: {}", each.join(", "))
        }
    };
    format!("{who}, {millis:.1} ms, {attempts}")
}

/// Whether an attempt's outcome (an `RpcErrorKind` name) is the provider's own answer rather than a
/// failure to reach it: its exception, a request it could not decode (status 40, BAD_REQUEST), a
/// method or service it does not have.
fn is_answer(outcome: &str) -> bool {
    [
        RpcErrorKind::Biz,
        RpcErrorKind::Serialization,
        RpcErrorKind::MethodNotFound,
    ]
    .iter()
    .any(|kind| kind.to_string() == outcome)
}

/// Calls that succeeded, and failures by kind.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) ok: usize,
    pub(crate) failed: BTreeMap<String, usize>,
}

impl Tally {
    /// `20 calls: 11 ok, 9 failed (exception 9)`.
    pub(crate) fn summary(&self) -> String {
        let failed: usize = self.failed.values().sum();
        let total = self.ok + failed;
        let mut line = format!("{total} calls: {} ok", self.ok);
        if failed > 0 {
            let kinds: Vec<String> = self
                .failed
                .iter()
                .map(|(kind, n)| format!("{kind} {n}"))
                .collect();
            line.push_str(&format!(", {failed} failed ({})", kinds.join(", ")));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_failures_by_kind() {
        let mut tally = Tally {
            ok: 11,
            ..Tally::default()
        };
        tally.failed.insert(label(RpcErrorKind::Biz), 9);
        assert_eq!(tally.summary(), "20 calls: 11 ok, 9 failed (exception 9)");
        tally.failed.insert(label(RpcErrorKind::Timeout), 2);
        assert_eq!(
            tally.summary(),
            "22 calls: 11 ok, 11 failed (exception 9, timeout 2)"
        );
        assert_eq!(
            Tally {
                ok: 3,
                ..Tally::default()
            }
            .summary(),
            "3 calls: 3 ok"
        );
    }

    #[test]
    fn verbose_lines_name_the_provider_time_and_attempts() {
        let tried = [
            AttemptRecord {
                address: "10.0.0.1:1".into(),
                outcome: Some("timeout".into()),
            },
            AttemptRecord {
                address: "10.0.0.2:1".into(),
                outcome: Some("ok".into()),
            },
        ];
        let line = describe(2, 5, &Ok(()), Duration::from_micros(2500), Some(&tried)).unwrap();
        assert_eq!(
            line,
            "call 2/5 ok: provider 10.0.0.2:1, 2.5 ms, 2 attempts: 10.0.0.1:1 timeout, 10.0.0.2:1 ok"
        );
        let failed = Err(RpcError::new(RpcErrorKind::Biz, "x.Oops: no"));
        assert_eq!(
            describe(1, 1, &failed, Duration::from_millis(3), Some(&tried[1..])).unwrap(),
            "call failed: exception: x.Oops: no [provider 10.0.0.2:1, 3.0 ms, 1 attempt]"
        );
        assert_eq!(describe(1, 2, &Ok(()), Duration::ZERO, None), None);
    }

    #[test]
    fn a_provider_that_answered_with_an_error_answered() {
        let bad_request = Err(RpcError::new(
            RpcErrorKind::Serialization,
            "status 40 BAD_REQUEST: Fail to decode request",
        ));
        let tried = [AttemptRecord {
            address: "10.0.0.1:1".into(),
            outcome: Some("serialization".into()),
        }];
        let line = describe(1, 1, &bad_request, Duration::from_millis(3), Some(&tried)).unwrap();
        assert!(
            line.ends_with("[provider 10.0.0.1:1 answered, 3.0 ms, 1 attempt]"),
            "{line}"
        );
        let timeout = Err(RpcError::new(RpcErrorKind::Timeout, "no answer"));
        let tried = [AttemptRecord {
            address: "10.0.0.1:1".into(),
            outcome: Some("timeout".into()),
        }];
        let line = describe(1, 1, &timeout, Duration::from_millis(3), Some(&tried)).unwrap();
        assert!(line.contains("[no provider answered,"), "{line}");
    }
}
