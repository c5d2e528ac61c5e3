//! The prometheus-client [`Collector`]: reads rudder's own counters at scrape time and encodes them.

use std::fmt;
use std::sync::{Arc, Weak};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Unit;

use rudder_common::clock::{Clock, SystemClock};
use rudder_common::status::MethodStatus;

use super::recorder::Recorder;

/// What the metrics read of a consumer at scrape time: the one thing they know of it.
pub(crate) trait ConsumerGauges: Send + Sync {
    /// The consumer's clock (epoch ms), which outlier ejections are timed by.
    fn now_millis(&self) -> i64;
    /// dubbo:// sockets open.
    fn open_connections(&self) -> usize;
    /// Connection tasks (connect, driver, writer) alive.
    fn connection_tasks(&self) -> usize;
    /// ZooKeeper sessions open.
    #[cfg(feature = "zookeeper")]
    fn registry_sessions(&self) -> usize;
    /// The status of every live registry subscription.
    #[cfg(feature = "zookeeper")]
    fn subscriptions(&self) -> Vec<super::SubscriptionSample>;
}

/// The collector registered in the [`Metrics`](super::Metrics) registry.
pub(crate) struct RudderCollector {
    pub(crate) recorder: Arc<Recorder>,
    /// Weak: a metrics handle must not keep a dropped consumer's sessions and connections open.
    pub(crate) consumer: Weak<dyn ConsumerGauges>,
}

impl fmt::Debug for RudderCollector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RudderCollector")
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}

impl Collector for RudderCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> fmt::Result {
        let consumer = self.consumer.upgrade();
        let now = match &consumer {
            Some(consumer) => consumer.now_millis(),
            None => SystemClock.now_millis(),
        };
        encode_calls(&self.recorder, now, &mut encoder)?;
        encode_picks(&self.recorder, &mut encoder)?;
        encode_tls_failures(&mut encoder)?;
        let Some(consumer) = consumer else {
            return Ok(());
        };
        let open = consumer.open_connections();
        gauge(
            &mut encoder,
            "rudder_connections_open",
            "dubbo:// sockets open.",
            open,
        )?;
        let tasks = consumer.connection_tasks();
        let help = "Connection tasks (connect, driver, writer) alive.";
        gauge(&mut encoder, "rudder_connection_tasks", help, tasks)?;
        #[cfg(feature = "zookeeper")]
        {
            let sessions = consumer.registry_sessions();
            let help = "ZooKeeper sessions open (one per registry address in use).";
            gauge(
                &mut encoder,
                "rudder_registry_sessions_open",
                help,
                sessions,
            )?;
            super::subscriptions::encode(&consumer.subscriptions(), &mut encoder)?;
        }
        Ok(())
    }
}

fn gauge(encoder: &mut DescriptorEncoder<'_>, name: &str, help: &str, value: usize) -> fmt::Result {
    let gauge = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
    gauge.encode(encoder.encode_descriptor(name, help, None, gauge.metric_type())?)
}

/// Calls, failures, calls in flight and outlier ejections from the statistics (ejections read at
/// `now`); durations from the histograms.
fn encode_calls(recorder: &Recorder, now: i64, encoder: &mut DescriptorEncoder<'_>) -> fmt::Result {
    let series = recorder.series();
    type Read = fn(&MethodStatus, i64) -> i64;
    let counts: [(&str, &str, MetricType, Read); 5] = [
        (
            "rudder_calls",
            "Calls completed, per provider and method (failed ones included).",
            MetricType::Counter,
            |s, _| s.total(),
        ),
        (
            "rudder_call_failures",
            "Calls that failed (network, timeout, provider error status), per provider and method.",
            MetricType::Counter,
            |s, _| s.failed(),
        ),
        (
            "rudder_calls_in_flight",
            "Calls sent and not yet answered, per provider and method.",
            MetricType::Gauge,
            |s, _| i64::from(s.active()),
        ),
        (
            "rudder_outlier_ejections",
            "Times outlier ejection took the provider out of picks for the method.",
            MetricType::Counter,
            |s, _| i64::from(s.outlier().ejections()),
        ),
        (
            "rudder_outlier_ejected",
            "1 while the provider is ejected for the method (outlier.* settings), else 0.",
            MetricType::Gauge,
            |s, now| i64::from(s.outlier().is_ejected(now)),
        ),
    ];
    for (name, help, kind, read) in counts {
        let mut family = encoder.encode_descriptor(name, help, None, kind)?;
        for (provider, method, s) in &series {
            let provider = rudder_common::redact::url(provider);
            let labels = [("provider", &*provider), ("method", &**method)];
            let value = read(&s.status, now);
            let mut metric = family.encode_family(&labels)?;
            match kind {
                MetricType::Counter => metric.encode_counter::<NoLabelSet, _, u64>(
                    &u64::try_from(value).unwrap_or(0),
                    None,
                )?,
                _ => metric.encode_gauge(&value)?,
            }
        }
    }
    let help = "Call durations, from send to answer, per provider and method.";
    let mut family = encoder.encode_descriptor(
        "rudder_call_duration",
        help,
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for (provider, method, s) in &series {
        let provider = rudder_common::redact::url(provider);
        let labels = [("provider", &*provider), ("method", &**method)];
        let snapshot = s.histogram.snapshot();
        family
            .encode_family(&labels)?
            .encode_histogram::<NoLabelSet>(
                snapshot.sum_seconds,
                snapshot.count,
                &snapshot.buckets,
                None,
            )?;
    }
    Ok(())
}

/// Failed TLS connects by reason (process-wide: every consumer's).
fn encode_tls_failures(encoder: &mut DescriptorEncoder<'_>) -> fmt::Result {
    let help = "TLS connects to providers that failed, by reason (unknown-issuer, name-mismatch, \
                expired, client-cert-required, plaintext-peer, ...), for the whole process.";
    let mut family =
        encoder.encode_descriptor("rudder_tls_failures", help, None, MetricType::Counter)?;
    for (failure, count) in rudder_rpc::tls::failure_counts() {
        let labels = [("reason", failure.name())];
        family
            .encode_family(&labels)?
            .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
    }
    Ok(())
}

fn encode_picks(recorder: &Recorder, encoder: &mut DescriptorEncoder<'_>) -> fmt::Result {
    let help = "Providers picked (every attempt, retries included), by the load-balance strategy \
                the provider's URL names for the method.";
    let mut family = encoder.encode_descriptor("rudder_picks", help, None, MetricType::Counter)?;
    for (strategy, count) in recorder.picks() {
        let labels = [("strategy", &*strategy)];
        family
            .encode_family(&labels)?
            .encode_counter::<NoLabelSet, _, u64>(&count, None)?;
    }
    Ok(())
}
